//go:build linux

package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// DirIdentity names the directory at path itself, not its path: its
// device, inode and birth time. A directory removed and made again at the
// same path (a repository deleted and another cloned there) has another
// identity even when the file system hands out the same inode again
// (unless it is made again within one tick of the file system's coarse
// clock, a few milliseconds); "" when the directory cannot be read.
func DirIdentity(path string) string {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_STATX_SYNC_AS_STAT, unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return ""
	}
	dev := uint64(st.Dev_major)<<32 | uint64(st.Dev_minor)
	if st.Mask&unix.STATX_BTIME == 0 {
		// A file system without birth times: device and inode alone.
		return fmt.Sprintf("%x:%x", dev, st.Ino)
	}
	return fmt.Sprintf("%x:%x:%x.%x", dev, st.Ino, st.Btime.Sec, st.Btime.Nsec)
}
