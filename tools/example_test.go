package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// New returns the tools of one workspace. Each is an action adapter that
// also says what it needs: its schema for the model, its capability, its
// confirmation default and the check its call declares.
func ExampleNew() {
	root, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	if err := os.WriteFile(filepath.Join(root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	set, err := tools.New(root)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range set.Tools() {
		fmt.Printf("%-11s %-7s confirm=%v\n", t.Name(), t.Capability(), t.Confirm())
	}

	// An edit declares its check before it runs, and reports when it has.
	edit, _ := set.Lookup(tools.EditFile)
	args := json.RawMessage(`{"path": "cache.toml", "old": "ttl_seconds = 60", "new": "ttl_seconds = 300"}`)
	check, err := edit.Check(args)
	if err != nil {
		log.Fatal(err)
	}
	report, err := edit.Execute(context.Background(), action.Request{Payload: args, Check: check})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(report.Status, "—", report.Transcript)
	verdict := action.Decide(context.Background(), "a1", *check, action.CheckEnv{Root: root})
	fmt.Println(check.Name, check.Target, verdict.Verdict == facts.VerdictPass)

	// A path that leaves the workspace is a failed report, not an error.
	report, _ = edit.Execute(context.Background(), action.Request{Payload: json.RawMessage(`{"path": "../x", "old": "a", "new": "b"}`)})
	fmt.Println(report.Status, "—", report.Error)

	// Output:
	// read_file   read    confirm=false
	// list_files  read    confirm=false
	// write_file  write   confirm=true
	// edit_file   write   confirm=true
	// run_command execute confirm=true
	// succeeded — edited cache.toml at line 1: replaced 1 line with 1 line (17 → 18 bytes)
	// file_equals cache.toml true
	// failed — edit_file: outside the workspace: path "../x" climbs out of the workspace with ".."
}
