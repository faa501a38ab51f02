package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// TestGoOnOf: a thread a budget stopped for good is forked before its
// budget.exhausted and resumed with twice its bound (else twice the
// default); any other state has no way on.
func TestGoOnOf(t *testing.T) {
	stopped := func(seq uint64, maxTurns int) drive.State {
		st := drive.State{Thread: "t1", Status: harness.StatusStopped,
			Head: thread.Head{Thread: "t1", Seq: seq, Kind: facts.KindBudgetExhausted}}
		if maxTurns > 0 {
			st.View.Budget = &harness.BudgetView{MaxTurns: maxTurns}
		}
		return st
	}
	g, ok := drive.GoOnOf(stopped(9, 7), 50)
	require.True(t, ok)
	require.Equal(t, drive.GoOn{Fork: "t1-at8", At: 8, MaxTurns: 14}, g)

	g, ok = drive.GoOnOf(stopped(9, 0), 50)
	require.True(t, ok)
	require.Equal(t, 100, g.MaxTurns, "no bound recorded: twice the default")

	_, ok = drive.GoOnOf(stopped(1, 7), 50)
	require.False(t, ok, "nothing to fork before")
	other := stopped(9, 7)
	other.Head.Kind = facts.KindThreadStopped
	_, ok = drive.GoOnOf(other, 50)
	require.False(t, ok, "stopped by a person, not a budget")
	other = stopped(9, 7)
	other.Status = harness.StatusParked
	_, ok = drive.GoOnOf(other, 50)
	require.False(t, ok)
}
