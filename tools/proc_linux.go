package tools

import (
	"os/exec"
	"syscall"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// startShell starts cmd, a command's shell, with a parent-death signal:
// if the harness dies, the kernel sends the shell SIGKILL. The process
// group's watcher (see startCommand) already kills the shell and all its
// group with the harness; the signal is a second line that does not
// depend on the watcher (which a command could kill), and it reaches the
// shell only — it is not inherited across fork.
//
// The signal is sent when the thread that started the child ends, not the
// process, and the Go runtime ends a thread when a goroutine locked to it
// exits. So the start is made on a thread locked to a goroutine that stays
// until unlock is called, after the shell has exited (sandbox.StartLocked);
// no other goroutine can run on that thread, or end it, meanwhile. unlock is never nil and
// must be called, whether or not the start failed.
func startShell(cmd *exec.Cmd) (unlock func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return sandbox.StartLocked(cmd)
}
