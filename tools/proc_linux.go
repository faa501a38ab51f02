package tools

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// startCommand starts cmd, whose SysProcAttr newProcessGroup has set, with
// a parent-death signal: if the harness dies — even by SIGKILL, which
// leaves it no chance to kill the group itself — the kernel sends the
// shell SIGKILL, so a command does not outlive a killed harness.
//
// Only the shell is covered. The signal is not inherited across fork, so
// what the shell started (a pipeline's other processes, a command in the
// background, anything that left the process group with setsid) is not
// killed by it; such a process mostly ends when it next writes to stdout
// or stderr, whose pipes' read ends died with the harness (SIGPIPE), but
// one that does not write keeps running. (A shell running one simple
// command usually execs it, and then the command is the shell.)
//
// The signal is sent when the thread that started the child ends, not the
// process, and the Go runtime ends a thread when a goroutine locked to it
// exits. So the start is made on a thread locked to a goroutine that stays
// until release is called, after the shell has exited; no other goroutine
// can run on that thread, or end it, meanwhile.
func startCommand(cmd *exec.Cmd) (release func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
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
