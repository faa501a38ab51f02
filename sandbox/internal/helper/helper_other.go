//go:build !linux

package helper

import (
	"fmt"
	"os"
)

// RunIfAsked ends a process started as the helper: there is no sandbox
// here. It returns at once in any other.
func RunIfAsked() {
	if _, ok := os.LookupEnv(Env); ok {
		fmt.Fprintln(os.Stderr, "sandbox helper: the sandbox needs Linux")
		os.Exit(ExitProtocol)
	}
}
