package drive

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
)

// ErrTurnsLowered is a bound in model turns given below the one a thread
// records (or 0, none): a person's word may raise the recorded bound, not
// lower or remove it.
var ErrTurnsLowered = errors.New("a resume may raise but not lower or remove")

// Bounds is a change of the bounds of a tree's budget in money and
// tokens, as a flag or a person's "set" gives it: a nil bound is left as
// recorded, a given one replaces it (0: none).
type Bounds struct {
	USD    *float64
	Tokens *int64
}

// Over is limit with b's given bounds in place of its own.
func (b Bounds) Over(limit facts.Spend) facts.Spend {
	if b.USD != nil {
		limit.USD = *b.USD
	}
	if b.Tokens != nil {
		limit.Tokens = *b.Tokens
	}
	return limit
}

// SetBounds sets the budget of the tree whose root is th (budget.set, by's
// word from source) to the bounds it records with b's in their place.
// With onlyChange, nothing is appended (a zero Posted) when that changes
// nothing. A child is refused with an error wrapping harness.ErrNotRoot
// that names its root: its budget is its tree's.
func SetBounds(ctx context.Context, th *harness.Thread, b Bounds, by, source string, onlyChange bool) (harness.Posted, error) {
	st, err := Inspect(ctx, th)
	if err != nil {
		return harness.Posted{}, err
	}
	if st.Parent != "" {
		return harness.Posted{}, fmt.Errorf("thread %s is a child; its budget is its tree's, set on %s: %w", th.ID(), st.Root, harness.ErrNotRoot)
	}
	var limit facts.Spend
	if st.Budget != nil {
		limit = st.Budget.Limit
	}
	limit = b.Over(limit)
	if onlyChange && st.Budget != nil && st.Budget.Limit == limit {
		return harness.Posted{}, nil
	}
	return SetBudget(ctx, th, limit, by, source)
}

// RaiseTurnsTo makes max, a person's word on a root that records its
// bound in model turns, a raise of that bound to max (budget.raised): the
// log's bound, not a process's flag, is what every reader sees. Nothing
// is appended when th records no bound it waits on (a log from before, a
// child, or no bound: the configuration's is max) or max is the bound. A
// max below the bound, or 0, is an error wrapping ErrTurnsLowered.
func RaiseTurnsTo(ctx context.Context, th *harness.Thread, max int, by string) (harness.Posted, error) {
	st, err := Inspect(ctx, th)
	if err != nil {
		return harness.Posted{}, err
	}
	b := st.View.Budget
	if b == nil || !b.TurnsWait || b.MaxTurns == 0 || max == b.MaxTurns {
		return harness.Posted{}, nil
	}
	if max == 0 || max < b.MaxTurns {
		return harness.Posted{}, fmt.Errorf("thread %s records its bound of %s, which %w", th.ID(), present.Plural(b.MaxTurns, "model turn", "model turns"), ErrTurnsLowered)
	}
	return RaiseBudget(ctx, th, facts.Spend{Turns: int64(max - b.MaxTurns)}, by)
}
