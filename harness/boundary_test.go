package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// observedEnv is a runtime whose actions are observed in a real workspace
// holding cache.toml, with one tool, write_file, whose behaviour a test
// chooses.
type observedEnv struct {
	*env
	root  string
	calls atomic.Int64
	write func(root string, args json.RawMessage) (facts.Report, error)
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// honest writes what it was asked to.
func honest(root string, raw json.RawMessage) (facts.Report, error) {
	var a writeArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return facts.Report{}, err
	}
	if err := os.WriteFile(filepath.Join(root, a.Path), []byte(a.Content), 0o644); err != nil {
		return facts.Report{}, err
	}
	return facts.Report{Status: facts.StatusSucceeded, Transcript: "wrote " + a.Path}, nil
}

// idle says it wrote and did nothing.
func idle(string, json.RawMessage) (facts.Report, error) {
	return facts.Report{Status: facts.StatusSucceeded, Transcript: "wrote cache.toml"}, nil
}

const writeScript = `{"text": "Setting the TTL.", "tool_calls": [{"id": "c", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Done."}
{"text": "Done, again."}`

func newObservedEnv(t *testing.T, script string, opts ...harness.Option) *observedEnv {
	t.Helper()
	o := &observedEnv{env: newEnv(t, script, opts...), root: t.TempDir(), write: honest}
	require.NoError(t, os.WriteFile(filepath.Join(o.root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	tool := harness.Tool{
		Spec:  facts.ToolSchema{Name: "write_file"},
		Needs: action.Write,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			o.calls.Add(1)
			return o.write(o.root, args)
		},
		Declare: func(raw json.RawMessage) (*facts.CheckSpec, error) {
			var a writeArgs
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			c := action.FileEquals(a.Path, []byte(a.Content))
			return &c, nil
		},
	}
	tb, err := harness.NewToolbox(tool)
	require.NoError(t, err)
	ws, err := action.NewWorkspace(o.root, action.WithBlobs(o.store, 0))
	require.NoError(t, err)
	o.actor, err = harness.CodingActor(o.rt.Config, tb)
	require.NoError(t, err)
	o.rt, err = harness.NewRuntime(o.store, harness.Services{Model: o.model, Tools: tb, Observer: ws, Workspace: o.root, Blobs: o.store}, o.rt.Config)
	require.NoError(t, err)
	return o
}

// startApproved starts a thread and approves its one tool call.
func (o *observedEnv) startApproved(id string) harness.Outcome {
	out, err := o.rt.Start(ctx, o.actor, id, "Set the cache TTL to 300")
	require.NoError(o.t, err)
	require.Equal(o.t, harness.StatusParked, out.Status)
	o.approve(id, out.Waits[0].RequestID, true)
	out, err = o.rt.Resume(ctx, o.actor, id)
	require.NoError(o.t, err)
	return out
}

// resumeIntoTheWrite starts thread id, approves its write, and resumes it
// on another goroutine until the write is running; the write then waits
// until release is closed, and done has the Resume's error.
func (o *observedEnv) resumeIntoTheWrite(id string) (done <-chan error, release chan struct{}) {
	entered := make(chan struct{})
	release = make(chan struct{})
	o.write = func(root string, args json.RawMessage) (facts.Report, error) {
		close(entered)
		<-release
		return honest(root, args)
	}
	out, err := o.rt.Start(ctx, o.actor, id, "Set the cache TTL to 300")
	require.NoError(o.t, err)
	o.approve(id, out.Waits[0].RequestID, true)
	errs := make(chan error, 1)
	go func() { _, err := o.rt.Resume(ctx, o.actor, id); errs <- err }()
	<-entered
	return errs, release
}

// diedMidAct leaves thread id as a process that died mid-act would: its
// approved call 1-c has action.started, with the observation before, and the
// tool wrote content to cache.toml; nothing else. It returns the hash
// observed before.
func (o *observedEnv) diedMidAct(id, content string) string {
	head, err := o.store.Head(ctx, id)
	require.NoError(o.t, err)
	ws, err := action.NewWorkspace(o.root)
	require.NoError(o.t, err)
	snap, err := ws.Observe(ctx)
	require.NoError(o.t, err)
	d, err := facts.NewDraft(facts.KindActionStarted, "tool/start/1-c", facts.ActionStarted{ActionID: "1-c", ObservedBefore: snap.Hash})
	require.NoError(o.t, err)
	_, err = o.store.Append(ctx, id, head.Seq, d)
	require.NoError(o.t, err)
	require.NoError(o.t, os.WriteFile(filepath.Join(o.root, "cache.toml"), []byte(content), 0o644))
	return snap.Hash
}

func (o *observedEnv) completion(id string) facts.ActionCompleted {
	c, err := facts.Decode[facts.ActionCompleted](o.last(id, facts.KindActionCompleted))
	require.NoError(o.t, err)
	return c
}

func TestObservedWrite(t *testing.T) {
	o := newObservedEnv(t, writeScript)
	out := o.startApproved("t")
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 1, o.calls.Load())

	done := o.completion("t")
	require.Equal(t, facts.EffectObserved, done.EffectState)
	require.True(t, done.Observation.Available)
	require.Len(t, done.Observation.Changed, 1)
	require.Equal(t, "cache.toml", done.Observation.Changed[0].Path)
	check, err := facts.Decode[facts.CheckRecorded](o.last("t", facts.KindCheckRecorded))
	require.NoError(t, err)
	require.Equal(t, facts.VerdictPass, check.Verdict)

	started, err := facts.Decode[facts.ActionStarted](o.last("t", facts.KindActionStarted))
	require.NoError(t, err)
	require.Equal(t, done.Observation.Before, started.ObservedBefore)

	// The bytes before and after are kept in the store, by digest.
	change := done.Observation.Changed[0]
	old, err := o.store.GetBlob(ctx, change.Before)
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 60\n", string(old))
	now, err := o.store.GetBlob(ctx, change.After)
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", string(now))

	// The model is shown what the runtime saw, not only what the tool said.
	msgs := o.model.last().Messages
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
			o := newObservedEnv(t, writeScript)
			o.write = idle
			out := o.startApproved("t")
			require.Equal(t, harness.StatusParked, out.Status)
			require.Equal(t, fold.WaitReconcile, out.Waits[0].Kind)
			actionID := out.Waits[0].RequestID
			require.Equal(t, facts.EffectUnknown, o.completion("t").EffectState)
			require.Equal(t, 1, o.model.calls(), "no model turn while the effect is open")

			// Parked: nothing runs.
			again, err := o.rt.Resume(ctx, o.actor, "t")
			require.NoError(t, err)
			require.Zero(t, again.Steps)

			o.write = honest // a retry finds a worker that does the work
			_, err = o.post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: actionID, Decision: tc.decision, By: "ana", Note: "checked by hand"}, "rec")
			require.NoError(t, err)
			before := len(o.kinds("t"))
			out, err = o.rt.Resume(ctx, o.actor, "t")
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status)
			require.Equal(t, tc.kinds, o.kinds("t")[before-1:])
			require.Equal(t, tc.calls, o.calls.Load())
			if tc.decision == facts.DecisionRetry {
				retried, err := facts.Decode[facts.ActionRequested](o.last("t", facts.KindActionRequested))
				require.NoError(t, err)
				require.Equal(t, actionID+".2", retried.ActionID)
				require.NotEqual(t, executeKeyOf(actionID), retried.IdempotencyKey, "a retry has a new idempotency key")
				require.Equal(t, facts.EffectObserved, o.completion("t").EffectState)
			}
			msgs := o.model.last().Messages
			require.Contains(t, msgs[len(msgs)-1].Text, map[facts.Decision]string{
				facts.DecisionAccept: "decided: accept", facts.DecisionAbandon: "decided: abandon", facts.DecisionRetry: "effect observed",
			}[tc.decision])
		})
	}
}

func executeKeyOf(actionID string) string { return "tool/execute/" + actionID }

func TestReconcileIsChecked(t *testing.T) {
	o := newObservedEnv(t, writeScript)
	out := o.startApproved("t")
	require.Equal(t, harness.StatusDone, out.Status)
	_, err := o.post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionAccept, By: "ana"}, "r1")
	require.ErrorIs(t, err, fold.ErrRefused)
	require.ErrorContains(t, err, "not open")
	_, err = o.post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "nope", Decision: facts.DecisionAccept, By: "ana"}, "r2")
	require.ErrorIs(t, err, fold.ErrRefused)
}

func TestCapabilityNotGrantedIsDeniedWithoutAsking(t *testing.T) {
	o := newObservedEnv(t, writeScript, harness.WithGrants(action.Read))
	out, err := o.rt.Start(ctx, o.actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, "no confirmation asked")
	require.NotContains(t, o.kinds("t"), facts.KindConfirmationRequested)
	require.Zero(t, o.calls.Load(), "the adapter is not invoked")
	done := o.completion("t")
	require.Equal(t, facts.StatusDenied, done.Report.Status)
	require.Contains(t, done.Report.Error, "not granted")
	require.Equal(t, facts.EffectNone, done.EffectState)
}

func TestInDoubtActionIsNeverRunAgain(t *testing.T) {
	o := newObservedEnv(t, writeScript)
	out, err := o.rt.Start(ctx, o.actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	o.approve("t", out.Waits[0].RequestID, true)
	before := o.diedMidAct("t", "ttl_sec")

	out, err = o.rt.Resume(ctx, o.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, fold.WaitReconcile, out.Waits[0].Kind)
	require.Zero(t, o.calls.Load(), "the adapter is never invoked again by itself")
	rec, err := facts.Decode[facts.ActionInterrupted](o.last("t", facts.KindActionInterrupted))
	require.NoError(t, err)
	require.Equal(t, before, rec.ObservedBefore)
	require.NotEqual(t, before, rec.ObservedNow, "it saw the half-written file")

	_, err = o.post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionRetry, By: "ana"}, "rec")
	require.NoError(t, err)
	out, err = o.rt.Resume(ctx, o.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 1, o.calls.Load())
	check, err := facts.Decode[facts.CheckRecorded](o.last("t", facts.KindCheckRecorded))
	require.NoError(t, err)
	require.Equal(t, facts.VerdictPass, check.Verdict)
}

func TestRacingRuntimesInvokeTheAdapterOnce(t *testing.T) {
	o := newObservedEnv(t, writeScript)
	out, err := o.rt.Start(ctx, o.actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	o.approve("t", out.Waits[0].RequestID, true)
	var wg sync.WaitGroup
	outs := make([]harness.Outcome, 8)
	errs := make([]error, 8)
	for i := range 8 {
		rt, err := harness.NewRuntime(o.store, o.rt.Services, o.rt.Config)
		require.NoError(t, err)
		wg.Go(func() { outs[i], errs[i] = rt.Resume(ctx, o.actor, "t") })
	}
	wg.Wait()
	for i := range 8 {
		require.NoError(t, errs[i])
		require.Equal(t, harness.StatusDone, outs[i].Status)
	}
	require.EqualValues(t, 1, o.calls.Load(), "counted outside the log")
	require.Equal(t, 2, o.model.calls())
	causes := map[string]int{}
	for f, err := range o.store.Read(ctx, "t", 1) {
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
	o := newObservedEnv(t, writeScript)
	done, release := o.resumeIntoTheWrite("t")
	_, err := o.post("t", facts.KindUserMessage, facts.UserMessage{Text: "also, hurry"}, "hurry")
	require.NoError(t, err)
	close(release)
	require.NoError(t, <-done)
	kinds := o.kinds("t")
	require.Equal(t, []facts.Kind{facts.KindActionStarted, facts.KindUserMessage, facts.KindActionCompleted, facts.KindCheckRecorded, facts.KindModelTurn}, kinds[6:11])
	require.EqualValues(t, 1, o.calls.Load())
}

// A runtime on a wrapped store (harness.Watch) and one on the store itself
// take the same lock: the second waits for the first's act to complete
// instead of taking it for one whose process died.
func TestWrappedStoreSharesTheLock(t *testing.T) {
	o := newObservedEnv(t, writeScript)
	first, release := o.resumeIntoTheWrite("t")
	watched, err := harness.NewRuntime(harness.Watch(o.store, func(facts.Fact, error) {}), o.rt.Services, o.rt.Config)
	require.NoError(t, err)
	second := make(chan error)
	go func() { _, err := watched.Resume(ctx, o.actor, "t"); second <- err }()
	select {
	case err := <-second:
		t.Fatalf("the second resume ran while the first held the thread: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-first)
	require.NoError(t, <-second)
	require.NotContains(t, o.kinds("t"), facts.KindActionInterrupted)
	require.EqualValues(t, 1, o.calls.Load())
}

// A model's tool-call ids that a key cannot hold, or that collide once made
// safe, get ids of their own; the thread goes on.
func TestUnsafeToolCallIDs(t *testing.T) {
	o := newObservedEnv(t, `{"tool_calls": [{"id": "x.1", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"a\"}"}, {"id": "x_1", "name": "write_file", "args": "{\"path\":\"b.txt\",\"content\":\"b\"}"}, {"id": "c\n1", "name": "write_file", "args": "{\"path\":\"c.txt\",\"content\":\"c\"}"}]}
{"text": "done"}`, harness.WithGrants(action.Read, action.Write))
	out, err := o.rt.Start(ctx, o.actor, "t", "three files")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	var ids []string
	for _, w := range out.Waits {
		ids = append(ids, w.RequestID)
	}
	require.Equal(t, []string{"1-x_1", "1-call-2", "1-c_1"}, ids)
	for _, id := range ids {
		o.approve("t", id, true)
	}
	out, err = o.rt.Resume(ctx, o.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.NoError(t, harness.VerifyLog(ctx, o.store, o.actor, "t"))
}
