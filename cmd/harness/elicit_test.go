package main

import (
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdRetry runs a command until it succeeds, for at most 30 s: retry
// command [args...]. Its last stdout and stderr are kept.
func cmdRetry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: retry command [args...]")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ts.Exec(args[0], args[1:]...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not succeed within 30s: %v", args[0], err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
