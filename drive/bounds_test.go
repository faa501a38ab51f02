package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// A change of bounds replaces the bounds it gives and keeps the others;
// with onlyChange, the same bounds again append nothing.
func TestSetBounds(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Done."}
`)
	set, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: facts.Spend{USD: 5, Tokens: 9000}, By: "ana", Source: "flag"})
	require.NoError(t, err)
	_, err = e.Thread("t").Start(ctx, "Make the TTL 300", harness.Ingress{Draft: set, Key: "budget"})
	require.NoError(t, err)

	tokens := int64(20000)
	_, err = drive.SetBounds(ctx, e.Thread("t"), drive.Bounds{Tokens: &tokens}, "bo", "flag", true)
	require.NoError(t, err)
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, facts.Spend{USD: 5, Tokens: 20000}, st.Budget.Limit, "the dollars kept, the tokens replaced")

	n := len(e.Log("t"))
	p, err := drive.SetBounds(ctx, e.Thread("t"), drive.Bounds{Tokens: &tokens}, "bo", "flag", true)
	require.NoError(t, err)
	require.Zero(t, p.Seq)
	require.Len(t, e.Log("t"), n, "the same bounds: nothing appended")
	_, err = drive.SetBounds(ctx, e.Thread("t"), drive.Bounds{Tokens: &tokens}, "bo", "budget set", false)
	require.NoError(t, err)
	require.Len(t, e.Log("t"), n+1, "a person's set is recorded")

	none := 0.0
	_, err = drive.SetBounds(ctx, e.Thread("t"), drive.Bounds{USD: &none}, "bo", "flag", true)
	require.NoError(t, err)
	st, err = drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, facts.Spend{Tokens: 20000}, st.Budget.Limit, "0 is no bound in dollars")
}

// A bound in turns the log records is raised to a larger one, never
// lowered or removed; the same bound, or a thread without one it waits
// on, appends nothing.
func TestRaiseTurnsTo(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Done."}
`, harness.WithBudget(4, 0))
	_, err := e.Thread("t").Start(ctx, "Make the TTL 300")
	require.NoError(t, err)
	n := len(e.Log("t"))
	for _, low := range []int{3, 0} {
		_, err = drive.RaiseTurnsTo(ctx, e.Thread("t"), low, "ana")
		require.ErrorIs(t, err, drive.ErrTurnsLowered, "%d", low)
		require.Contains(t, err.Error(), "thread t records its bound of 4 model turns, which a resume may raise but not lower or remove")
	}
	p, err := drive.RaiseTurnsTo(ctx, e.Thread("t"), 4, "ana")
	require.NoError(t, err)
	require.Zero(t, p.Seq)
	require.Len(t, e.Log("t"), n, "refused or the same: nothing appended")

	_, err = drive.RaiseTurnsTo(ctx, e.Thread("t"), 10, "ana")
	require.NoError(t, err)
	r, err := facts.Decode[facts.BudgetRaised](e.Last("t", facts.KindBudgetRaised))
	require.NoError(t, err)
	require.Equal(t, facts.BudgetRaised{Add: facts.Spend{Turns: 6}, By: "ana"}, r)
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, 10, st.View.Budget.MaxTurns)
	_, err = drive.RaiseTurnsTo(ctx, e.Thread("t"), 10, "ana")
	require.NoError(t, err)
	require.Len(t, e.Log("t"), n+1, "raised once")
}
