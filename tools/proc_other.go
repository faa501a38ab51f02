//go:build !unix

package tools

import (
	"fmt"
	"os/exec"
)

// shell is the argv that runs a command line.
func shell(command string) []string { return []string{"cmd", "/C", command} }

// processGroup stands for a command's process group. Without Unix process
// groups it is the command alone: only the command itself is killed, its
// children may outlive it, and nothing kills it with a harness that is
// killed.
type processGroup struct{ cmd *exec.Cmd }

// startCommand starts cmd. On success the caller must call release, once
// cmd has exited.
func startCommand(cmd *exec.Cmd) (*processGroup, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Args[0], err)
	}
	return &processGroup{cmd: cmd}, nil
}

// kill kills the command.
func (g *processGroup) kill() { _ = g.cmd.Process.Kill() }

// terminate kills the command: there is no SIGTERM here.
func (g *processGroup) terminate() { _ = g.cmd.Process.Kill() }

// release does nothing here.
func (g *processGroup) release() {}
