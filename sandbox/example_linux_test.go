package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// A Cmd runs one shell command line in the sandbox: it writes the
// workspace, not its parent, and does not see the store.
func ExampleCmd() {
	ws, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	if err := os.MkdirAll(filepath.Join(ws, ".harness", "db"), 0o755); err != nil {
		log.Fatal(err)
	}
	spec, err := sandbox.Default(ws, "")
	if err != nil {
		log.Fatal(err)
	}
	if err := spec.Check(); err != nil {
		log.Fatal(err) // says what this system lacks; only mode off runs without it
	}
	r, w, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	c := &sandbox.Cmd{Spec: spec, Line: `echo hello > hello.txt && cat hello.txt
if touch ../escaped 2>/dev/null; then echo escaped; else echo refused; fi
ls -A .harness 2>/dev/null | wc -l`, Stdout: w}
	err = c.Start(context.Background())
	w.Close()
	if err != nil {
		log.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	exit, err := c.Wait()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(out))
	fmt.Println(exit)
	// Output:
	// hello
	// refused
	// 0
	// exit status 0
}
