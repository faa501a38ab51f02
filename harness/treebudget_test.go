package harness_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
)

// budgetScript: the parent delegates to two children in one turn; the
// first child takes three turns, the second two, the parent one more.
// Every turn reads 1000 input tokens, $1 at budgetPrices: $7 in all.
// (The first turn of each thread is reckoned at its prompt's size, a few
// hundred tokens here, before it runs.)
const budgetScript = `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read a\",\"tools\":[\"read_file\"]}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"Read b\",\"tools\":[\"read_file\"]}"}], "usage": {"input_tokens": 1000}}
{"text": "Both read.", "usage": {"input_tokens": 1000}}
{"thread": "1-d1", "text": "a1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a1\"}"}], "usage": {"input_tokens": 1000}}
{"thread": "1-d1", "text": "a2", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a2\"}"}], "usage": {"input_tokens": 1000}}
{"thread": "1-d1", "text": "a read.", "usage": {"input_tokens": 1000}}
{"thread": "1-d2", "text": "b1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"b1\"}"}], "usage": {"input_tokens": 1000}}
{"thread": "1-d2", "text": "b read.", "usage": {"input_tokens": 1000}}`

// budgetPrices prices a turn of 1000 input tokens at $1.
func budgetPrices() harness.Option {
	p := model.Prices{Version: "test-1", Models: map[string]model.Price{"test:m": {Input: 1000, Output: 1000}}}
	return func(c *harness.Config) { c.Prices = &p }
}

func budgetSet(t *testing.T, usd float64, tokens int64) harness.Ingress {
	t.Helper()
	d, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: facts.Spend{USD: usd, Tokens: tokens}, By: "ana", Source: "flag"})
	require.NoError(t, err)
	return harness.Ingress{Draft: d, Key: "budget"}
}

// spentIn sums the cost and tokens of the model turns of the threads.
func spentIn(e *tree, ids ...string) (float64, int64) {
	var usd float64
	var tokens int64
	for _, id := range ids {
		for _, f := range e.log(id) {
			if f.Kind != facts.KindModelTurn {
				continue
			}
			mt := mustDecode[facts.ModelTurn](e.t, f)
			require.NotNil(e.t, mt.Cost, "%s seq %d is priced", id, f.Seq)
			usd += mt.Cost.USD
			tokens += mt.Usage.InputTokens + mt.Usage.OutputTokens
		}
	}
	return usd, tokens
}

// A parent and two children share a budget of $3: the first child's
// third turn would pass it, so the tree parks on a budget wait in the
// middle of that child (the second child, told what the first spent,
// waits before its first turn); a person's raise lets the next resume
// finish, and the whole tree spent what its turns cost.
func TestTreeBudgetParksMidChildAndARaiseResumes(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, budgetScript, budgetPrices(), harness.WithModelName("test:m"))
	c1, c2 := "p.1-d1", "p.1-d2"
	out, err := e.rt.Thread(e.actor, "p").Start(ctx, "Read a and b", budgetSet(t, 3, 0))
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	var kinds []fold.WaitKind
	var threads []string
	for _, w := range out.Waits {
		if w.Kind != fold.WaitChild {
			kinds, threads = append(kinds, w.Kind), append(threads, w.Thread)
		}
	}
	require.Equal(t, []fold.WaitKind{fold.WaitBudget, fold.WaitBudget}, kinds, "%+v", out.Waits)
	require.Equal(t, []string{c1, c2}, threads)

	// The parent's one turn and the first child's two: $3, no more; the
	// second child ran no turn.
	usd, _ := spentIn(e, "p", c1, c2)
	require.InDelta(t, 3.0, usd, 1e-9)
	require.Equal(t, 2, countKind(e.log(c1), facts.KindModelTurn))
	require.Equal(t, 0, countKind(e.log(c2), facts.KindModelTurn))
	require.Equal(t, 0, countKind(e.log("p"), facts.KindChildReported))
	sh := mustDecode[facts.BudgetShared](t, e.log(c2)[slicesIndexKind(e.log(c2), facts.KindBudgetShared)])
	require.Equal(t, facts.BudgetShared{Limit: facts.Spend{USD: 3}, Elsewhere: facts.Spend{USD: 3, Tokens: 3000}, Root: "p"}, sh)

	// Resuming without a raise runs nothing more.
	out, err = e.rt.Resume(ctx, e.actor, "p")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, 2, countKind(e.log(c1), facts.KindModelTurn))

	// A raise posted to a child is refused: the budget is the root's.
	raise, err := facts.NewDraft(facts.KindBudgetRaised, "", facts.BudgetRaised{Add: facts.Spend{USD: 10}, By: "ana"})
	require.NoError(t, err)
	_, err = e.rt.Thread(e.actor, "p").Open(ctx, c1)
	require.NoError(t, err)
	kid, err := e.rt.Thread(e.actor, "p").Open(ctx, c1)
	require.NoError(t, err)
	_, err = kid.Post(ctx, raise, "raise-1")
	require.ErrorIs(t, err, fold.ErrRefused)

	tr, err := e.rt.Thread(e.actor, "p").Tree(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, tr.Status)
	_, err = e.rt.Thread(e.actor, "p").Post(ctx, raise, "raise-1")
	require.NoError(t, err)
	// The raise is not the children's yet: a resume tells them.
	tr, err = e.rt.Thread(e.actor, "p").Tree(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusResumable, tr.Status)
	out, err = e.rt.Resume(ctx, e.actor, "p")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)

	usd, tokens := spentIn(e, "p", c1, c2)
	require.InDelta(t, 7.0, usd, 1e-9)
	require.EqualValues(t, 7000, tokens)
	v, err := e.rt.Thread(e.actor, "p").View(ctx)
	require.NoError(t, err)
	require.InDelta(t, 7.0, v.Budget.USD, 1e-9)
	require.Equal(t, facts.Spend{USD: 13}, v.Budget.Tree.Limit)
	for _, id := range []string{"p", c1, c2} {
		require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, id), id)
	}
}

// A tree parked on its budget that a person stops ends stopped, its
// children with it, and spends nothing more.
func TestTreeBudgetStopped(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, budgetScript, budgetPrices(), harness.WithModelName("test:m"))
	out, err := e.rt.Thread(e.actor, "p").Start(ctx, "Read a and b", budgetSet(t, 0, 2500))
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	require.Equal(t, fold.WaitBudget, out.Waits[len(out.Waits)-1].Kind)
	_, tokens := spentIn(e, "p", "p.1-d1", "p.1-d2")
	// The parent's turn and the first child's first (2000); the first
	// child's second (1000 more) would pass 2500 and waits; the second
	// child's first, reckoned at its prompt's few hundred tokens, ran
	// (3000), and its second waits.
	require.EqualValues(t, 3000, tokens)
	require.Equal(t, 1, countKind(e.log("p.1-d1"), facts.KindModelTurn))
	require.Equal(t, 1, countKind(e.log("p.1-d2"), facts.KindModelTurn))

	_, err = e.rt.Thread(e.actor, "p").Stop(ctx, "ana", "too dear")
	require.NoError(t, err)
	out, err = e.rt.Resume(ctx, e.actor, "p")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStopped, out.Status, out.Reason)
	_, after := spentIn(e, "p", "p.1-d1", "p.1-d2")
	require.Equal(t, tokens, after)
	for _, id := range []string{"p.1-d1", "p.1-d2"} {
		last := e.log(id)[len(e.log(id))-1]
		require.Equal(t, facts.KindThreadEnded, last.Kind, id)
		require.Equal(t, facts.EndStopped, mustDecode[facts.ThreadEnded](t, last).Status, id)
	}
	for _, id := range []string{"p", "p.1-d1", "p.1-d2"} {
		require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, id), id)
	}
}
