package rerun_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rerun"
)

// countedHooks runs no process: it counts the runs and lets each call be.
type countedHooks struct{ runs atomic.Int64 }

func (c *countedHooks) RunHook(context.Context, facts.Hook, []byte) (action.HookExit, error) {
	c.runs.Add(1)
	return action.HookExit{Stdout: "{}"}, nil
}

// withHooks records a before_tool and an after_tool hook on every tool.
func withHooks(c *harness.Config) {
	c.Hooks = []facts.Hook{
		{Name: "before", Event: facts.HookBeforeTool, Scope: "user", Digest: "d1"},
		{Name: "after", Event: facts.HookAfterTool, Scope: "user", Digest: "d2"},
	}
}

// hookCalls are the calls (or actions) thread id's hook.ran facts name.
func hookCalls(t *testing.T, e *harnesstest.Stock, id string) []string {
	t.Helper()
	var out []string
	for _, f := range logOf(t, e, id) {
		if f.Kind == facts.KindHookRan {
			p, err := facts.Decode[facts.HookRan](f)
			require.NoError(t, err)
			out = append(out, p.Event+" "+p.Call)
		}
	}
	return out
}

// Hooks in force do not run for a served call: nothing runs. A live
// rerun's calls after the divergence run them as any call does.
func TestHooksSkippedForServedCalls(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)

	// Not live: the two served turns, then the stop; no hook ran.
	rt, actor, _, ran := rerunOn(t, e, scriptB, withHooks)
	hooks := &countedHooks{}
	rt.Services.Hooks = hooks
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Served)
	require.Zero(t, hooks.runs.Load())
	require.Empty(t, hookCalls(t, e, rep.Rerun))
	require.Zero(t, ran.Load())

	// Live: served turns 1 and 2 run no hook; turn 3's call runs both.
	scratch := t.TempDir()
	p := e.Stock.Place
	p.Root = scratch
	lrt, lactor, _, lran := rerunIn(t, p, e.Store, scriptLive, withHooks)
	live := &countedHooks{}
	lrt.Services.Hooks = live
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	rep, err = rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Live: true, Source: e.Root,
		Skip: []string{e.Stock.Place.Store}, Runtime: lrt, Actor: lactor, Approval: &all})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, rep.Outcome)
	require.Equal(t, 2, rep.Served)
	require.Equal(t, int64(1), lran.Load(), "turn 3's call ran")
	calls := hookCalls(t, e, rep.Rerun)
	require.Len(t, calls, 2, "%q", calls)
	require.Equal(t, "before_tool 3-x3", calls[0])
	require.Equal(t, "after_tool 3-x3", calls[1])
	require.Equal(t, int64(2), live.runs.Load())
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))
}
