package drive

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// Budget is a tree's budget in money and tokens as a thread of it knows
// it (see harness's treebudget.go): the bounds (0: none), and what the
// tree spent — the thread and its children, with what the rest of the
// tree had spent when the bounds were last shared with it.
type Budget struct {
	Limit facts.Spend `json:"limit"`
	Spent facts.Spend `json:"spent"`
	// Root is the thread the budget is set and raised on.
	Root string `json:"root"`
}

// budgetState is the tree's budget the view v knows, nil when it knows
// none.
func budgetState(v harness.View) *Budget {
	b := v.Budget
	if b == nil || !b.Tree.Bounded() {
		return nil
	}
	root := b.Tree.Root
	if root == "" {
		root = v.Thread
	}
	return &Budget{Limit: b.Tree.Limit, Root: root,
		Spent: facts.Spend{USD: b.USD + b.Tree.Elsewhere.USD, Tokens: b.Tokens + b.Tree.Elsewhere.Tokens}}
}

// RaiseBudget raises the budget of the tree whose root is th by add, as
// by's word (budget.raised): the answer to a budget wait anywhere in the
// tree, which the next resume of the root shares with its children. th
// must be the root (a child's budget is its tree's: harness.ErrNotRoot).
// The key is derived from the root's head, so a raise a person gives
// once, from what they saw, is appended once however often it is sent.
func RaiseBudget(ctx context.Context, th *harness.Thread, add facts.Spend, by string) (harness.Posted, error) {
	d, err := facts.NewDraft(facts.KindBudgetRaised, "", facts.BudgetRaised{Add: add, By: by})
	if err != nil {
		return harness.Posted{}, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	st, err := Inspect(ctx, th)
	if err != nil {
		return harness.Posted{}, err
	}
	return th.Post(ctx, d, "raise-"+strconv.FormatUint(st.Head.Seq, 10))
}

// SetBudget sets the budget of the tree whose root is th (budget.set):
// the bounds from here on, in place of those set or raised before. A
// settings file may only lower a budget; it is the caller's to check
// (stock.Session.BudgetChange).
func SetBudget(ctx context.Context, th *harness.Thread, limit facts.Spend, by, source string) (harness.Posted, error) {
	d, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: limit, By: by, Source: source})
	if err != nil {
		return harness.Posted{}, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	st, err := Inspect(ctx, th)
	if err != nil {
		return harness.Posted{}, err
	}
	return th.Post(ctx, d, "budget-"+strconv.FormatUint(st.Head.Seq, 10))
}

// answerBudget is a Reply of kind budget: a raise of th's tree, th its
// root, whichever thread of it waits.
func answerBudget(ctx context.Context, th *harness.Thread, r Reply) (Answered, error) {
	p, err := GrowBudget(ctx, th, r.Raise(), r.By)
	return Answered{Request: Pending{Wait: fold.Wait{Kind: fold.WaitBudget, RequestID: "budget"}}, Posted: p}, err
}

// spentBelow is what the children of a tree (not reported yet) and
// theirs spent, as their views count it.
func spentBelow(kids []harness.Tree) facts.Spend {
	var s facts.Spend
	for _, k := range kids {
		if b := k.View.Budget; b != nil {
			s.USD += b.USD
			s.Tokens += b.Tokens
		}
		below := spentBelow(k.Children)
		s.USD += below.USD
		s.Tokens += below.Tokens
	}
	return s
}

// ParseRaise reads an amount a person typed to raise a budget by: terms
// separated by spaces or commas, each "$5" or "5 usd" (US dollars),
// "200000 tokens" (also "200k tokens", "2m tokens") or "3 turns" (model
// turns, the root's bound in turns), a leading "+" allowed. An amount that adds nothing, a negative or non-finite number,
// or a term it cannot read is an error wrapping ErrBadReply.
func ParseRaise(s string) (facts.Spend, error) {
	var out facts.Spend
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	for i := 0; i < len(words); i++ {
		w := strings.TrimPrefix(words[i], "+")
		unit := ""
		switch {
		case strings.HasPrefix(w, "$"):
			w, unit = w[1:], "usd"
		case strings.HasSuffix(w, "$"):
			w, unit = strings.TrimSuffix(w, "$"), "usd"
		case strings.HasSuffix(w, "usd"):
			w, unit = strings.TrimSuffix(w, "usd"), "usd"
		case strings.HasSuffix(w, "tokens"):
			w, unit = strings.TrimSuffix(w, "tokens"), "tokens"
		case strings.HasSuffix(w, "turns"):
			w, unit = strings.TrimSuffix(w, "turns"), "turns"
		}
		if unit == "" && i+1 < len(words) {
			switch words[i+1] {
			case "usd", "$":
				unit, i = "usd", i+1
			case "tokens", "token":
				unit, i = "tokens", i+1
			case "turns", "turn":
				unit, i = "turns", i+1
			}
		}
		switch unit {
		case "usd":
			v, err := strconv.ParseFloat(w, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return facts.Spend{}, fmt.Errorf("%w: %q: want US dollars ≥ 0, such as $5", ErrBadReply, words[i])
			}
			out.USD += v
		case "tokens":
			mult := int64(1)
			switch {
			case strings.HasSuffix(w, "k"):
				w, mult = strings.TrimSuffix(w, "k"), 1000
			case strings.HasSuffix(w, "m"):
				w, mult = strings.TrimSuffix(w, "m"), 1_000_000
			}
			v, err := strconv.ParseInt(w, 10, 64)
			if err != nil || v < 0 || v > math.MaxInt64/mult || out.Tokens > math.MaxInt64-v*mult {
				return facts.Spend{}, fmt.Errorf("%w: %q: want a whole number of tokens ≥ 0, such as 200000 tokens", ErrBadReply, words[i])
			}
			out.Tokens += v * mult
		case "turns":
			v, err := strconv.ParseInt(w, 10, 64)
			if err != nil || v < 0 || out.Turns > math.MaxInt32-v {
				return facts.Spend{}, fmt.Errorf("%w: %q: want a whole number of model turns ≥ 0, such as 5 turns", ErrBadReply, words[i])
			}
			out.Turns += v
		default:
			return facts.Spend{}, fmt.Errorf("%w: %q: say $ for dollars, tokens for tokens or turns for model turns, such as $5, 200000 tokens or 5 turns", ErrBadReply, words[i])
		}
	}
	if err := (facts.BudgetRaised{Add: out}).Validate(); err != nil {
		return facts.Spend{}, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	return out, nil
}

// GrowBudget is a person's "spend this much more" on th's tree, th its
// root: a raise of its bounds, in money, tokens and model turns
// (RaiseBudget) — and, for tokens added to a
// budget in dollars alone (which cannot count a model with no price), a
// bound in tokens set beside it (budget.set) at what the tree spent plus
// the tokens, the dollars raised with it, and the turns raised beside
// that (budget.raised) in the same append: a crash leaves both facts or
// neither, so a retry never adds twice. A raise never adds a bound in
// dollars that was not there: that would narrow what the person widened.
func GrowBudget(ctx context.Context, th *harness.Thread, add facts.Spend, by string) (harness.Posted, error) {
	st, err := Inspect(ctx, th)
	if err != nil {
		return harness.Posted{}, err
	}
	if err := noBound(st, add); err != nil {
		return harness.Posted{}, err
	}
	b := st.Budget
	if b == nil || add.Tokens == 0 || b.Limit.Tokens > 0 || b.Limit.USD == 0 {
		return RaiseBudget(ctx, th, add, by)
	}
	if err := (facts.BudgetRaised{Add: add}).Validate(); err != nil {
		return harness.Posted{}, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	limit := facts.Spend{USD: b.Limit.USD + add.USD, Tokens: b.Spent.Tokens + add.Tokens}
	if limit.Tokens < add.Tokens { // wrapped
		limit.Tokens = math.MaxInt64
	}
	set, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: limit, By: by, Source: "raise"})
	if err != nil {
		return harness.Posted{}, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	// The keys are those SetBudget and RaiseBudget derive, both from the
	// head the person saw.
	seq := strconv.FormatUint(st.Head.Seq, 10)
	if add.Turns == 0 {
		return th.Post(ctx, set, "budget-"+seq)
	}
	// A set carries no turns: they are raised beside it.
	turns, err := facts.NewDraft(facts.KindBudgetRaised, "", facts.BudgetRaised{Add: facts.Spend{Turns: add.Turns}, By: by})
	if err != nil {
		return harness.Posted{}, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	return th.Post(ctx, set, "budget-"+seq, harness.Ingress{Draft: turns, Key: "raise-" + seq})
}

// noBound refuses a raise of the tree's budget in a bound it does not
// have (ErrNoBound, wrapping ErrBadReply): dollars where it has no bound
// in dollars; tokens where it has neither (beside a bound in dollars
// alone, tokens set one: see GrowBudget). Such a raise would be recorded
// and change nothing. A raise in turns is not refused here.
func noBound(st State, add facts.Spend) error {
	has := BudgetBounds(st)
	return refuseRaise(st.Root, append(has, BoundTurns), describeBounds(st, has), add)
}

// refuseRaise is noBound of a budget that has the bounds has, said; root
// is the thread it is raised on ("": the tree's).
func refuseRaise(root string, has []string, said string, add facts.Spend) error {
	var none []string
	if add.USD > 0 && !slices.Contains(has, BoundUSD) {
		none = append(none, "dollars")
	}
	if add.Tokens > 0 && !slices.Contains(has, BoundTokens) {
		none = append(none, "tokens")
	}
	if add.Turns > 0 && !slices.Contains(has, BoundTurns) {
		none = append(none, "model turns")
	}
	if len(none) == 0 {
		return nil
	}
	in := strings.Join(none, " or ")
	whose := "the tree's budget"
	if root != "" {
		whose = "the budget of " + root
	}
	return &plainError{err: fmt.Errorf("%w: %w", ErrBadReply, ErrNoBound),
		msg: fmt.Sprintf("%s has no bound in %s: a raise in %s would change nothing; %s", whose, in, in, said)}
}

// The bounds a raise of a budget grows (BudgetBounds, Pending.Raise).
const (
	BoundUSD    = "usd"
	BoundTokens = "tokens"
	BoundTurns  = "turns"
)

// BudgetBounds are the bounds of st's tree a raise can grow: dollars and
// tokens where its budget has them — tokens also beside a budget in
// dollars alone, which a raise in tokens bounds (GrowBudget) — and model
// turns where the thread has a bound in them.
func BudgetBounds(st State) []string {
	var has []string
	if b := st.Budget; b != nil {
		if b.Limit.USD > 0 {
			has = append(has, BoundUSD)
		}
		if b.Limit.Tokens > 0 || b.Limit.USD > 0 {
			has = append(has, BoundTokens)
		}
	}
	if v := st.View.Budget; v != nil && v.MaxTurns > 0 {
		has = append(has, BoundTurns)
	}
	return has
}

// describeBounds says which bounds the budget has, and how to raise them.
func describeBounds(st State, has []string) string {
	var said []string
	if b := st.Budget; b != nil && b.Limit.USD > 0 {
		said = append(said, fmt.Sprintf("$%.4f", b.Limit.USD))
	}
	if b := st.Budget; b != nil && b.Limit.Tokens > 0 {
		said = append(said, fmt.Sprintf("%d tokens", b.Limit.Tokens))
	}
	if v := st.View.Budget; v != nil && slices.Contains(has, BoundTurns) {
		said = append(said, fmt.Sprintf("%d model turns", v.MaxTurns))
	}
	if len(said) == 0 {
		return "it has no bound a raise can grow: set one instead"
	}
	return "it is bounded by " + strings.Join(said, " and ")
}

// raiseOffer is what the hint of a budget wait offers to raise: turns
// when the thread ran its bound in them, else the bounds of the tree's
// budget in dollars and tokens (BudgetBounds); nil when there is none.
func raiseOffer(v harness.View) []string {
	if b := v.Budget; b != nil && b.TurnsWait && b.MaxTurns > 0 && b.Turns >= b.MaxTurns {
		return []string{BoundTurns}
	}
	return slices.DeleteFunc(BudgetBounds(State{Budget: budgetState(v)}), func(s string) bool { return s == BoundTurns })
}

// boundWords names bounds for a person: "tokens or model turns".
func boundWords(bounds []string) string {
	var in []string
	for _, b := range bounds {
		in = append(in, map[string]string{BoundUSD: "dollars", BoundTokens: "tokens", BoundTurns: "model turns"}[b])
	}
	return strings.Join(in, " or ")
}
