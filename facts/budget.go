package facts

import (
	"errors"
	"fmt"
	"math"
)

// The kinds of a tree's shared budget in money and tokens. The budget is
// the root thread's: budget.set and budget.raised are posted to the root,
// and the runtime tells each child what the tree leaves it with
// budget.shared before it drives the child. A thread whose next model
// turn the budget cannot cover waits for a person (a wait of kind
// "budget"); it does not end.
const (
	// KindBudgetSet: the tree's budget from here on (BudgetSet), posted
	// from outside when a thread starts with one, and when a person (or a
	// settings file lowering it) sets it anew.
	KindBudgetSet Kind = "budget.set"
	// KindBudgetRaised: a person raised the tree's budget by an amount
	// (BudgetRaised): the answer to a budget wait.
	KindBudgetRaised Kind = "budget.raised"
	// KindBudgetShared: what the tree's budget leaves a child (BudgetShared),
	// posted into the child by the runtime that drives its tree, before
	// it drives the child, whenever it changed.
	KindBudgetShared Kind = "budget.shared"
)

func init() {
	register[BudgetSet](KindBudgetSet)
	register[BudgetRaised](KindBudgetRaised)
	register[BudgetShared](KindBudgetShared)
}

// Spend is an amount of money and tokens: a budget's bounds, or what was
// spent. In a bound, 0 is no bound.
type Spend struct {
	// USD is in US dollars, as the price table prices turns.
	USD float64 `msgpack:"usd,omitempty" json:"usd,omitempty"`
	// Tokens counts input and output tokens, as the budget counts them.
	Tokens int64 `msgpack:"tokens,omitempty" json:"tokens,omitempty"`
	// Turns counts model turns. Only a raise carries it (budget.raised):
	// a thread's bound in turns is its configuration's (MaxTurns, the
	// command's --max-turns), grown by the root's raises in turns; a set
	// or a share of the tree's budget has none.
	Turns int64 `msgpack:"turns,omitempty" json:"turns,omitempty"`
}

// IsZero reports whether s is no amount at all.
func (s Spend) IsZero() bool { return s.USD == 0 && s.Tokens == 0 && s.Turns == 0 }

// Validate requires amounts that are numbers ≥ 0.
func (s Spend) Validate() error {
	switch {
	case math.IsNaN(s.USD) || math.IsInf(s.USD, 0) || s.USD < 0:
		return errors.New("usd: want a number of US dollars ≥ 0")
	case s.Tokens < 0:
		return errors.New("tokens: want a number of tokens ≥ 0")
	case s.Turns < 0:
		return errors.New("turns: want a number of model turns ≥ 0")
	}
	return nil
}

// BudgetSet is the payload of budget.set: the tree's bounds from here on,
// replacing any set or raised before.
type BudgetSet struct {
	Limit Spend `msgpack:"limit,omitempty" json:"limit,omitzero"`
	// By is who set it; Source where it came from ("flag", "settings",
	// "project" …), for the record.
	By     string `msgpack:"by,omitempty" json:"by,omitempty"`
	Source string `msgpack:"source,omitempty" json:"source,omitempty"`
}

// Validate requires bounds that are numbers ≥ 0, and none in turns.
func (p BudgetSet) Validate() error {
	if p.Limit.Turns != 0 {
		return errTurnsNotSet
	}
	return p.Limit.Validate()
}

// BudgetRaised is the payload of budget.raised: the tree's bounds grow by
// the amounts Add, By's word. A bound that is none stays none. Add.Turns
// grows the root's bound in model turns (a thread that records
// BudgetReserve.Turns waits on it rather than ending; see BudgetReserve).
type BudgetRaised struct {
	Add Spend  `msgpack:"add,omitempty" json:"add,omitzero"`
	By  string `msgpack:"by,omitempty" json:"by,omitempty"`
}

// Validate requires a raise: amounts ≥ 0, one of them above 0.
func (p BudgetRaised) Validate() error {
	if err := p.Add.Validate(); err != nil {
		return err
	}
	if p.Add.IsZero() {
		return errors.New("a raise adds money, tokens or model turns")
	}
	return nil
}

// BudgetShared is the payload of budget.shared: the tree's bounds (Limit)
// and what the rest of the tree — every thread but this child and its
// own children — had spent when the runtime drove the child (Elsewhere).
// The child's next model turn waits when what it and its children spent,
// with Elsewhere, reaches Limit.
type BudgetShared struct {
	Limit     Spend  `msgpack:"limit,omitempty" json:"limit,omitzero"`
	Elsewhere Spend  `msgpack:"elsewhere,omitempty" json:"elsewhere,omitzero"`
	Root      string `msgpack:"root,omitempty" json:"root,omitempty"`
}

// Validate requires amounts that are numbers ≥ 0, none in turns.
func (p BudgetShared) Validate() error {
	if p.Limit.Turns != 0 || p.Elsewhere.Turns != 0 {
		return errTurnsNotSet
	}
	return errors.Join(p.Limit.Validate(), p.Elsewhere.Validate())
}

// BudgetReserve is recorded on system.configured by a runtime whose
// budget reserves a model turn before it runs: the turn runs only when
// what the tree spent, with the turn's estimate, stays within the
// budget. The estimate is the thread's latest model turn's tokens and
// cost; before its first turn, the prompt's size (its system prompt, tool
// schemas and messages, four bytes a token) at the input price recorded
// here. Priced is false when the price table had no price for the
// thread's model: a budget in dollars alone cannot count its turns.
type BudgetReserve struct {
	Priced bool `msgpack:"priced,omitempty" json:"priced,omitempty"`
	// InputUSD is the model's price of input tokens, in US dollars per
	// million, by Table.
	InputUSD float64 `msgpack:"input_usd,omitempty" json:"input_usd,omitempty"`
	Table    string  `msgpack:"table,omitempty" json:"table,omitempty"`
	// Turns is set by a runtime whose bound in model turns (MaxTurns)
	// waits: when a model turn is due and the thread (with what its
	// children reported) ran its bound, the thread waits for a person on
	// the budget wait, and a raise in turns (budget.raised) lets it go on.
	// Unset — every log written before — the bound ends the thread with
	// budget.exhausted, as it did when it ran.
	Turns bool `msgpack:"turns,omitempty" json:"turns,omitempty"`
	// MaxTurns, with Turns, is the thread's bound in model turns as
	// configured when it started (0: none): the record, not a later
	// process's configuration, decides, so every reader of the log (a
	// listing, a page, a replay) sees the same bound. Raises grow it.
	MaxTurns int `msgpack:"max_turns,omitempty" json:"max_turns,omitempty"`
}

// Validate requires a price that is a number ≥ 0, and a bound in turns
// ≥ 0.
func (r BudgetReserve) Validate() error {
	if math.IsNaN(r.InputUSD) || math.IsInf(r.InputUSD, 0) || r.InputUSD < 0 {
		return errors.New("input_usd: want US dollars per million tokens ≥ 0")
	}
	if r.MaxTurns < 0 {
		return errors.New("max_turns: want a number of model turns ≥ 0")
	}
	return nil
}

// Validate requires counts ≥ 0: a count below zero, from a provider's
// malformed answer, would take from what a budget counts.
func (u Usage) Validate() error {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
		return fmt.Errorf("usage counts below zero: input %d, output %d, cache read %d, cache write %d", u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens)
	}
	return nil
}
