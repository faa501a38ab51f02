package natsstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// countingModel counts a script's turns by thread and turn, across every
// runtime that shares it.
type countingModel struct {
	inner model.Model
	mu    sync.Mutex
	turns map[string]int
}

func (c *countingModel) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	c.mu.Lock()
	c.turns[fmt.Sprintf("%s/%d", req.Thread, req.Turn)]++
	c.mu.Unlock()
	return c.inner.Turn(ctx, req)
}

// TestDelegationAcrossProcesses: eight runtimes, each on a store of its
// own over a connection of its own as eight processes would be, race to
// resume a parent whose first turn delegates two tasks. The threads'
// leases and the conditional appends decide: one child per delegation,
// one end and one report each, every model turn and tool run once, and
// the tree verifies; a child's confirmation is answered through the
// parent from yet another connection.
func TestDelegationAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	_, opts := freshNamed()
	opts = append(opts, natsstore.WithLeaseTTL(ttl))
	script, err := model.ParseScript("tree", []byte(`{"text": "Two at once.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read a\"}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"Write b\"}"}]}
{"text": "both done"}
{"thread": "1-d1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"thread": "1-d1", "text": "a holds 1"}
{"thread": "1-d2", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"b\"}"}]}
{"thread": "1-d2", "text": "wrote b"}`))
	require.NoError(t, err)
	m := &countingModel{inner: script, turns: map[string]int{}}
	var mu sync.Mutex
	runs := map[string]int{}
	run := func(name string) func(context.Context, json.RawMessage) (facts.Report, error) {
		return func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			mu.Lock()
			runs[name+" "+string(args)]++
			mu.Unlock()
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "ok"}, nil
		}
	}
	tools, err := harness.NewToolbox(
		harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read, Run: run("read_file")},
		harness.Tool{Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write, Run: run("write_file")},
	)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.DelegatingActor(cfg, tools)
	require.NoError(t, err)
	newRuntime := func() *harness.Runtime {
		rt, err := harness.NewRuntime(dial(t, shared, opts...), harness.Services{Model: m, Tools: tools}, cfg)
		require.NoError(t, err)
		return rt
	}
	first := newRuntime()
	start, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(harness.StartKey), facts.UserMessage{Text: "go"})
	require.NoError(t, err)
	_, err = first.Store.Append(ctx, "p", 0, start)
	require.NoError(t, err)

	race := func() {
		const n = 8
		var wg sync.WaitGroup
		outs, errs := make([]harness.Outcome, n), make([]error, n)
		ready := make(chan struct{})
		for i := range n {
			rt := newRuntime()
			wg.Go(func() {
				<-ready
				outs[i], errs[i] = rt.Resume(ctx, actor, "p")
			})
		}
		close(ready)
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i], "runtime %d", i)
		}
	}
	race()
	v, err := first.Thread(actor, "p").Tree(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, v.Status, "d1 reported; d2 waits for its write's confirmation")
	require.Len(t, v.Waits, 1)
	require.Equal(t, "p.1-d2", v.Waits[0].Thread)

	// Approved through the parent, from another connection; then another
	// race to finish.
	kid, err := newRuntime().Thread(actor, "p").Open(ctx, v.Waits[0].Thread)
	require.NoError(t, err)
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: v.Waits[0].RequestID, Approved: true, By: "ana"})
	require.NoError(t, err)
	_, err = kid.Post(ctx, d, "confirm-"+v.Waits[0].RequestID)
	require.NoError(t, err)
	race()

	out, err := first.Resume(ctx, actor, "p")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	count := func(id string, k facts.Kind) int {
		n := 0
		for _, f := range readAll(t, first.Store, id) {
			if f.Kind == k {
				n++
			}
		}
		return n
	}
	require.Equal(t, 2, count("p", facts.KindChildSpawned))
	require.Equal(t, 2, count("p", facts.KindChildReported))
	for _, id := range []string{"p.1-d1", "p.1-d2"} {
		require.Equal(t, 1, count(id, facts.KindThreadSpawned), id)
		require.Equal(t, 1, count(id, facts.KindThreadEnded), id)
	}
	heads, err := first.Store.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Len(t, heads, 3)
	for k, c := range m.turns {
		require.Equal(t, 1, c, "model turn %s", k)
	}
	require.Equal(t, map[string]int{`read_file {"path":"a"}`: 1, `write_file {"path":"b"}`: 1}, runs)
	require.NoError(t, audit.VerifyLog(ctx, first.Store, actor, "p"))
}
