package drive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// A check of your own, registered once: the target file exists and is
// not empty. It decides from the file, not from what the tool said.
func init() {
	action.RegisterCheck("nonempty", func(_ context.Context, spec facts.CheckSpec, env action.CheckEnv) (bool, string, error) {
		fi, err := os.Stat(filepath.Join(env.Root, spec.Target))
		return err == nil && fi.Size() > 0, spec.Target + " checked", nil
	})
}

// Compose your own harness: a tool, a policy and a check of your own
// (the README's "Compose your own harness", line for line).
func Example_compose() {
	dir, _ := os.MkdirTemp("", "harness-compose")
	defer os.RemoveAll(dir)
	store, _ := thread.OpenPebble(filepath.Join(dir, ".harness"))
	defer store.Close()
	m, _ := model.ParseScript("m", []byte(`{"tool_calls": [{"id": "1", "name": "note", "args": "{\"line\":\"ttl is 300\"}"}]}
{"text": "Noted."}`))
	ctx := context.Background()

	note := harness.Tool{ // a tool of your own, with its declared check
		Spec:  facts.ToolSchema{Name: "note", Description: "Add a line to NOTES.md."},
		Needs: action.Write,
		Run: func(ctx context.Context, args json.RawMessage) (facts.Report, error) {
			var a struct{ Line string }
			json.Unmarshal(args, &a)
			err := os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte(a.Line+"\n"), 0o644)
			return facts.Report{Status: facts.StatusSucceeded}, err
		},
		Declare: func(json.RawMessage) (*facts.CheckSpec, error) {
			return &facts.CheckSpec{Name: "nonempty", Target: "NOTES.md"}, nil
		},
	}
	tools, _ := harness.NewToolbox(note)
	actor, _ := harness.CodingActor(harness.Config{}, tools)
	rt, _ := harness.NewRuntime(store, harness.Services{Model: m, Tools: tools, Workspace: dir}, harness.Config{})
	notesOnly := drive.PolicyFunc("policy:notes", func(tool string, _ action.Capability, _ string) drive.Decision {
		return drive.Decision{Approved: tool == "note", Ask: tool != "note", Rule: "notes may be written"}
	})

	th := rt.Thread(actor, "t1")
	th.Start(ctx, "Note the TTL") // parks: note asks for confirmation
	st, err := drive.Drive(ctx, th, drive.Options{Policy: notesOnly})
	r, _ := th.Reading(ctx)
	fmt.Println(st.Status, err, r.Calls[0].Actions[0].Check.Verdict)
	// Output:
	// done <nil> pass
}
