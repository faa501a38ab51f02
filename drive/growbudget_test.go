package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// A raise in tokens and turns of a budget in dollars alone is a budget.set
// and a budget.raised: a process that dies after any number of appends
// leaves both or neither, and the retry adds the tokens and turns once.
func TestGrowBudgetNoGap(t *testing.T) {
	for left := range 3 {
		e := harnesstest.New(t, `{"text": "Done.", "usage": {"input_tokens": 700}}
`)
		set, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: facts.Spend{USD: 5}, By: "ana", Source: "flag"})
		require.NoError(t, err)
		_, err = e.Thread("t").Start(ctx, "Make the TTL 300", harness.Ingress{Draft: set, Key: "budget"})
		require.NoError(t, err)
		before := len(e.Log("t"))
		add := facts.Spend{USD: 1, Tokens: 1000, Turns: 2}

		e.RT.Store = &dyingStore{Store: e.Store, left: left}
		_, err = drive.GrowBudget(ctx, e.Thread("t"), add, "ana")
		e.RT.Store = e.Store // the process starts again
		kinds := e.Kinds("t")[before:]
		if len(kinds) == 0 {
			require.ErrorIs(t, err, errDied, "%d appends left", left)
			_, err = drive.GrowBudget(ctx, e.Thread("t"), add, "ana") // the person says it again
		}
		require.NoError(t, err, "%d appends left", left)
		require.Equal(t, []facts.Kind{facts.KindBudgetSet, facts.KindBudgetRaised}, e.Kinds("t")[before:], "%d appends left: both facts or neither", left)

		st, err := drive.Inspect(ctx, e.Thread("t"))
		require.NoError(t, err)
		require.NotNil(t, st.Budget)
		require.Equal(t, facts.Spend{USD: 6, Tokens: st.Budget.Spent.Tokens + 1000}, st.Budget.Limit, "%d appends left: added once", left)
		r, err := facts.Decode[facts.BudgetRaised](e.Last("t", facts.KindBudgetRaised))
		require.NoError(t, err)
		require.Equal(t, facts.Spend{Turns: 2}, r.Add)
	}
}

// A raise of a bound the budget does not have would be recorded and
// change nothing (dollars on a budget in tokens alone): it is refused,
// saying the bounds the budget has, and nothing is appended. The budget
// wait offers the bound it has; a raise of it goes on.
func TestGrowBudgetRefusesABoundItDoesNotHave(t *testing.T) {
	e := harnesstest.New(t, `{"text": "Done.", "usage": {"input_tokens": 700}}
`)
	set, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: facts.Spend{Tokens: 1000}, By: "ana", Source: "flag"})
	require.NoError(t, err)
	_, err = e.Thread("t").Start(ctx, "Make the TTL 300", harness.Ingress{Draft: set, Key: "budget"})
	require.NoError(t, err)
	before := len(e.Log("t"))

	for _, add := range []facts.Spend{{USD: 5}, {USD: 5, Tokens: 100}} {
		_, err = drive.GrowBudget(ctx, e.Thread("t"), add, "ana")
		require.ErrorIs(t, err, drive.ErrNoBound, "%+v", add)
		require.ErrorIs(t, err, drive.ErrBadReply)
		require.Contains(t, err.Error(), "the budget of t has no bound in dollars")
		require.Contains(t, err.Error(), "1000 tokens")
		require.Len(t, e.Log("t"), before, "nothing recorded")
	}
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Contains(t, drive.BudgetBounds(st), drive.BoundTokens)
	require.NotContains(t, drive.BudgetBounds(st), drive.BoundUSD)

	// At the prompt: the wait's bounds refuse "$5" before anything is sent.
	p := drive.Pending{Bounds: []string{drive.BoundTokens, drive.BoundTurns}}
	p.Kind = "budget"
	_, _, err = drive.ParseRaiseReply(p, "$5", "ana")
	require.ErrorIs(t, err, drive.ErrNoBound)
	require.Contains(t, err.Error(), "raise it in tokens or model turns")
	r, ok, err := drive.ParseRaiseReply(p, "500 tokens", "ana")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(500), r.Tokens)

	_, err = drive.GrowBudget(ctx, e.Thread("t"), facts.Spend{Tokens: 500}, "ana")
	require.NoError(t, err)
	st, err = drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, int64(1500), st.Budget.Limit.Tokens)
}
