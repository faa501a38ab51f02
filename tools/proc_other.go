//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

// shell is the argv that runs a command line.
func shell(command string) []string { return []string{"cmd", "/C", command} }

// newProcessGroup does nothing here: without Unix process groups only the
// command itself is killed, and its children may outlive it.
func newProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the process.
func killProcessGroup(p *os.Process) { _ = p.Kill() }
