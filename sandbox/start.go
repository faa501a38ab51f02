package sandbox

import (
	"os/exec"
	"runtime"
	"sync"
)

// StartLocked starts cmd from an OS thread locked to a goroutine that
// stays until unlock is called. On Linux a child's parent-death signal
// (SysProcAttr.Pdeathsig) is sent when the thread that started it ends,
// not the process, and the Go runtime ends a thread when a goroutine
// locked to it exits: a child started from an ordinary goroutine may be
// killed at any moment. unlock is never nil and must be called once the
// child has exited, whether or not the start failed.
func StartLocked(cmd *exec.Cmd) (unlock func(), err error) {
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			<-done
		}
	}()
	return sync.OnceFunc(func() { close(done) }), <-started
}
