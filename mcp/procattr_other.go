//go:build !linux

package mcp

import "syscall"

// groupDyingWithUs puts an unsandboxed server in a process group of its
// own (no parent-death signal outside Linux: Close ends it).
func groupDyingWithUs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
