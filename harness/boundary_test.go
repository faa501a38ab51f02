package harness_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread"
)

func TestObservedWrite(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	out := o.StartApproved("t")
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 1, o.Calls.Load())

	done := o.Completion("t")
	require.Equal(t, facts.EffectObserved, done.EffectState)
	require.True(t, done.Observation.Available)
	require.Len(t, done.Observation.Changed, 1)
	require.Equal(t, "cache.toml", done.Observation.Changed[0].Path)
	check, err := facts.Decode[facts.CheckRecorded](o.Last("t", facts.KindCheckRecorded))
	require.NoError(t, err)
	require.Equal(t, facts.VerdictPass, check.Verdict)

	started, err := facts.Decode[facts.ActionStarted](o.Last("t", facts.KindActionStarted))
	require.NoError(t, err)
	require.Equal(t, done.Observation.Before, started.ObservedBefore)

	// The bytes before and after are kept in the store, by digest.
	change := done.Observation.Changed[0]
	old, err := o.Store.GetBlob(ctx, change.Before)
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 60\n", string(old))
	now, err := o.Store.GetBlob(ctx, change.After)
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", string(now))

	// The model is shown what the runtime saw, not only what the tool said.
	msgs := o.Model.Last().Messages
	result := msgs[len(msgs)-1].Text
	require.Contains(t, result, "effect observed")
	require.Contains(t, result, "check file_equals cache.toml: pass")
}

func TestUnknownEffectParksOnReconcile(t *testing.T) {
	for _, tc := range []struct {
		decision facts.Decision
		calls    int64
		kinds    []facts.Kind // after effect.reconciled
	}{
		{facts.DecisionAccept, 1, []facts.Kind{facts.KindEffectReconciled, facts.KindModelTurn}},
		{facts.DecisionAbandon, 1, []facts.Kind{facts.KindEffectReconciled, facts.KindModelTurn}},
		{facts.DecisionRetry, 2, []facts.Kind{facts.KindEffectReconciled, facts.KindActionRequested, facts.KindActionStarted,
			facts.KindActionCompleted, facts.KindCheckRecorded, facts.KindModelTurn}},
	} {
		t.Run(string(tc.decision), func(t *testing.T) {
			o := harnesstest.NewObserved(t, harnesstest.WriteScript)
			o.Write = harnesstest.Idle
			out := o.StartApproved("t")
			require.Equal(t, harness.StatusParked, out.Status)
			require.Equal(t, fold.WaitReconcile, out.Waits[0].Kind)
			actionID := out.Waits[0].RequestID
			require.Equal(t, facts.EffectUnknown, o.Completion("t").EffectState)
			require.Equal(t, 1, o.Model.Calls(), "no model turn while the effect is open")

			// Parked: nothing runs.
			again, err := o.RT.Resume(ctx, o.Actor, "t")
			require.NoError(t, err)
			require.Zero(t, again.Steps)

			o.Write = harnesstest.Honest // a retry finds a worker that does the work
			_, err = o.Post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: actionID, Decision: tc.decision, By: "ana", Note: "checked by hand"}, "rec")
			require.NoError(t, err)
			before := len(o.Kinds("t"))
			out, err = o.RT.Resume(ctx, o.Actor, "t")
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status)
			require.Equal(t, tc.kinds, o.Kinds("t")[before-1:])
			require.Equal(t, tc.calls, o.Calls.Load())
			if tc.decision == facts.DecisionRetry {
				retried, err := facts.Decode[facts.ActionRequested](o.Last("t", facts.KindActionRequested))
				require.NoError(t, err)
				require.Equal(t, actionID+".2", retried.ActionID)
				require.NotEqual(t, executeKeyOf(actionID), retried.IdempotencyKey, "a retry has a new idempotency key")
				require.Equal(t, facts.EffectObserved, o.Completion("t").EffectState)
			}
			msgs := o.Model.Last().Messages
			require.Contains(t, msgs[len(msgs)-1].Text, map[facts.Decision]string{
				facts.DecisionAccept: "decided: accept", facts.DecisionAbandon: "decided: abandon", facts.DecisionRetry: "effect observed",
			}[tc.decision])
		})
	}
}

func executeKeyOf(actionID string) string { return "tool/execute/" + actionID }

func TestReconcileIsChecked(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	out := o.StartApproved("t")
	require.Equal(t, harness.StatusDone, out.Status)
	_, err := o.Post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionAccept, By: "ana"}, "r1")
	require.ErrorIs(t, err, fold.ErrRefused)
	require.ErrorContains(t, err, "not open")
	_, err = o.Post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "nope", Decision: facts.DecisionAccept, By: "ana"}, "r2")
	require.ErrorIs(t, err, fold.ErrRefused)
}

func TestCapabilityNotGrantedIsDeniedWithoutAsking(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript, func(c *harness.Config) { c.Grants = []action.Capability{action.Read} })
	out, err := o.RT.Start(ctx, o.Actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, "no confirmation asked")
	require.NotContains(t, o.Kinds("t"), facts.KindConfirmationRequested)
	require.Zero(t, o.Calls.Load(), "the adapter is not invoked")
	done := o.Completion("t")
	require.Equal(t, facts.StatusDenied, done.Report.Status)
	require.Contains(t, done.Report.Error, "not granted")
	require.Equal(t, facts.EffectNone, done.EffectState)
}

func TestInDoubtActionIsNeverRunAgain(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	out, err := o.RT.Start(ctx, o.Actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	o.Approve("t", out.Waits[0].RequestID, true)
	before := o.DiedMidAct("t", "ttl_sec")

	out, err = o.RT.Resume(ctx, o.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, fold.WaitReconcile, out.Waits[0].Kind)
	require.Zero(t, o.Calls.Load(), "the adapter is never invoked again by itself")
	rec, err := facts.Decode[facts.ActionInterrupted](o.Last("t", facts.KindActionInterrupted))
	require.NoError(t, err)
	require.Equal(t, before, rec.ObservedBefore)
	require.NotEqual(t, before, rec.ObservedNow, "it saw the half-written file")

	_, err = o.Post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionRetry, By: "ana"}, "rec")
	require.NoError(t, err)
	out, err = o.RT.Resume(ctx, o.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 1, o.Calls.Load())
	check, err := facts.Decode[facts.CheckRecorded](o.Last("t", facts.KindCheckRecorded))
	require.NoError(t, err)
	require.Equal(t, facts.VerdictPass, check.Verdict)
}

func TestRacingRuntimesInvokeTheAdapterOnce(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	out, err := o.RT.Start(ctx, o.Actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	o.Approve("t", out.Waits[0].RequestID, true)
	var wg sync.WaitGroup
	outs := make([]harness.Outcome, 8)
	errs := make([]error, 8)
	for i := range 8 {
		rt, err := harness.NewRuntime(o.Store, o.RT.Services, o.RT.Config)
		require.NoError(t, err)
		wg.Go(func() { outs[i], errs[i] = rt.Resume(ctx, o.Actor, "t") })
	}
	wg.Wait()
	for i := range 8 {
		require.NoError(t, errs[i])
		require.Equal(t, harness.StatusDone, outs[i].Status)
	}
	require.EqualValues(t, 1, o.Calls.Load(), "counted outside the log")
	require.Equal(t, 2, o.Model.Calls())
	causes := map[string]int{}
	for f, err := range o.Store.Read(ctx, "t", 1) {
		require.NoError(t, err)
		causes[f.Cause]++
	}
	require.Equal(t, 2, causes["tool/execute/1-c"], "action.completed and check.recorded share their cause")
	require.Equal(t, 1, causes["tool/start/1-c"])
	require.Equal(t, 1, causes["infer/turn/2"])
}

// TestPostDuringAnActIsKept: a fact posted while a tool runs moves the head;
// the act was claimed, so its completion is appended after the post.
func TestPostDuringAnActIsKept(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	done, release := o.ResumeIntoTheWrite("t")
	_, err := o.Post("t", facts.KindUserMessage, facts.UserMessage{Text: "also, hurry"}, "hurry")
	require.NoError(t, err)
	close(release)
	require.NoError(t, <-done)
	kinds := o.Kinds("t")
	require.Equal(t, []facts.Kind{facts.KindActionStarted, facts.KindUserMessage, facts.KindActionCompleted, facts.KindCheckRecorded, facts.KindModelTurn}, kinds[6:11])
	require.EqualValues(t, 1, o.Calls.Load())
}

// A runtime on a wrapped store (thread.Watch) and one on the store itself
// take the same lock: the second waits for the first's act to complete
// instead of taking it for one whose process died.
func TestWrappedStoreSharesTheLock(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	first, release := o.ResumeIntoTheWrite("t")
	watched, err := harness.NewRuntime(thread.Watch(o.Store, func(facts.Fact, error) {}), o.RT.Services, o.RT.Config)
	require.NoError(t, err)
	second := make(chan error)
	go func() { _, err := watched.Resume(ctx, o.Actor, "t"); second <- err }()
	select {
	case err := <-second:
		t.Fatalf("the second resume ran while the first held the thread: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-first)
	require.NoError(t, <-second)
	require.NotContains(t, o.Kinds("t"), facts.KindActionInterrupted)
	require.EqualValues(t, 1, o.Calls.Load())
}

// A model's tool-call ids that a key cannot hold, or that collide once made
// safe, get ids of their own; the thread goes on.
func TestUnsafeToolCallIDs(t *testing.T) {
	o := harnesstest.NewObserved(t, `{"tool_calls": [{"id": "x.1", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"a\"}"}, {"id": "x_1", "name": "write_file", "args": "{\"path\":\"b.txt\",\"content\":\"b\"}"}, {"id": "c\n1", "name": "write_file", "args": "{\"path\":\"c.txt\",\"content\":\"c\"}"}]}
{"text": "done"}`, func(c *harness.Config) { c.Grants = []action.Capability{action.Read, action.Write} })
	out, err := o.RT.Start(ctx, o.Actor, "t", "three files")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	var ids []string
	for _, w := range out.Waits {
		ids = append(ids, w.RequestID)
	}
	require.Equal(t, []string{"1-x_1", "1-call-2", "1-c_1"}, ids)
	for _, id := range ids {
		o.Approve("t", id, true)
	}
	out, err = o.RT.Resume(ctx, o.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.NoError(t, audit.VerifyLog(ctx, o.Store, o.Actor, "t"))
}
