package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// A parent that delegates: its model calls the delegate tool, the child
// thread is an actor composed like any other — here a reviewer with a
// system prompt of its own and only the read tool — and the parent waits
// on it as on a person. The parent's Resume drives the child; the child's
// outcome arrives in the parent as child.reported, exactly once.
func ExampleDelegate() {
	dir, _ := os.MkdirTemp("", "harness-delegate")
	defer os.RemoveAll(dir)
	store, err := thread.OpenPebble(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()

	// Lines with "thread" are the child's: "1-r" is the child that the
	// call r of turn 1 spawns.
	script, _ := model.ParseScript("example", []byte(`
{"text": "Asking a reviewer.", "tool_calls": [{"id": "r", "name": "delegate", "args": "{\"task\":\"Review cache.toml\",\"tools\":[\"read_file\"],\"max_turns\":3}"}]}
{"text": "The reviewer found nothing wrong."}
{"thread": "1-r", "tool_calls": [{"id": "c", "name": "read_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"thread": "1-r", "text": "cache.toml looks right."}`))
	read := func(ctx context.Context, args json.RawMessage) (facts.Report, error) {
		return facts.Report{Status: facts.StatusSucceeded, Stdout: "ttl_seconds = 60"}, nil
	}
	tools, _ := harness.NewToolbox(
		harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read, Run: read},
		harness.Tool{Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write, Run: read},
	)
	cfg, _ := harness.NewConfig(harness.WithModelName("scripted"), harness.WithBudget(20, 0))
	parent, _ := harness.Compose(cfg,
		harness.System(), harness.Tools(tools), harness.Budget(), harness.Compact(), harness.Infer(harness.Scheduler()),
		harness.Delegate(func(c harness.Child) (harness.Actor, error) {
			// The child's configuration and tools are the parent's,
			// narrowed by the delegation; compose with them.
			c.Config.SystemPrompt = "You review code. You change nothing."
			return harness.Compose(c.Config, harness.System(), harness.Tools(c.Tools), harness.Budget(), harness.Infer(harness.Scheduler()))
		}))
	rt, _ := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, cfg)

	ctx := context.Background()
	out, err := rt.Start(ctx, parent, "main", "Review the cache settings")
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status)
	for _, id := range []string{"main", "main.1-r"} {
		for f, err := range store.Read(ctx, id, 1) {
			if err != nil {
				panic(err)
			}
			cause := f.Cause
			if f.Kind == facts.KindChildReported {
				// The key ends with the child's final hash.
				rep, _ := facts.Decode[facts.ChildReported](f)
				cause = strings.TrimSuffix(cause, rep.Hash[:16]) + "… " + string(rep.Status) + ": " + rep.Result
			}
			fmt.Println(id, f.Seq, f.Kind, cause)
		}
	}
	// Output:
	// done
	// main 1 user.message ingress/start
	// main 2 system.configured system/configure
	// main 3 model.turn infer/turn/1
	// main 4 child.spawned delegate/spawn/1-r
	// main 5 child.reported ingress/child-main.1-r-9-… done: cache.toml looks right.
	// main 6 model.turn infer/turn/2
	// main.1-r 1 thread.spawned ingress/spawn
	// main.1-r 2 user.message ingress/start
	// main.1-r 3 system.configured system/configure
	// main.1-r 4 model.turn infer/turn/1
	// main.1-r 5 action.requested tool/request/1-c
	// main.1-r 6 action.started tool/start/1-c
	// main.1-r 7 action.completed tool/execute/1-c
	// main.1-r 8 model.turn infer/turn/2
	// main.1-r 9 thread.ended ingress/end
}
