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

// A policy that matches rules against paths matches where a path leads:
// with docs -> .github, a write to docs/workflows/ci.yml is a write to
// .github/workflows/ci.yml.
func ExampleSet_Resolve() {
	root, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	if err := os.MkdirAll(filepath.Join(root, ".github", "workflows"), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.Symlink(".github", filepath.Join(root, "docs")); err != nil {
		log.Fatal(err)
	}
	set, err := tools.New(root)
	if err != nil {
		log.Fatal(err)
	}
	real, err := set.Resolve("docs/workflows/ci.yml")
	fmt.Println(real, err)
	_, err = set.Resolve("../elsewhere")
	fmt.Println(err)
	// Output:
	// .github/workflows/ci.yml <nil>
	// outside the workspace: path "../elsewhere" climbs out of the workspace with ".."
}

// Precheck refuses, before anyone is asked, a call the tool would surely
// refuse; nil says only that it is worth asking.
func ExampleSet_Precheck() {
	root, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	set, err := tools.New(root)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(set.Precheck(tools.WriteFile, []byte(`{"path": "notes.md", "content": "hello"}`)))
	fmt.Println(set.Precheck(tools.WriteFile, []byte(`{"path": "notes.md", "content": "hello", "path": ".git/hooks/pre-commit"}`)))
	fmt.Println(set.Precheck(tools.WriteFile, []byte(`{"path": "sub/.harness/config.json", "content": "{}"}`)))
	// Output:
	// <nil>
	// write_file: invalid arguments: duplicate key "path" in the top-level object: an object names each key once
	// write_file: path "sub/.harness/config.json" is inside sub/.harness, which the runtime keeps and does not observe; write elsewhere
}
