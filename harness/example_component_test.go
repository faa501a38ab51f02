package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// touched folds the tools the thread's actions ran through.
type touched struct{ ran []string }

func (c *touched) Name() string { return "touched" }

func (c *touched) Step(f facts.Fact) error {
	if f.Kind != facts.KindActionRequested {
		return nil
	}
	r, err := facts.Decode[facts.ActionRequested](f)
	if err != nil {
		return err
	}
	c.ran = append(c.ran, r.Adapter)
	return nil
}

func (c *touched) Output() fold.Output[harness.Services] {
	return fold.Output[harness.Services]{View: append([]string(nil), c.ran...)}
}

// A fold component of one's own, composed with the stock parts, and its
// view read from the thread's fold with ViewAs.
func ExampleComponent() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "harness-component")
	defer os.RemoveAll(dir)
	store, err := thread.OpenPebble(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	script, _ := model.ParseScript("example", []byte(`
{"text": "Writing.", "tool_calls": [{"id": "c1", "name": "write_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"text": "Done."}`))
	tools, _ := harness.NewToolbox(harness.Tool{
		Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write, Ask: action.AskNever,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded}, nil
		},
	})
	cfg := harness.Config{}
	actor, _ := harness.Compose(cfg, harness.System(), harness.Tools(tools), harness.Infer(harness.Scheduler()),
		harness.Component(func() fold.Component[harness.Services] { return &touched{} }))
	rt, _ := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, cfg)
	th := rt.Thread(actor, "t1")
	out, err := th.Start(ctx, "Set the TTL")
	fmt.Println(out.Status, err)
	ran, err := harness.ViewAs[[]string](ctx, th, "touched")
	fmt.Println(ran, err)
	// Output:
	// done <nil>
	// [write_file] <nil>
}
