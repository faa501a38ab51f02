package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// The tree's shared budget in money and tokens.
//
// A root thread's bounds are what budget.set last set, grown by each
// budget.raised after it. Its children spend from the same bounds: before
// a Resume drives a child (tend), it posts into the child, as
// budget.shared, the bounds and what the rest of the tree has spent —
// the root's own turns, the children that reported, and what the other
// children still waited on have spent so far, read from their logs. A
// child therefore counts against the root's budget as it spends, not
// only once it reported; and the children run one after another, so
// nothing else in the tree spends while one runs.
//
// When what a thread (and its children) spent, with what the rest of the
// tree spent, reaches a bound, its next model turn is not enabled: the
// scheduler lists a wait of kind fold.WaitBudget instead. The thread does
// not end. A person answers by raising the root's budget (budget.raised)
// — the next Resume of the root shares the new bounds with the child
// that waits — or by stopping the tree. The wait is a reading of the log,
// no fact: the log says what was spent and what the bounds are.

// treeBudget is what the budget component reads of the tree's budget.
type treeBudget struct {
	// child is set when the thread is a child (its first fact is
	// thread.spawned): its bounds are only those the tree shared with
	// it, never a budget.set of its own.
	child bool
	// limit is the root's bounds (budget.set, then raises).
	limit facts.Spend
	// shared is the latest budget.shared a child was given.
	shared *facts.BudgetShared
	// raises counts the budget.raised facts folded; turns is what they
	// added in model turns (see turnlimit.go).
	raises int
	turns  int64
	// recorded is set once a budget was set (root) or shared (child).
	recorded bool
	err      error
}

// TreeBudgetView is the tree's budget as a thread of it knows it.
type TreeBudgetView struct {
	// Limit is the tree's bounds (0: no bound); Elsewhere what the rest
	// of the tree — all but this thread and its children — had spent
	// when it was last shared with this thread (0 for the root).
	Limit, Elsewhere facts.Spend `json:",omitzero"`
	// Child is set when the bounds are those shared with a child.
	Child bool `json:",omitempty"`
	// Raises counts the raises the thread folded (the root's).
	Raises int `json:",omitempty"`
	// Root is the root thread a child's bounds were shared from.
	Root string `json:",omitempty"`
	// Recorded is set when the thread records a budget (set, or shared
	// with it), bounded or not.
	Recorded bool `json:",omitempty"`
}

// Bounded reports whether the tree has a budget in money or tokens.
func (v TreeBudgetView) Bounded() bool { return !v.Limit.IsZero() }

func (t *treeBudget) step(f facts.Fact) {
	var err error
	switch f.Kind {
	case facts.KindThreadSpawned:
		t.child = t.child || f.Seq == 1
	case facts.KindBudgetSet:
		var p facts.BudgetSet
		if p, err = facts.Decode[facts.BudgetSet](f); err == nil && !t.child {
			t.limit, t.recorded = p.Limit, true
		}
	case facts.KindBudgetRaised:
		var p facts.BudgetRaised
		if p, err = facts.Decode[facts.BudgetRaised](f); err == nil && !t.child {
			t.raises++
			if p.Add.Turns > math.MaxInt64-t.turns {
				t.turns = math.MaxInt64
			} else {
				t.turns += p.Add.Turns
			}
			// A bound that is none stays none: a raise cannot set one.
			// A sum past what a number holds stays at the most it holds
			// (a wrapped sum would read as no bound at all).
			if t.limit.USD > 0 {
				if sum := t.limit.USD + p.Add.USD; !math.IsInf(sum, 0) && !math.IsNaN(sum) {
					t.limit.USD = sum
				} else {
					t.limit.USD = math.MaxFloat64
				}
			}
			if t.limit.Tokens > 0 {
				if p.Add.Tokens > math.MaxInt64-t.limit.Tokens {
					t.limit.Tokens = math.MaxInt64
				} else {
					t.limit.Tokens += p.Add.Tokens
				}
			}
		}
	case facts.KindBudgetShared:
		var p facts.BudgetShared
		if p, err = facts.Decode[facts.BudgetShared](f); err == nil && t.child {
			t.shared, t.recorded = &p, true
		}
	}
	if err != nil && t.err == nil {
		t.err = fmt.Errorf("seq %d: %w", f.Seq, err)
	}
}

func (t *treeBudget) view() TreeBudgetView {
	v := TreeBudgetView{Limit: t.limit, Child: t.child, Raises: t.raises, Recorded: t.recorded}
	if t.child {
		v.Limit = facts.Spend{}
		if t.shared != nil {
			v.Limit, v.Elsewhere, v.Root = t.shared.Limit, t.shared.Elsewhere, t.shared.Root
		}
	}
	return v
}

// hold says why the tree's budget cannot cover the thread's next model
// turn, or "" when it can (or there is none). A thread whose
// system.configured records a BudgetReserve reserves the turn's estimate
// first (Cover); one from before (no record) waits only once what was
// spent reaches the budget (Hold), as it did when it ran.
func (b *budget) hold() string {
	if b == nil {
		return ""
	}
	v := b.View()
	if why := b.turnsHold(v); why != "" {
		return why
	}
	own := facts.Spend{USD: v.USD, Tokens: v.Tokens}
	if b.next.reserve == nil {
		return v.Tree.Hold(own)
	}
	unpriced := !b.next.reserve.Priced || b.unpriced > 0
	return v.Tree.Cover(own, b.next.estimate(), unpriced)
}

// reservation is what the budget reserves for a thread's next model
// turn, read from its log: the latest model turn's tokens and cost, or,
// before the first, the prompt's size at the recorded input price.
type reservation struct {
	// reserve is the first system.configured's record; nil in a log
	// from before reservations.
	reserve *facts.BudgetReserve
	// prompt counts the bytes of the system prompt, the tool schemas and
	// the messages a person gave before the first model turn.
	prompt int64
	// turned is set once the thread has a model turn of its own; last
	// is the latest one's tokens and cost (set as the budget counts it).
	turned bool
	last   facts.Spend
	err    error
	// configured is set once the first system.configured is read: only
	// it says whether the thread reserves.
	configured bool
}

func (r *reservation) step(f facts.Fact) {
	switch {
	case f.Kind == facts.KindSystemConfigured && !r.configured:
		r.configured = true
		sc, err := facts.Decode[facts.SystemConfigured](f)
		if err != nil {
			r.err = fmt.Errorf("seq %d: %w", f.Seq, err)
			return
		}
		if sc.Reserve == nil {
			return
		}
		res := *sc.Reserve
		r.reserve = &res
		r.prompt += int64(len(sc.Prompt))
		for _, t := range sc.Tools {
			r.prompt += int64(len(t.Name) + len(t.Description) + len(t.Schema))
		}
	case f.Kind == facts.KindUserMessage && !r.turned:
		m, err := facts.Decode[facts.UserMessage](f)
		if err != nil {
			r.err = fmt.Errorf("seq %d: %w", f.Seq, err)
			return
		}
		r.prompt += int64(len(m.Text))
	}
}

// estimate is what the next model turn is reckoned to spend: the latest
// turn's tokens and cost, or the prompt's size, four bytes a token, at
// the recorded input price.
func (r *reservation) estimate() facts.Spend {
	if r.turned {
		return r.last
	}
	tokens := (r.prompt + 3) / 4
	s := facts.Spend{Tokens: tokens}
	if r.reserve != nil && r.reserve.Priced {
		s.USD = float64(tokens) * r.reserve.InputUSD / 1e6
	}
	return s
}

func (r *reservation) snapshot(e *fold.Encoder) {
	e.Bool(r.reserve != nil)
	if r.reserve != nil {
		e.Bool(r.reserve.Priced)
		e.Uint(math.Float64bits(r.reserve.InputUSD))
		e.String(r.reserve.Table)
		e.Bool(r.reserve.Turns)
		e.Int(int64(r.reserve.MaxTurns))
	}
	e.Int(r.prompt)
	e.Bool(r.turned)
	spend(e, r.last)
}

func (r *reservation) restore(d *fold.Decoder) {
	r.reserve = nil
	if d.Bool() {
		r.reserve = &facts.BudgetReserve{Priced: d.Bool(), InputUSD: math.Float64frombits(d.Uint()), Table: d.String(), Turns: d.Bool(), MaxTurns: int(d.Int())}
	}
	r.prompt = d.Int()
	r.turned = d.Bool()
	r.last = readSpend(d)
	r.err = nil
}

// coverSlack is how far past a bound in dollars a sum of prices may land
// and still count as within it: prices are floating-point.
const coverSlack = 1e-9

// Cover says why the tree's budget cannot cover another model turn of a
// thread that (with its children) spent own, the turn reckoned to spend
// next, or "" when it can: what the tree spent with next must stay within
// each bound. A thread whose turns are not priced (unpriced) is not
// covered by a budget in dollars alone: nothing would count them.
func (v TreeBudgetView) Cover(own, next facts.Spend, unpriced bool) string {
	usd, tokens := own.USD+v.Elsewhere.USD, own.Tokens+v.Elsewhere.Tokens
	switch {
	case v.Limit.USD > 0 && v.Limit.Tokens == 0 && unpriced:
		return fmt.Sprintf("the tree's budget of $%.4f cannot count this thread's turns: its model has no price; set a budget in tokens beside it (harness budget), price the model in your settings, or stop", v.Limit.USD)
	case v.Limit.USD > 0 && (usd >= v.Limit.USD || usd+next.USD > v.Limit.USD+coverSlack):
		// Spent is spent, whatever the next turn is reckoned at (a turn
		// that reported no usage is reckoned at nothing).
		return fmt.Sprintf("the tree's budget of $%.4f cannot cover the next turn ($%.4f spent, about $%.4f more); raise it (harness budget) or stop", v.Limit.USD, usd, next.USD)
	case v.Limit.Tokens > 0 && (tokens >= v.Limit.Tokens || tokens+next.Tokens > v.Limit.Tokens):
		return fmt.Sprintf("the tree's budget of %d tokens cannot cover the next turn (%d spent, about %d more); raise it (harness budget) or stop", v.Limit.Tokens, tokens, next.Tokens)
	}
	return ""
}

// Hold says why the tree's budget cannot cover another model turn of a
// thread that (with its children) spent own, or "" when it can.
func (v TreeBudgetView) Hold(own facts.Spend) string {
	usd, tokens := own.USD+v.Elsewhere.USD, own.Tokens+v.Elsewhere.Tokens
	switch {
	case v.Limit.USD > 0 && usd >= v.Limit.USD:
		return fmt.Sprintf("the tree's budget of $%.4f is spent ($%.4f); raise it (harness budget) or stop", v.Limit.USD, usd)
	case v.Limit.Tokens > 0 && tokens >= v.Limit.Tokens:
		return fmt.Sprintf("the tree's budget of %d tokens is spent (%d); raise it (harness budget) or stop", v.Limit.Tokens, tokens)
	}
	return ""
}

// snapshot keeps the tree's budget; one that could not be read keeps
// nothing (Snapshot refuses it first).
func (t *treeBudget) snapshot(e *fold.Encoder) {
	e.Bool(t.child)
	spend(e, t.limit)
	e.Uint(uint64(t.raises))
	e.Int(t.turns)
	e.Bool(t.recorded)
	e.Bool(t.shared != nil)
	if t.shared != nil {
		spend(e, t.shared.Limit)
		spend(e, t.shared.Elsewhere)
		e.String(t.shared.Root)
	}
}

func (t *treeBudget) restore(d *fold.Decoder) {
	t.child = d.Bool()
	t.limit = readSpend(d)
	t.raises = int(d.Uint())
	t.turns = d.Int()
	t.recorded = d.Bool()
	t.shared = nil
	if d.Bool() {
		t.shared = &facts.BudgetShared{Limit: readSpend(d), Elsewhere: readSpend(d), Root: d.String()}
	}
	t.err = nil
}

func spend(e *fold.Encoder, s facts.Spend) {
	e.Uint(math.Float64bits(s.USD))
	e.Int(s.Tokens)
}

func readSpend(d *fold.Decoder) facts.Spend {
	return facts.Spend{USD: math.Float64frombits(d.Uint()), Tokens: d.Int()}
}

// Accept takes the tree's budget facts where they belong: a bound set or
// raised on the root (a child spends the root's budget, and is raised
// through it), what the tree shares with a child on the child only.
func (b *budget) Accept(d facts.Draft) error {
	switch d.Kind {
	case facts.KindBudgetSet, facts.KindBudgetRaised:
		if b.tree.child {
			return fmt.Errorf("%w: the thread is a child: its budget is its tree's, set and raised on the root thread", ErrNotRoot)
		}
		return nil
	case facts.KindBudgetShared:
		if !b.tree.child {
			return errors.New("budget.shared is the runtime's word to a child thread; this thread is no child")
		}
		return nil
	}
	return notYours{}
}

// budgetOf is the budget component of a fold, or nil.
func budgetOf(f *fold.Fold[Services]) *budget {
	for _, c := range f.Components() {
		if b, ok := unwrapComponent(c).(*budget); ok {
			return b
		}
	}
	return nil
}

// share posts into kid, one of the children t waits on (kids, its call
// c), what the tree's budget leaves it — the bounds t knows, and what
// the rest of the tree spent: the tree beyond t (what t was shared), t
// and the children that reported to it, and the other children it waits
// on with theirs — when that is not what kid was last shared. A kid with
// no budget part, or one that ended, is given nothing.
//
// spent keeps, for one tend, what each child spent (by call ref): a child
// spends only while it is driven, and tend forgets its entry then.
func (t *Thread) share(ctx context.Context, st *state, kids []scheduler.Call, c scheduler.Call, kid *Thread, spent map[string]facts.Spend) error {
	b := budgetOf(st.fold)
	if b == nil {
		return nil
	}
	v := b.View()
	if !v.Tree.Recorded {
		return nil // no budget in this tree, ever: nothing to share
	}
	kst, err := kid.load(ctx)
	if err != nil {
		return err
	}
	kb := budgetOf(kst.fold)
	if kb == nil {
		return nil
	}
	if l := lineageOf(kst.fold); l != nil && (l.ended != nil || l.stopped != nil || l.request != nil) {
		return nil
	}
	have := kb.View().Tree
	if !v.Tree.Bounded() && !have.Bounded() {
		return nil
	}
	elsewhere := facts.Spend{USD: v.Tree.Elsewhere.USD + v.USD, Tokens: v.Tree.Elsewhere.Tokens + v.Tokens}
	for _, o := range kids {
		if o.Ref == c.Ref {
			continue
		}
		s, ok := spent[o.Ref]
		if !ok {
			other, err := t.kid(ctx, o, false)
			if err != nil {
				return err
			}
			if other != nil { // one not created yet spent nothing
				if s, err = other.spentBelow(ctx); err != nil {
					return err
				}
			}
			spent[o.Ref] = s
		}
		elsewhere.USD += s.USD
		elsewhere.Tokens += s.Tokens
	}
	root := v.Tree.Root
	if root == "" {
		root = t.id
	}
	if have.Limit == v.Tree.Limit && have.Elsewhere == elsewhere && have.Root == root {
		return nil
	}
	d, err := facts.NewDraft(facts.KindBudgetShared, "", facts.BudgetShared{Limit: v.Tree.Limit, Elsewhere: elsewhere, Root: root})
	if err != nil {
		return err
	}
	_, err = kid.appendTo(ctx, kst, d, "budget-"+strconv.FormatUint(kst.fold.Seq(), 10))
	return err
}

// spentBelow is what the thread and its children spent so far: its
// budget's count (its own turns and the children that reported) and,
// read from their logs, the children it still waits on.
func (t *Thread) spentBelow(ctx context.Context) (facts.Spend, error) {
	st, err := t.load(ctx)
	if err != nil {
		return facts.Spend{}, err
	}
	var s facts.Spend
	if b := budgetOf(st.fold); b != nil {
		v := b.View()
		s = facts.Spend{USD: v.USD, Tokens: v.Tokens}
	}
	if !t.delegates() {
		return s, nil
	}
	kids, err := waited(st.fold)
	if err != nil {
		return s, err
	}
	for _, c := range kids {
		k, err := t.kid(ctx, c, false)
		if err != nil {
			return s, err
		}
		if k == nil {
			continue
		}
		ks, err := k.spentBelow(ctx)
		if err != nil {
			return s, err
		}
		s.USD += ks.USD
		s.Tokens += ks.Tokens
	}
	return s, nil
}

// budgetStale reports whether the tree's bounds the parent's view knows
// are not those its child's view was last shared: a budget raised or set
// since, which a Resume of the parent shares.
func budgetStale(parent, kid View) bool {
	if parent.Budget == nil || kid.Budget == nil {
		return false
	}
	return parent.Budget.Tree.Limit != kid.Budget.Tree.Limit
}
