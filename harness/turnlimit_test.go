package harness_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

func raiseTurns(t *testing.T, n int64) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(facts.KindBudgetRaised, "", facts.BudgetRaised{Add: facts.Spend{Turns: n}, By: "ana"})
	require.NoError(t, err)
	return d
}

// A root thread that ran its bound in turns waits on the budget wait (it
// does not end); a raise by one turn lets exactly one more turn run, and
// a larger one lets it finish. Nothing records budget.exhausted.
func TestTurnLimitWaitsAndARaiseResumes(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, readingScript(4), harness.WithBudget(2, 0))
	th := e.rt.Thread(e.actor, "t")
	out, err := th.Start(ctx, "Read the files")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	require.Len(t, out.Waits, 1)
	require.Equal(t, fold.WaitBudget, out.Waits[0].Kind)
	require.Contains(t, out.Waits[0].Summary, "ran its 2 model turns")
	require.Equal(t, 2, countKind(e.log("t"), facts.KindModelTurn))
	require.Zero(t, countKind(e.log("t"), facts.KindBudgetExhausted))

	// The bound is the log's: a runtime configured with another (a
	// listing's, say) sees the same wait, and resuming there runs nothing.
	other := newTree(t, e.store, readingScript(4), harness.WithBudget(50, 0))
	v, err := other.rt.Thread(other.actor, "t").View(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, v.Status)
	require.Equal(t, 2, v.Budget.MaxTurns)
	out, err = other.rt.Resume(ctx, other.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)

	// Resuming without a raise runs nothing more.
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, 2, countKind(e.log("t"), facts.KindModelTurn))

	_, err = th.Post(ctx, raiseTurns(t, 1), "raise-1")
	require.NoError(t, err)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	require.Contains(t, out.Waits[0].Summary, "ran its 3 model turns")
	require.Equal(t, 3, countKind(e.log("t"), facts.KindModelTurn))

	_, err = th.Post(ctx, raiseTurns(t, 10), "raise-2")
	require.NoError(t, err)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	require.Equal(t, 5, countKind(e.log("t"), facts.KindModelTurn))
	require.Zero(t, countKind(e.log("t"), facts.KindBudgetExhausted))
	v, err = th.View(ctx)
	require.NoError(t, err)
	require.Equal(t, 13, v.Budget.MaxTurns)
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "t"))
}

// Logs written before a bound in turns waited — no reserve at all, or a
// reserve that does not say turns — ended with budget.exhausted: they
// fold as they ran (stopped, for good), verify, and a resume by this
// runtime changes nothing.
func TestTurnLimitOldLogEndsAsItRan(t *testing.T) {
	ctx := context.Background()
	for name, old := range map[string]harness.Option{"no reserve": harness.WithoutReserve(), "a reserve without turns": harness.WithoutTurnsWait()} {
		t.Run(name, func(t *testing.T) {
			o := newTree(t, nil, readingScript(4), harness.WithBudget(2, 0), old)
			out, err := o.rt.Thread(o.actor, "t").Start(ctx, "Read the files")
			require.NoError(t, err)
			require.Equal(t, harness.StatusStopped, out.Status, out.Reason)
			log := o.log("t")
			require.Equal(t, 1, countKind(log, facts.KindBudgetExhausted))
			n := len(log)

			e := newTree(t, o.store, readingScript(4), harness.WithBudget(2, 0))
			require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "t"))
			out, err = e.rt.Resume(ctx, e.actor, "t")
			require.NoError(t, err)
			require.Equal(t, harness.StatusStopped, out.Status, out.Reason)
			require.Contains(t, out.Reason, "turns budget exhausted: 2 used of 2")
			require.Len(t, e.log("t"), n)
		})
	}
}

// A child's bound in turns is its delegation's: it ends the child, which
// reports to its parent's model; the root's own bound waits, and counts
// the child's turns once reported.
func TestTurnLimitChildCapEndsTheChild(t *testing.T) {
	ctx := context.Background()
	script := `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read a\",\"tools\":[\"read_file\"],\"max_turns\":1}"}]}
{"text": "Done."}
{"thread": "1-d1", "text": "a1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a1\"}"}]}
{"thread": "1-d1", "text": "a read."}`
	e := newTree(t, nil, script, harness.WithBudget(2, 0))
	out, err := e.rt.Thread(e.actor, "p").Start(ctx, "Read a")
	require.NoError(t, err)
	kid := e.log("p.1-d1")
	require.Equal(t, 1, countKind(kid, facts.KindModelTurn))
	require.Equal(t, 1, countKind(kid, facts.KindBudgetExhausted), "the delegation's cap ends the child")
	// The parent's turn and the child's reported one: the root's 2 are
	// spent, and the root waits instead of ending.
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	require.Equal(t, fold.WaitBudget, out.Waits[0].Kind)
	require.Empty(t, out.Waits[0].Thread, "the root's own wait")

	// A raise in turns posted to the child is refused: the bound is the root's.
	k, err := e.rt.Thread(e.actor, "p").Open(ctx, "p.1-d1")
	require.NoError(t, err)
	_, err = k.Post(ctx, raiseTurns(t, 1), "raise-1")
	require.ErrorIs(t, err, fold.ErrRefused)

	_, err = e.rt.Thread(e.actor, "p").Post(ctx, raiseTurns(t, 1), "raise-1")
	require.NoError(t, err)
	out, err = e.rt.Resume(ctx, e.actor, "p")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
}

// A raise past what a number holds saturates: the bound reads as the
// most turns there are, not as none or a negative number.
func TestTurnRaiseSaturates(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, readingScript(4), harness.WithBudget(2, 0))
	th := e.rt.Thread(e.actor, "t")
	out, err := th.Start(ctx, "Read the files")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	_, err = th.Post(ctx, raiseTurns(t, math.MaxInt64), "raise-1")
	require.NoError(t, err)
	_, err = th.Post(ctx, raiseTurns(t, math.MaxInt64), "raise-2")
	require.NoError(t, err)
	v, err := th.View(ctx)
	require.NoError(t, err)
	require.Equal(t, math.MaxInt32, v.Budget.MaxTurns)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
}

// A raise adds turns, never none or fewer; and a set or share of the
// tree's budget carries no bound in turns.
func TestTurnRaiseRefusesNothingAndNegative(t *testing.T) {
	for _, add := range []facts.Spend{{}, {Turns: -1}, {Turns: -5, Tokens: 10}} {
		require.Error(t, facts.BudgetRaised{Add: add}.Validate(), "%+v", add)
	}
	require.NoError(t, facts.BudgetRaised{Add: facts.Spend{Turns: 1}}.Validate())
	require.Error(t, facts.BudgetSet{Limit: facts.Spend{Turns: 3}}.Validate())
	require.Error(t, facts.BudgetShared{Limit: facts.Spend{Turns: 3}}.Validate())
}
