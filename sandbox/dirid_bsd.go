//go:build darwin || freebsd

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// DirIdentity names the directory at path itself, not its path: its
// device, inode and birth time (see the Linux one); "" when the
// directory cannot be read.
func DirIdentity(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	b := st.Birthtimespec
	if b.Sec == 0 && b.Nsec == 0 {
		return fmt.Sprintf("%x:%x", uint64(st.Dev), uint64(st.Ino))
	}
	return fmt.Sprintf("%x:%x:%x.%x", uint64(st.Dev), uint64(st.Ino), b.Sec, b.Nsec)
}
