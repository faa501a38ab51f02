//go:build !linux && !darwin && !freebsd

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// DirIdentity names the directory at path itself, not its path: its
// device and inode where the system gives them; "" otherwise.
func DirIdentity(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%x:%x", uint64(st.Dev), uint64(st.Ino))
	}
	return ""
}
