package harness_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// countingHooks answers every hook with answer and counts the runs; while
// hold is open, a run waits for it (or for its context).
type countingHooks struct {
	runs   atomic.Int64
	answer string
	hold   chan struct{}
}

func (c *countingHooks) RunHook(ctx context.Context, _ facts.Hook, _ []byte) (action.HookExit, error) {
	c.runs.Add(1)
	if c.hold != nil {
		select {
		case <-c.hold:
		case <-ctx.Done():
			return action.HookExit{}, ctx.Err()
		}
	}
	return action.HookExit{Stdout: c.answer, Took: time.Millisecond}, nil
}

// hookRuntime is a runtime on store whose threads record one before_tool
// hook, run by hooks, with a model that reads a file and then says done.
func hookRuntime(t *testing.T, store thread.Store, hooks harness.HookRunner) (*harness.Runtime, harness.Actor) {
	t.Helper()
	script, err := model.ParseScript("hooks", []byte(`{"text": "reading", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"text": "done"}
`))
	require.NoError(t, err)
	tb, err := harness.NewToolbox(harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded}, nil
		}})
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), func(c *harness.Config) {
		c.Hooks = []facts.Hook{
			{Name: "gate", Event: facts.HookBeforeTool, Scope: "project", Digest: "d1"}}
	})
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tb, Hooks: hooks}, cfg)
	require.NoError(t, err)
	return rt, actor
}

func hookRuns(t *testing.T, store thread.Store, id string) int {
	n := 0
	for f, err := range store.Read(context.Background(), id, 0) {
		require.NoError(t, err)
		if f.Kind == facts.KindHookRan {
			n++
		}
	}
	return n
}

// A hook whose run is recorded is not run again for the same call: not by
// a resume in another process, nor after the person's answer. A run cut
// short (the process stopped while the hook ran, before its fact) records
// nothing, and the hook runs again on resume: at least once, recorded
// once.
func TestHookRunsOnceForACall(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })

	asks := &countingHooks{answer: `{"decision": "ask", "reason": "look first"}`}
	rt, actor := hookRuntime(t, store, asks)
	out, err := rt.Start(ctx, actor, "t1", "Read a")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, int64(1), asks.runs.Load())

	// Another process resumes it: still parked, the hook not run again.
	again := &countingHooks{answer: `{"decision": "ask"}`}
	rt2, actor2 := hookRuntime(t, store, again)
	out, err = rt2.Resume(ctx, actor2, "t1")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Zero(t, again.runs.Load())
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: out.Waits[0].RequestID, Approved: true, By: "ana"})
	require.NoError(t, err)
	_, err = rt2.Post(ctx, actor2, "t1", d, "confirm")
	require.NoError(t, err)
	out, err = rt2.Resume(ctx, actor2, "t1")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Zero(t, again.runs.Load())
	require.Equal(t, 1, hookRuns(t, store, "t1"))

	// Stopped while the hook runs: nothing recorded; run again on resume.
	held := &countingHooks{hold: make(chan struct{})}
	rt3, actor3 := hookRuntime(t, store, held)
	stop, cancel := context.WithCancel(ctx)
	go func() {
		for held.runs.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = rt3.Start(stop, actor3, "t2", "Read a")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 0, hookRuns(t, store, "t2"))
	free := &countingHooks{}
	rt4, actor4 := hookRuntime(t, store, free)
	out, err = rt4.Resume(ctx, actor4, "t2")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	require.Equal(t, int64(1), free.runs.Load())
	require.Equal(t, 1, hookRuns(t, store, "t2"))
}
