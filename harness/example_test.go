package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// A coding harness in a page: a store, a model, tools, an actor, and a
// runtime. The thread parks for a confirmation; an answer fact lets it go
// on; nothing runs while it waits.
func Example() {
	dir, _ := os.MkdirTemp("", "harness-example")
	defer os.RemoveAll(dir)
	store, err := thread.OpenPebble(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()

	script, _ := model.ParseScript("example", []byte(`
{"text": "I'll set the TTL.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"text": "Done."}`))
	tools, _ := harness.NewToolbox(harness.Tool{
		Spec:  facts.ToolSchema{Name: "write_file", Description: "Write a file."},
		Needs: action.Write, // writes ask for confirmation by default
		Run: func(ctx context.Context, args json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "wrote cache.toml"}, nil
		},
	})
	cfg, _ := harness.NewConfig(harness.WithModelName("scripted"))
	actor, _ := harness.CodingActor(cfg, tools)
	rt, _ := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, cfg)

	ctx := context.Background()
	out, _ := rt.Start(ctx, actor, "cache-ttl", "Set the cache TTL to 300")
	fmt.Println(out.Status, out.Waits[0].Kind, out.Waits[0].RequestID)

	answer, _ := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{
		RequestID: out.Waits[0].RequestID, Approved: true, By: "ana",
	})
	if _, err := rt.Post(ctx, actor, "cache-ttl", answer, "approve-1"); err != nil {
		panic(err)
	}
	out, _ = rt.Resume(ctx, actor, "cache-ttl")
	fmt.Println(out.Status, out.Steps)

	for f, err := range store.Read(ctx, "cache-ttl", 1) {
		if err != nil {
			panic(err)
		}
		fmt.Println(f.Seq, f.Kind, f.Cause)
	}
	// Output:
	// parked confirmation 1-call_1
	// done 2
	// 1 user.message ingress/start
	// 2 system.configured system/configure
	// 3 model.turn infer/turn/1
	// 4 action.requested tool/request/1-call_1
	// 5 confirmation.requested confirm/1-call_1
	// 6 confirmation.answered ingress/approve-1
	// 7 action.started tool/start/1-call_1
	// 8 action.completed tool/execute/1-call_1
	// 9 model.turn infer/turn/2
}
