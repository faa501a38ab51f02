//go:build unix

package stock

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockTrustFile opens (making it, the owner's alone) the lock file at
// path, not through a symbolic link, and holds an exclusive lock on it
// until it is closed. The lock is flock's, the open file's: a process
// that dies lets it go.
func lockTrustFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
