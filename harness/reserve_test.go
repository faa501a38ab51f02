package harness_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
)

// readingScript is a thread of n turns that each read a file and say
// they read 1000 input tokens, then a last turn that answers.
func readingScript(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"text": "r%d", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"f%d\"}"}], "usage": {"input_tokens": 1000}}`+"\n", i, i)
	}
	b.WriteString(`{"text": "All read.", "usage": {"input_tokens": 1000}}`)
	return b.String()
}

// promptEstimate is what the budget reckons a thread's first turn at:
// its system prompt, tool schemas and first message, four bytes a token.
func promptEstimate(t *testing.T, log []facts.Fact) int64 {
	t.Helper()
	var n int64
	for _, f := range log {
		switch f.Kind {
		case facts.KindSystemConfigured:
			sc := mustDecode[facts.SystemConfigured](t, f)
			require.NotNil(t, sc.Reserve, "a runtime that reserves records it")
			n += int64(len(sc.Prompt))
			for _, tl := range sc.Tools {
				n += int64(len(tl.Name) + len(tl.Description) + len(tl.Schema))
			}
		case facts.KindUserMessage:
			n += int64(len(mustDecode[facts.UserMessage](t, f).Text))
		case facts.KindModelTurn:
			return (n + 3) / 4
		}
	}
	return (n + 3) / 4
}

// The budget reserves the next turn's estimate — the latest turn's
// tokens, or the prompt's size before the first — and the thread parks
// exactly when that would pass it: a turn the budget covers to the token
// runs, one it would pass by one token does not.
func TestBudgetReservesTheNextTurn(t *testing.T) {
	ctx := context.Background()
	// The prompt's size, from a run with no budget.
	e := newTree(t, nil, readingScript(5), budgetPrices(), harness.WithModelName("test:m"))
	_, err := e.rt.Thread(e.actor, "probe").Start(ctx, "Read the files")
	require.NoError(t, err)
	first := promptEstimate(t, e.log("probe"))
	require.Positive(t, first)

	for _, c := range []struct {
		name  string
		limit int64
		turns int // the model turns that ran
	}{
		{"the first turn's prompt passes it by one token", first - 1, 0},
		{"the first turn's prompt fits to the token", first, 1},
		{"the next turn would pass it by one token", 2999, 2},
		{"the next turn fits to the token", 3000, 3},
		{"four turns and one to spare", 4999, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newTree(t, nil, readingScript(5), budgetPrices(), harness.WithModelName("test:m"))
			out, err := e.rt.Thread(e.actor, "t").Start(ctx, "Read the files", budgetSet(t, 0, c.limit))
			require.NoError(t, err)
			require.Equal(t, harness.StatusParked, out.Status, out.Reason)
			require.Len(t, out.Waits, 1)
			require.Equal(t, fold.WaitBudget, out.Waits[0].Kind)
			require.Contains(t, out.Waits[0].Summary, "cannot cover the next turn")
			require.Equal(t, c.turns, countKind(e.log("t"), facts.KindModelTurn))
			// Turns as large as the one before never pass the budget (the
			// first is reckoned at its prompt, and the scripted usage
			// here is larger).
			_, tokens := spentIn(e, "t")
			require.EqualValues(t, 1000*c.turns, tokens)
			if c.turns >= 2 {
				require.LessOrEqual(t, tokens, c.limit, "the budget is never passed")
			}
			require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "t"))
		})
	}
}

// In dollars: turns that cost more each time are reserved at the
// latest one's cost, so the tree parks before the turn that would pass.
func TestBudgetReservesInDollars(t *testing.T) {
	ctx := context.Background()
	script := `{"text": "r1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}], "usage": {"input_tokens": 1000}}
{"text": "r2", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"b\"}"}], "usage": {"input_tokens": 1500}}
{"text": "r3", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"c\"}"}], "usage": {"input_tokens": 1500}}
{"text": "done", "usage": {"input_tokens": 1500}}`
	e := newTree(t, nil, script, budgetPrices(), harness.WithModelName("test:m"))
	// $1, then $1.50: with $3.90 the third turn ($1.50 more on $2.50)
	// would pass; spent ≥ limit would have let it run to $4.
	out, err := e.rt.Thread(e.actor, "t").Start(ctx, "Read", budgetSet(t, 3.9, 0))
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	usd, _ := spentIn(e, "t")
	require.InDelta(t, 2.5, usd, 1e-9)
	require.Contains(t, out.Waits[0].Summary, "about $1.5000 more")

	// A raise to $4: the third turn fits to the cent, the fourth does not.
	raise, err := facts.NewDraft(facts.KindBudgetRaised, "", facts.BudgetRaised{Add: facts.Spend{USD: 0.1}, By: "ana"})
	require.NoError(t, err)
	_, err = e.rt.Thread(e.actor, "t").Post(ctx, raise, "raise-1")
	require.NoError(t, err)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	usd, _ = spentIn(e, "t")
	require.InDelta(t, 4.0, usd, 1e-9)
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "t"))
}

// A log written before budgets reserved a turn (its system.configured
// records no reserve) folds as it ran: it waited only once what was
// spent reached the budget, so the turn that crossed it ran — and it
// still verifies, and a runtime that reserves resumes it by its rule.
func TestBudgetOldLogFoldsAsItRan(t *testing.T) {
	ctx := context.Background()
	old := newTree(t, nil, readingScript(5), harness.WithoutReserve())
	out, err := old.rt.Thread(old.actor, "t").Start(ctx, "Read the files", budgetSet(t, 0, 2500))
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	require.Contains(t, out.Waits[0].Summary, "is spent (3000)")
	require.Equal(t, 3, countKind(old.log("t"), facts.KindModelTurn))

	// The same store under a runtime that reserves.
	e := newTree(t, old.store, readingScript(5))
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "t"))
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	require.Contains(t, out.Waits[0].Summary, "is spent (3000)")
	require.Equal(t, 3, countKind(e.log("t"), facts.KindModelTurn))
}

// A budget in dollars alone cannot count the turns of a model the price
// table does not price: the thread waits before its first turn and says
// why, and a budget in tokens set beside it lets it go on, bounded.
func TestBudgetInDollarsWithAnUnpricedModel(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, readingScript(5), budgetPrices(), harness.WithModelName("test:unknown"))
	out, err := e.rt.Thread(e.actor, "t").Start(ctx, "Read the files", budgetSet(t, 5, 0))
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	require.Equal(t, fold.WaitBudget, out.Waits[0].Kind)
	require.Contains(t, out.Waits[0].Summary, "its model has no price")
	require.Equal(t, 0, countKind(e.log("t"), facts.KindModelTurn))

	set, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: facts.Spend{USD: 5, Tokens: 3000}, By: "ana", Source: "budget set"})
	require.NoError(t, err)
	_, err = e.rt.Thread(e.actor, "t").Post(ctx, set, "budget-2")
	require.NoError(t, err)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, out.Reason)
	require.Contains(t, out.Waits[0].Summary, "3000 tokens cannot cover")
	require.Equal(t, 3, countKind(e.log("t"), facts.KindModelTurn))
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "t"))
}

// A compaction is a model call too: one due when the budget cannot cover
// the next call is held back with the turn.
func TestBudgetHoldsBackACompaction(t *testing.T) {
	ctx := context.Background()
	window := func(c *harness.Config) { c.ContextWindow = 1200 }
	for _, c := range []struct {
		limit      int64
		compacted  int
		parkedHere bool
	}{
		{limit: 1999, compacted: 0, parkedHere: true},
		{limit: 1_000_000, compacted: 1},
	} {
		e := newTree(t, nil, readingScript(1), window)
		out, err := e.rt.Thread(e.actor, "t").Start(ctx, "Read the file", budgetSet(t, 0, c.limit))
		require.NoError(t, err)
		require.Equal(t, c.compacted, countKind(e.log("t"), facts.KindContextCompacted), "limit %d", c.limit)
		if c.parkedHere {
			require.Equal(t, harness.StatusParked, out.Status, out.Reason)
			require.Equal(t, fold.WaitBudget, out.Waits[0].Kind)
			require.Equal(t, 1, countKind(e.log("t"), facts.KindModelTurn))
		} else {
			require.Equal(t, harness.StatusDone, out.Status, out.Reason)
		}
		require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "t"))
	}
}

// Hostile usage: a server reporting no usage is reckoned at nothing, yet
// a tree that spent its budget still waits (a budget lowered under what
// was spent, here); one reporting counts below zero (which would take
// from what the budget counts) fails the turn as invalid output,
// recording nothing.
func TestBudgetHostileUsage(t *testing.T) {
	ctx := context.Background()
	for _, v := range []harness.TreeBudgetView{
		{Limit: facts.Spend{Tokens: 1000}},
		{Limit: facts.Spend{USD: 1}},
		{Limit: facts.Spend{Tokens: 1000}, Elsewhere: facts.Spend{Tokens: 400}},
	} {
		spent := facts.Spend{USD: 1, Tokens: 1000 - v.Elsewhere.Tokens}
		require.NotEmpty(t, v.Cover(spent, facts.Spend{}, false), "%+v: spent is spent, the next turn reckoned at nothing", v)
		less := facts.Spend{USD: 0.5, Tokens: 500 - v.Elsewhere.Tokens}
		require.Empty(t, v.Cover(less, facts.Spend{}, false), "%+v", v)
	}

	e := newTree(t, nil, `{"text": "unused"}`, budgetPrices(), harness.WithModelName("test:m"))
	negative := modelFunc(func(context.Context, model.Request) (model.Decision, error) {
		return model.Decision{Text: "r1", ToolCalls: []facts.ToolCall{{ID: "r", Name: "read_file", Args: `{"path":"a"}`}},
			Usage: facts.Usage{InputTokens: -1000000}}, nil
	})
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), budgetPrices(), harness.WithModelName("test:m"))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(e.store, harness.Services{Model: negative, Tools: e.tools}, cfg)
	require.NoError(t, err)
	out, err := rt.Thread(e.actor, "t").Start(ctx, "Read", budgetSet(t, 0, 1000))
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status, out.Reason)
	require.Contains(t, out.Reason, "below zero")
	require.Equal(t, 0, countKind(e.log("t"), facts.KindModelTurn))
}
