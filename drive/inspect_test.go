package drive_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
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
