package harness

import (
	"fmt"
	"math"
)

// A root thread's bound in model turns (Config.MaxTurns) waits.
//
// A thread whose first system.configured records a BudgetReserve with
// Turns set (every thread this runtime configures) records its bound
// there (MaxTurns: a later process's configuration does not change it,
// so every reader of the log sees the same), and does not end when it
// ran its bound: its next model turn is not enabled and it waits on the
// budget wait (fold.WaitBudget), as for the tree's budget in money and
// tokens. A person raises the bound by a number of turns
// (budget.raised's Add.Turns, posted to the root) and the thread goes
// on. A log from before records no such Reserve: its bound ends the
// thread with budget.exhausted, as it did when it ran, so an old log
// folds and verifies as it was written.
//
// A child's bound in turns is its delegation's (max_turns the parent's
// model asked, its agent file's, at most what its parent had left): it
// ends the child, which reports to its parent's model as before. The
// person's bound is the root's: a child's turns count against it once
// reported, and the root waits on it. Children that run at once are each
// given at most what the root had left when they were spawned; when one's
// report spends the root's bound, the others go on to their own bounds
// (a log from before stopped them, and ended the root), and the root
// waits once they reported: the tree can pass the root's bound by what
// they spend. (Sharing the bound in turns with the children, as
// budget.shared shares money and tokens, would close that; not done.)

// turnsWait reports whether the thread's bound in turns waits for a
// person rather than ending it: a root thread whose log says so.
func (b *budget) turnsWait() bool {
	return b.next.reserve != nil && b.next.reserve.Turns && !b.tree.child
}

// turnLimit is the thread's bound in model turns: the one its log
// records (BudgetReserve.MaxTurns; in a log from before, the
// configuration's), grown by the raises in turns folded (a root's only);
// 0 is no bound, and a raise does not make one.
func (b *budget) turnLimit() int {
	base := b.maxTurns
	if r := b.next.reserve; r != nil && r.Turns {
		base = r.MaxTurns
	}
	if base <= 0 {
		return 0
	}
	if b.tree.turns > int64(math.MaxInt32)-int64(base) {
		return math.MaxInt32
	}
	return base + int(b.tree.turns)
}

// turnsHold says why the thread's bound in turns holds its next model
// turn, or "" when it does not (or the bound ends the thread instead).
func (b *budget) turnsHold(v BudgetView) string {
	if !b.turnsWait() || v.MaxTurns <= 0 || v.Turns < v.MaxTurns {
		return ""
	}
	turns := fmt.Sprintf("its %d model turns", v.MaxTurns)
	if v.MaxTurns == 1 {
		turns = "its 1 model turn"
	}
	return fmt.Sprintf("the thread ran %s (%d used, its children's counted); raise it by a number of turns or stop", turns, v.Turns)
}
