//go:build unix

package thread

import (
	"os"

	"golang.org/x/sys/unix"
)

// freeBytes is the space left to an unprivileged writer on the file
// system holding dir; ok is false when it cannot be told.
func freeBytes(dir *os.File) (free uint64, ok bool) {
	if dir == nil {
		return 0, false
	}
	// The store keeps dir open until every call has ended, so its
	// descriptor stays its own for this call.
	var st unix.Statfs_t
	if unix.Fstatfs(int(dir.Fd()), &st) != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
