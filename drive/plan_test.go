package drive_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread"
)

// errDied is the store of a process that died: nothing more is written.
var errDied = errors.New("the process died")

// dyingStore is a store whose process dies after left more appends: each
// append after that writes nothing, as a SIGKILL at that point would
// leave the log.
type dyingStore struct {
	thread.Store
	left int
}

func (s *dyingStore) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	if s.left == 0 {
		return thread.Head{}, errDied
	}
	s.left--
	return s.Store.Append(ctx, id, after, drafts...)
}

// planWaiting starts thread t in plan mode on a fresh env; it waits on
// the plan of turn 1.
func planWaiting(t *testing.T) *harnesstest.Env {
	t.Helper()
	e := harnesstest.New(t, `{"text": "Plan A."}
{"text": "Carried out."}
`)
	on, err := drive.PlanOn("ana")
	require.NoError(t, err)
	out, err := e.Thread("t").Start(ctx, "Make the TTL 300", on)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, "plan-1", out.Waits[0].RequestID)
	return e
}

// TestActOnPlanNoGap: acting on a plan switches plan mode off and tells
// the model to carry the plan out. Whenever the process dies while it
// does, the log holds both facts or neither: never plan mode off with no
// message (the thread would end without acting). After neither, the plan
// still waits and acting on it again carries it out.
func TestActOnPlanNoGap(t *testing.T) {
	for left := range 3 {
		e := planWaiting(t)
		before := len(e.Log("t"))
		e.RT.Store = &dyingStore{Store: e.Store, left: left}
		_, err := drive.ActOnPlan(ctx, e.Thread("t"), "ana")
		e.RT.Store = e.Store // the process starts again
		kinds := e.Kinds("t")[before:]
		switch {
		case len(kinds) == 0:
			require.ErrorIs(t, err, errDied, "%d appends left", left)
			v, err := e.Thread("t").View(ctx)
			require.NoError(t, err)
			require.True(t, v.Plan.On && v.Plan.Waiting && v.Plan.Turn == 1, "nothing acted on: the plan still waits (%d appends left)", left)
			_, err = drive.ActOnPlan(ctx, e.Thread("t"), "ana")
			require.NoError(t, err)
		default:
			require.NoError(t, err, "%d appends left", left)
			require.Equal(t, []facts.Kind{facts.KindPlanModeSet, facts.KindUserMessage}, kinds, "%d appends left: both facts or neither", left)
		}
		p, err := facts.Decode[facts.PlanModeSet](e.Last("t", facts.KindPlanModeSet))
		require.NoError(t, err)
		require.Equal(t, facts.PlanModeSet{By: "ana", Acts: 1}, p)
		m, err := facts.Decode[facts.UserMessage](e.Last("t", facts.KindUserMessage))
		require.NoError(t, err)
		require.Contains(t, m.Text, "Your plan (turn 1) is approved")
		again, err := drive.ActOnPlan(ctx, e.Thread("t"), "ana")
		require.ErrorIs(t, err, harness.ErrNoPlan, "acted on once: %+v", again)
		out, err := e.RT.Resume(ctx, e.Actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status)
		msgs := e.Model.Last().Messages
		require.Contains(t, msgs[len(msgs)-1].Text, "Your plan (turn 1) is approved", "the model was told to act")
	}
}
