//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// ownerOf is the user who owns the file fi describes.
func ownerOf(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
