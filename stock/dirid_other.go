//go:build !linux && !darwin && !freebsd

package stock

import (
	"fmt"
	"os"
	"syscall"
)

// dirIdentity names the directory at path itself, not its path: its
// device and inode where the system gives them; "" otherwise.
func dirIdentity(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%x:%x", uint64(st.Dev), uint64(st.Ino))
	}
	return ""
}
