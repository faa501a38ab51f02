// Command harness-sandbox is the sandbox's helper (package
// sandbox/internal/helper) as a program of its own: the harness starts it,
// installed beside itself, as the first process of each command's new
// namespaces, instead of re-executing its own much larger binary. A
// person does not run it.
//
// Install it with the harness, into the same directory:
//
//	go install github.com/seed-7cc7a084/harness/cmd/harness github.com/seed-7cc7a084/harness/sandbox/cmd/harness-sandbox
package main

import (
	"fmt"
	"os"

	"github.com/seed-7cc7a084/harness/sandbox/internal/helper"
)

func main() {
	helper.RunIfAsked()
	fmt.Fprintln(os.Stderr, "harness-sandbox: the sandbox helper of harness, which starts it for each command; not for running by hand")
	os.Exit(helper.ExitProtocol)
}
