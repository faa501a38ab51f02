//go:build unix

package tools

import (
	"os"
	"os/exec"
	"syscall"
)

// shell is the argv that runs a command line.
func shell(command string) []string { return []string{"/bin/sh", "-c", command} }

// newProcessGroup makes the command the leader of a new process group, so
// that it and everything it starts can be killed together.
func newProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills the process group p leads. It is called after p
// may have exited: a group with no members left is ESRCH, ignored. The
// group id cannot be reused while any member is alive.
func killProcessGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
