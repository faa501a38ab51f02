package harness

import (
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Folded is the thread ID as a fold of its log reads it, at the fold's
// seq: what a verifier or a replay that folds a log itself (not through a
// Thread) asks of it. Thread.View and Thread.Reading are the same
// readings of a thread's own fold.
type Folded struct {
	ID   string
	Fold *fold.Fold[Services]
}

// View is the thread's View as its log stands at the fold's seq.
func (r Folded) View() (View, error) { return viewOf(r.ID, r.Fold) }

// Reading is the coding scheduler's reading of the whole thread.
func (r Folded) Reading() (scheduler.Reading, error) { return readingOf(r.ID, r.Fold) }

// Children is Reading().Children(): the delegations of the whole thread
// that spawned a child, in order — without a reading of every other
// call, which for a long log costs as much as the fold.
func (r Folded) Children() ([]scheduler.Call, error) { return childrenOf(r.ID, r.Fold) }

// Action is the action id as a reader of the fold finds it: in the
// thread's latest turn (View's Turn), where an action's records come, or
// else in the whole thread's reading. It costs what the latest turn holds
// unless the action is of an earlier turn.
func (r Folded) Action(id string) (scheduler.Action, bool, error) { return actionOf(r.ID, r.Fold, id) }
