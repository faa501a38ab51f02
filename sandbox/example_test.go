package sandbox_test

import (
	"fmt"
	"log"
	"os"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// Default is the spec of a workspace and its store; Record is what the log
// keeps of it, and Environ what a command's environment is.
func ExampleDefault() {
	ws, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	spec, err := sandbox.Default(ws, "")
	if err != nil {
		log.Fatal(err)
	}
	r := spec.Record()
	fmt.Println(r.Mode, "network:", r.Network, "hidden names:", r.HiddenNames)
	fmt.Println(spec.Environ([]string{"PATH=/usr/bin", "OPENAI_API_KEY=sk-secret", "LC_ALL=C"}, "/tmp/harness-cmd-1")[:3])
	// Output:
	// workspace-write network: false hidden names: [.harness]
	// [PATH=/usr/bin LC_ALL=C TMPDIR=/tmp/harness-cmd-1]
}
