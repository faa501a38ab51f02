//go:build unix

package action

import (
	"errors"
	"os"
	"syscall"
)

// lockFile locks f exclusively (flock), waiting for it; the function it
// returns unlocks.
func lockFile(f *os.File) (func(), error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return nil, err
		}
	}
}

// alive reports whether the process pid (of this machine) is running.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
