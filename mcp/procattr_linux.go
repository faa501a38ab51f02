package mcp

import "syscall"

// groupDyingWithUs puts an unsandboxed server in a process group of its
// own, killed when the harness's thread that started it dies.
func groupDyingWithUs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
