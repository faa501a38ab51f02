package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
)

// HelperName is the name of the sandbox's helper program
// (sandbox/cmd/harness-sandbox), looked for beside the running program's
// executable.
const HelperName = "harness-sandbox"

// Cmd is one shell command line run in a sandbox: sh -c Line in
// Spec.Workspace, with no stdin (unless Stdin is given) and the
// allow-listed environment. It runs
// the modes WorkspaceWrite and ReadOnly; mode Off is run by the caller
// (package tools runs it under its process-group watcher).
//
// A Cmd is used once: Start, then Wait, with Terminate and Kill at any
// time between.
type Cmd struct {
	// Spec is the sandbox.
	Spec Spec
	// Line is the shell command line.
	Line string
	// Env is the environment the allow-list is applied to; nil takes
	// os.Environ().
	Env []string
	// Stdout and Stderr are where the command writes; nil is /dev/null.
	// They are given to the command's processes as they are, so Wait does
	// not wait for them to close; since every process of the command dies
	// before Wait returns, their write ends are closed then (but for the
	// caller's own copies).
	Stdout, Stderr *os.File
	// Stdin, when set, is the command's standard input (a pipe, for a
	// long-running server spoken to over its stdin and stdout); nil is
	// /dev/null. It is given to the command as it is, like Stdout.
	Stdin *os.File
	// Resolver and Dial, when set, are the allow-list's proxy's (see
	// netproxy.Proxy; nil is the system's): for tests, which resolve
	// names through a table of their own.
	Resolver netproxy.Resolver
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error)

	proc *process // the platform's running helper
}

// Exit is how a command's shell ended: its exit code, or the signal that
// killed it (Code is then -1). A command killed by Kill, a timeout, or its
// helper's death ends by SIGKILL.
type Exit struct {
	Code   int
	Signal syscall.Signal
}

// String says it as os.ProcessState does: "exit status 3", "signal:
// killed".
func (e Exit) String() string {
	if e.Signal != 0 {
		return "signal: " + e.Signal.String()
	}
	return fmt.Sprintf("exit status %d", e.Code)
}
