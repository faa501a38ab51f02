// Command harness runs coding agents as event-sourced threads in a
// workspace, and shows what they did.
//
// A thread is an append-only log of facts kept in the workspace's store
// (.harness/ at the workspace root, found from the current directory as git
// finds .git). `harness run` starts one and prints each fact as it is
// appended; a tool call that asks for confirmation parks the thread (exit 3)
// until a person answers — at the prompt on a terminal, or later with
// `harness approve`, `deny`, `answer` or `post`. `harness replay --verify`
// tells a thread's record back and checks it.
//
// Exit codes: 0 done, 1 error (or a thread that failed), 2 usage (a bad
// flag, argument or payload; nothing was changed), 3 parked (the thread
// waits for a person), 130 interrupted (143 on SIGTERM). With -o json,
// stdout is one JSON document whatever happens: on a failure
// {"error": {"kind", "message"}, "exit"}.
//
// The command is thin: what it does is in package harness.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
