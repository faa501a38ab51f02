package stock

import (
	"strings"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// sameDir reports whether two directory identities (see dirIdentity:
// "dev:ino", or "dev:ino:btime" where the file system keeps birth times)
// name the same directory. With birth times on both, the inode and the
// birth time decide and the device is left out: a device's number can
// change from one boot to the next (a btrfs subvolume, an NFS mount, an
// LVM volume are numbered as they are mounted), while a directory made
// again — even with the inode handed out again — has another birth time.
// Without them, the device and the inode decide. "" names no directory.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	as, bs := strings.Split(a, ":"), strings.Split(b, ":")
	if len(as) == 3 && len(bs) == 3 {
		return as[1] == bs[1] && as[2] == bs[2]
	}
	return len(as) >= 2 && len(bs) >= 2 && as[0] == bs[0] && as[1] == bs[1] && len(as) == len(bs)
}

// dirIdentity names the directory at path itself (sandbox.DirIdentity).
func dirIdentity(path string) string { return sandbox.DirIdentity(path) }
