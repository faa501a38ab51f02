package harness_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// Start starts a thread only if it is new: of racing starts of one id
// exactly one wins and the others are told ErrThreadExists, appending
// nothing. A start retried that resumes on ErrThreadExists appends no
// second message.
func TestStartExisting(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	cfg, err := harness.NewConfig(harness.WithModelName("scripted"))
	require.NoError(t, err)
	tools, err := harness.NewToolbox()
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	runtime := func() *harness.Runtime {
		script, err := model.ParseScript("start", []byte(`{"text": "Hello."}`))
		require.NoError(t, err)
		rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, cfg)
		require.NoError(t, err)
		return rt
	}

	const racers = 8
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		rt := runtime()
		wg.Go(func() { _, errs[i] = rt.Start(ctx, actor, "t1", "Say hello") })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		require.ErrorIs(t, err, harness.ErrThreadExists)
	}
	require.Equal(t, 1, won)
	h, err := store.Head(ctx, "t1")
	require.NoError(t, err)

	// Later, too: nothing appended, nothing run.
	_, err = runtime().Start(ctx, actor, "t1", "Say hello again")
	require.ErrorIs(t, err, harness.ErrThreadExists)
	again, err := store.Head(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, h.Seq, again.Seq)

	// A start retried after a crash resumes the thread instead (done:
	// nothing to run) and drops nothing silently: the thread keeps its
	// one first message.
	out, err := startOrResume(ctx, runtime(), actor, "t1", "Say hello again")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	again, err = store.Head(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, h.Seq, again.Seq)
	n := 0
	for f, err := range store.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindUserMessage {
			n++
		}
	}
	require.Equal(t, 1, n)
}

// startOrResume starts thread id, or resumes it if it was started: the
// idiom of a start that may be retried.
func startOrResume(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id, message string) (harness.Outcome, error) {
	out, err := rt.Start(ctx, actor, id, message)
	if errors.Is(err, harness.ErrThreadExists) {
		return rt.Resume(ctx, actor, id)
	}
	return out, err
}

// Submit starts a thread and runs nothing: the thread holds the user's
// message alone, is resumable (for a worker), and a second Submit of the
// id appends nothing.
func TestSubmit(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Hello."}`)
	th := e.Thread("t1")
	p, err := th.Submit(ctx, "Say hello")
	require.NoError(t, err)
	require.EqualValues(t, 1, p.Seq)
	require.Zero(t, e.Model.Calls(), "nothing ran")
	v, err := th.View(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusResumable, v.Status)

	_, err = e.Thread("t1").Submit(ctx, "Again")
	require.ErrorIs(t, err, harness.ErrThreadExists)
	require.Len(t, e.Log("t1"), 1)

	out, err := th.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
}

// Submit's also are appended with the message, in one append: a reader
// never finds the thread without them. A fact that is not ingress, or a
// key given twice, appends nothing.
func TestSubmitWithIngress(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Hello."}`)
	policy := func(mode string) harness.Ingress {
		d, err := facts.NewDraft(facts.KindPolicySet, "", facts.PolicySet{Approve: mode, By: "ana"})
		require.NoError(t, err)
		return harness.Ingress{Draft: d, Key: "policy-0-" + mode}
	}
	p, err := e.Thread("t1").Submit(ctx, "Say hello", policy("all"))
	require.NoError(t, err)
	require.EqualValues(t, 1, p.Seq, "the seq of the message")
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindPolicySet}, e.Kinds("t1"))
	log := e.Log("t1")
	require.Equal(t, log[0].At, log[1].At, "one append")
	require.Equal(t, "ingress/policy-0-all", log[1].Cause)

	turn, err := facts.NewDraft(facts.KindModelTurn, "", facts.ModelTurn{Text: "forged"})
	require.NoError(t, err)
	for name, also := range map[string][]harness.Ingress{
		"not ingress":     {{Draft: turn, Key: "k"}},
		"key twice":       {policy("all"), policy("all")},
		"start key again": {{Draft: policy("all").Draft, Key: harness.StartKey}},
		"no key":          {{Draft: policy("all").Draft}},
	} {
		_, err := e.Thread("t2").Submit(ctx, "Say hello", also...)
		require.Error(t, err, name)
		_, herr := e.Store.Head(ctx, "t2")
		require.ErrorIs(t, herr, thread.ErrNotFound, "%s: nothing appended", name)
	}

	out, err := e.Thread("t1").Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t1"))
}

// StartOrResume: a start retried with the same message resumes the
// thread (appending no second message); one with another message is
// ErrThreadExists and appends nothing.
func TestStartOrResume(t *testing.T) {
	ctx := context.Background()
	e := harnesstest.New(t, harnesstest.WriteScript)
	th := e.Thread("t1")
	out, err := th.StartOrResume(ctx, "Set the TTL")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	head := out.Seq

	out, err = e.Thread("t1").StartOrResume(ctx, "Set the TTL")
	require.NoError(t, err, "the same start again: resumed")
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, head, out.Seq, "nothing appended")

	_, err = e.Thread("t1").StartOrResume(ctx, "Something else")
	require.ErrorIs(t, err, harness.ErrThreadExists)
	require.Contains(t, err.Error(), "another message")
	_, err = e.Thread("t1").Start(ctx, "Set the TTL")
	require.ErrorIs(t, err, harness.ErrThreadExists, "Start itself never continues")
	n := 0
	for _, k := range e.Kinds("t1") {
		if k == facts.KindUserMessage {
			n++
		}
	}
	require.Equal(t, 1, n)
}
