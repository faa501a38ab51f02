package stock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// kindsOf are the kinds of the thread's facts, in order.
func kindsOf(t *testing.T, s *stock.Session, id string) []facts.Kind {
	t.Helper()
	head, err := s.Store.Head(ctx, id)
	require.NoError(t, err)
	var kinds []facts.Kind
	for seq := uint64(1); seq <= head.Seq; seq++ {
		f, err := thread.ReadAt(ctx, s.Store, id, seq)
		require.NoError(t, err)
		kinds = append(kinds, f.Kind)
	}
	return kinds
}

// A thread started with settings that give a budget records it in its
// first append, and one started in plan mode says so.
func TestStartThreadRecordsBudgetAndPlan(t *testing.T) {
	s, _ := driverSession(t, `{"max_cost": 2}`)
	script := filepath.Join(s.Place.Root, "done.jsonl")
	require.NoError(t, os.WriteFile(script, []byte(`{"text": "The plan: nothing."}`+"\n"), 0o644))
	m, err := stock.LoadModel("scripted:" + script)
	require.NoError(t, err)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	var picked string
	th, _, err := d.StartThread(ctx, stock.NewThread{Message: facts.UserMessage{Text: "plan"}, By: "ana", Plan: true,
		Picked: func(id, _ string) { picked = id }})
	require.NoError(t, err)
	require.Equal(t, "t1", picked)
	kinds := kindsOf(t, s, th.ID())
	require.Contains(t, kinds, facts.KindBudgetSet)
	require.Contains(t, kinds, facts.KindPlanModeSet)
	st, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.NotNil(t, st.Budget)
	require.InDelta(t, 2.0, st.Budget.Limit.USD, 1e-9)

	_, _, err = d.StartThread(ctx, stock.NewThread{ID: "t1", Message: facts.UserMessage{Text: "again"}, By: "ana"})
	require.ErrorIs(t, err, harness.ErrThreadExists)
}

// The flags given on a thread that exists are recorded as a person's
// word: its budget set anew, its bound in turns raised, its policy
// amended; a bound lowered is refused; flags that change nothing append
// nothing.
func TestAmendThread(t *testing.T) {
	s, spec := driverSession(t, "")
	m, err := stock.LoadModel(spec)
	require.NoError(t, err)
	d, err := s.NewDriver(s.Approval, stock.DriverOptions{Model: m})
	require.NoError(t, err)
	th, _, err := d.StartThread(ctx, stock.NewThread{ID: "t1", Message: facts.UserMessage{Text: "write"}, By: "ana"})
	require.NoError(t, err)
	head, err := s.Store.Head(ctx, "t1")
	require.NoError(t, err)

	none, err := stock.FlagLayer(stock.Settings{Model: "x"}, "no-input")
	require.NoError(t, err)
	require.NoError(t, s.AmendThread(ctx, th, none, "ana"))
	again, err := s.Store.Head(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, head.Seq, again.Seq, "nothing to record")

	cost, turns := 3.0, 80
	layer, err := stock.FlagLayer(stock.Settings{MaxCost: &cost, MaxTurns: &turns, Approve: "all"}, "max-cost", "max-turns", "approve")
	require.NoError(t, err)
	require.NoError(t, s.AmendThread(ctx, th, layer, "ana"))
	st, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.NotNil(t, st.Budget)
	require.InDelta(t, 3.0, st.Budget.Limit.USD, 1e-9)
	require.Equal(t, 80, st.MaxTurns)
	p, _, ok, err := drive.ThreadPolicy(ctx, th)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "all", p.Approve)

	fewer := 10
	layer, err = stock.FlagLayer(stock.Settings{MaxTurns: &fewer}, "max-turns")
	require.NoError(t, err)
	require.ErrorIs(t, s.AmendThread(ctx, th, layer, "ana"), drive.ErrTurnsLowered)
}
