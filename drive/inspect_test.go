package drive_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// Open requests are listed whatever else the thread can do: one call of
// two approved makes the thread resumable, and the other still waits.
func TestInspectListsOpenRequestsOfAResumableThread(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	_, err := e.RT.Start(ctx, e.Stock.Actor, "t", "go")
	require.NoError(t, err)
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Len(t, st.Waits, 2)
	first := st.Waits[0]

	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: first.RequestID, Approved: true, By: "ana", Digest: first.Digest})
	require.NoError(t, err)
	_, err = e.RT.Post(ctx, e.Stock.Actor, "t", d, drive.AnswerKey(d.Kind, first.RequestID))
	require.NoError(t, err)

	st, err = drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, harness.StatusResumable, st.Status)
	require.Len(t, st.Waits, 1)
	require.Equal(t, fold.WaitConfirmation, st.Waits[0].Kind)
	require.Equal(t, "run_command", st.Waits[0].Tool)
	require.NotEmpty(t, st.Waits[0].Digest)
}

// A failed model turn can be tried again: Inspect names it, and a Resume
// runs it once more.
func TestInspectReportsARetryableFailure(t *testing.T) {
	e := harnesstest.NewStock(t, `{"fail": ["permission"], "text": "Hello back."}`)
	out, err := e.RT.Start(ctx, e.Stock.Actor, "t", "Hello")
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status)

	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, st.Status)
	require.Equal(t, "infer/turn/1", st.Retry)
	require.Contains(t, st.Reason, "permission")

	// The scripted model fails the first attempt only, as a fixed key would.
	out, err = e.RT.Resume(ctx, e.Stock.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	st, err = drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.Empty(t, st.Retry)
}

// A failure for good (a transition that died) is not retryable.
func TestInspectNoRetryForADefect(t *testing.T) {
	e := harnesstest.NewStock(t, `{"text": "x"}`)
	e.RT.Services.Model = panicModel{}
	_, err := e.RT.Start(ctx, e.Stock.Actor, "t", "Hello")
	require.ErrorIs(t, err, harness.ErrDefect)
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, st.Status)
	require.Empty(t, st.Retry)
}

type panicModel struct{}

func (panicModel) Turn(context.Context, model.Request) (model.Decision, error) { panic("boom") }

// An action that started and has no completion while a runtime in this
// process still runs it is running, not in doubt: Inspect and the effects
// say so, and a reconciliation of it is refused (it is not open). Once it
// completes, the thread goes on as if nobody had looked.
func TestALiveActionIsRunningNotInDoubt(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	done, release := o.ResumeIntoTheWrite("t")

	st, err := drive.Inspect(ctx, o.Thread("t"))
	require.NoError(t, err)
	require.Empty(t, st.InDoubt, "the write is running in this process")
	require.Equal(t, []string{"1-c"}, st.Running)
	es, err := audit.ThreadEffects(ctx, o.RT, o.Actor, "t")
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, scheduler.StageStarted, es[0].Stage)
	require.False(t, es[0].InDoubt)
	require.False(t, es[0].Open, "nothing for a person to settle while it runs")
	_, err = o.Post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionAccept, By: "ana"}, "r")
	require.ErrorIs(t, err, scheduler.ErrUnknownRequest, "not open")

	close(release)
	require.NoError(t, <-done)
	st, err = drive.Inspect(ctx, o.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.Empty(t, st.Running)
	require.Empty(t, st.InDoubt)
	require.NotContains(t, o.Kinds("t"), facts.KindActionInterrupted)
}

// mine is a user's own store wrapper: it embeds the store and says
// nothing else (no Unwrap).
type mine struct{ thread.Store }

// A second runtime over a user's own wrapper of the store waits for the
// first while its tool runs — it does not take the running action for one
// in doubt — and the tool runs once.
func TestASecondRuntimeOverAWrapperWaits(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	done, release := o.ResumeIntoTheWrite("t")
	other, err := harness.NewRuntime(&mine{o.Store}, o.RT.Services, o.RT.Config)
	require.NoError(t, err)

	st, err := drive.Inspect(ctx, other.Thread(o.Actor, "t"))
	require.NoError(t, err)
	require.Empty(t, st.InDoubt, "the wrapper is the same store: the thread is held")
	require.Equal(t, []string{"1-c"}, st.Running)

	second := make(chan error, 1)
	go func() { _, err := other.Resume(ctx, o.Actor, "t"); second <- err }()
	select {
	case err := <-second:
		t.Fatalf("the second runtime did not wait for the first: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-done)
	require.NoError(t, <-second)
	require.EqualValues(t, 1, o.Calls.Load(), "the tool ran once")
	require.NotContains(t, o.Kinds("t"), facts.KindActionInterrupted)
	require.NoError(t, audit.VerifyLog(ctx, o.Store, o.Actor, "t"))
}
