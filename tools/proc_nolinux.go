//go:build unix && !linux

package tools

import "os/exec"

// startShell starts cmd, a command's shell. There is no parent-death
// signal here; the process group's watcher (see startCommand) is what
// kills the command with a harness that is killed. unlock does nothing.
func startShell(cmd *exec.Cmd) (unlock func(), err error) {
	return func() {}, cmd.Start()
}
