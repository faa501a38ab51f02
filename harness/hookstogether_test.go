package harness_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// meetingHooks answers allow to a run only when want runs of its round
// were in at once (the runs of round r are the want after the first
// r·want); a run that waited a while and met fewer answers deny.
type meetingHooks struct {
	want    int64
	entered atomic.Int64
}

func (m *meetingHooks) RunHook(ctx context.Context, _ facts.Hook, _ []byte) (action.HookExit, error) {
	n := m.entered.Add(1)
	end := ((n-1)/m.want + 1) * m.want
	for deadline := time.Now().Add(5 * time.Second); m.entered.Load() < end; {
		if time.Now().After(deadline) {
			return action.HookExit{Stdout: `{"decision": "deny", "reason": "ran alone"}`}, nil
		}
		select {
		case <-ctx.Done():
			return action.HookExit{}, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return action.HookExit{Stdout: `{}`}, nil
}

// threeReads is a runtime on store whose threads record two before_tool
// hooks, run by hooks, with a model that reads three files in one turn
// and then says done.
func threeReads(t *testing.T, store thread.Store, hooks harness.HookRunner, opts ...harness.Option) (*harness.Runtime, harness.Actor) {
	t.Helper()
	script, err := model.ParseScript("hooks", []byte(`{"text": "reading", "tool_calls": [{"id": "a", "name": "read_file", "args": "{\"path\":\"a\"}"}, {"id": "b", "name": "read_file", "args": "{\"path\":\"b\"}"}, {"id": "c", "name": "read_file", "args": "{\"path\":\"c\"}"}]}
{"text": "done"}
`))
	require.NoError(t, err)
	tb, err := harness.NewToolbox(harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded}, nil
		}})
	require.NoError(t, err)
	cfg, err := harness.NewConfig(append([]harness.Option{harness.WithModelBackoff(0), func(c *harness.Config) {
		c.Hooks = []facts.Hook{
			{Name: "gate", Event: facts.HookBeforeTool, Scope: "project", Digest: "d1"},
			{Name: "lint", Event: facts.HookBeforeTool, Scope: "project", Digest: "d2"}}
	}}, opts...)...)
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tb, Hooks: hooks}, cfg)
	require.NoError(t, err)
	return rt, actor
}

// hookCauses are the causes of a thread's hook.ran facts, in order, and
// whether each run allowed its call.
func hookCauses(t *testing.T, store thread.Store, id string) (causes []string, allowed int) {
	for f, err := range store.Read(context.Background(), id, 0) {
		require.NoError(t, err)
		if f.Kind == facts.KindHookRan {
			p, err := facts.Decode[facts.HookRan](f)
			require.NoError(t, err)
			causes = append(causes, f.Cause)
			if p.Decision == facts.HookAllow {
				allowed++
			}
		}
	}
	return causes, allowed
}

// The before_tool hooks of a turn's calls run side by side: each hook of
// the three calls meets the other two (run one at a time, each would wait
// alone and deny), a round's three records are appended together under
// one key, and the log verifies. A log written by the rule before (one
// hook at a time, each its own key) still runs and verifies.
func TestHooksOfATurnRunTogether(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })

	rt, actor := threeReads(t, store, &meetingHooks{want: 3})
	out, err := rt.Start(ctx, actor, "together", "Read them")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	causes, allowed := hookCauses(t, store, "together")
	require.Equal(t, []string{
		"hook/before_tool/1-a/0+2", "hook/before_tool/1-a/0+2", "hook/before_tool/1-a/0+2",
		"hook/before_tool/1-a/1+2", "hook/before_tool/1-a/1+2", "hook/before_tool/1-a/1+2"}, causes)
	require.Equal(t, 6, allowed, "every hook met the other calls' hooks")
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "together"))

	old := &countingHooks{answer: `{}`}
	rt, actor = threeReads(t, store, old, harness.HooksOneAtATime())
	out, err = rt.Start(ctx, actor, "one-at-a-time", "Read them")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	causes, allowed = hookCauses(t, store, "one-at-a-time")
	require.Equal(t, []string{
		"hook/before_tool/1-a/0", "hook/before_tool/1-a/1", "hook/before_tool/1-b/0",
		"hook/before_tool/1-b/1", "hook/before_tool/1-c/0", "hook/before_tool/1-c/1"}, causes)
	require.Equal(t, 6, allowed)
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "one-at-a-time"))
	// Each log verifies by its own rule, whatever the runtime reading it
	// would write now.
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "together"))
}

// A run of a turn's hooks cut short (the process stopped while they ran)
// records none of them; on resume they all run again, recorded once.
func TestHooksRunTogetherCutShort(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })

	held := &countingHooks{hold: make(chan struct{})}
	rt, actor := threeReads(t, store, held)
	stop, cancel := context.WithCancel(ctx)
	go func() {
		// All three at once (one at a time, the first would hold the
		// others back: cancelled after a while all the same).
		for deadline := time.Now().Add(5 * time.Second); held.runs.Load() < 3 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = rt.Start(stop, actor, "t", "Read them")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, int64(3), held.runs.Load(), "the three calls' hooks ran at once")
	causes, _ := hookCauses(t, store, "t")
	require.Empty(t, causes)

	free := &countingHooks{answer: `{}`}
	rt, actor = threeReads(t, store, free)
	out, err := rt.Resume(ctx, actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	require.Equal(t, int64(6), free.runs.Load())
	causes, allowed := hookCauses(t, store, "t")
	require.Len(t, causes, 6)
	require.Equal(t, 6, allowed)
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "t"))
}
