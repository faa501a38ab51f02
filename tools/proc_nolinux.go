//go:build !linux

package tools

import "os/exec"

// startCommand starts cmd. Here there is no parent-death signal: a
// command can outlive a harness that is killed without the chance to kill
// the command's process group (SIGKILL).
func startCommand(cmd *exec.Cmd) (release func(), err error) {
	return func() {}, cmd.Start()
}
