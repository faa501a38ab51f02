package drive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// A policy written in Go: it approves writes under docs/ and leaves
// everything else to a person. Drive records its answers by its name.
func ExamplePolicyFunc() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "harness-policy")
	defer os.RemoveAll(dir)
	store, err := thread.OpenPebble(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	script, _ := model.ParseScript("example", []byte(`
{"text": "Noting it.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"docs/ttl.md\"}"}]}
{"text": "Done."}`))
	tools, _ := harness.NewToolbox(harness.Tool{
		Spec:  facts.ToolSchema{Name: "write_file"},
		Needs: action.Write,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded}, nil
		},
	})
	actor, _ := harness.CodingActor(harness.Config{}, tools)
	rt, _ := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, harness.Config{})
	th := rt.Thread(actor, "t1")
	if _, err := th.Start(ctx, "Document the TTL"); err != nil {
		panic(err)
	}

	docs := drive.PolicyFunc("policy:docs", func(tool string, c action.Capability, args string) drive.Decision {
		under := drive.Pattern{Tool: "*", Glob: "docs/*"}
		if p, ok := drive.Subject(args); ok && c == action.Write && under.Match(tool, args) {
			return drive.Decision{Approved: true, Rule: "docs may change: " + p}
		}
		return drive.Decision{Ask: true}
	})
	st, err := drive.Drive(ctx, th, drive.Options{Policy: docs})
	fmt.Println(st.Status, err)
	for f := range store.Read(ctx, "t1", 1) {
		if a, err := facts.Decode[facts.ConfirmationAnswered](f); err == nil && f.Kind == facts.KindConfirmationAnswered {
			fmt.Println(a.RequestID, a.Approved, a.By, a.Reason)
		}
	}
	// Output:
	// done <nil>
	// 1-call_1 true policy:docs docs may change: docs/ttl.md
}
