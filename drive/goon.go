package drive

import (
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// GoOn is how to go on with a thread that a budget stopped for good (a
// thread recorded before turns waited): fork it at At, the fact before
// its budget.exhausted, as Fork, and resume the fork with a bound of
// MaxTurns turns: twice the thread's own, else twice the default.
type GoOn struct {
	Fork     string
	At       uint64
	MaxTurns int
}

// GoOnOf is how to go on with the thread st, which a budget stopped;
// false for a thread that stands otherwise. defaultTurns is the bound of
// a thread that records none.
func GoOnOf(st State, defaultTurns int) (GoOn, bool) {
	if st.Status != harness.StatusStopped || st.Head.Kind != facts.KindBudgetExhausted || st.Head.Seq < 2 {
		return GoOn{}, false
	}
	g := GoOn{At: st.Head.Seq - 1, MaxTurns: 2 * defaultTurns}
	if b := st.View.Budget; b != nil && b.MaxTurns > 0 {
		g.MaxTurns = 2 * b.MaxTurns
	}
	g.Fork = fmt.Sprintf("%s-at%d", st.Thread, g.At)
	return g, true
}
