package harness

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// childrenOf is readingOf(id, f).Children(): the delegations of the whole
// thread that spawned a child, in order — without a reading of every
// other call, which for a long log costs as much as the fold.
func childrenOf(id string, f *fold.Fold[Services]) ([]scheduler.Call, error) {
	var out []scheduler.Call
	for _, c := range f.Components() {
		if c, ok := unwrapComponent(c).(childLister); ok {
			kids, err := c.Children()
			if err != nil {
				return nil, fmt.Errorf("thread %s: %w", id, err)
			}
			out = append(out, kids...)
		}
	}
	// As merge orders the calls of several schedulers.
	slices.SortStableFunc(out, func(x, y scheduler.Call) int { return cmp.Compare(x.TurnSeq, y.TurnSeq) })
	return out, nil
}

// childLister is a component that lists its delegations' children as the
// coding scheduler does.
type childLister interface {
	reader
	Children() ([]scheduler.Call, error)
}

// actionOf is the action id as a reader of the fold finds it: in the
// thread's latest turn (View's Turn), where an action's records come, or
// else in the whole thread's reading. It costs what the latest turn holds
// unless the action is of an earlier turn.
func actionOf(id string, f *fold.Fold[Services], action string) (scheduler.Action, bool, error) {
	cur, err := currentOf(id, f)
	if err != nil {
		return scheduler.Action{}, false, err
	}
	if a, ok := cur.Action(action); ok {
		return a, true, nil
	}
	whole, err := readingOf(id, f)
	if err != nil {
		return scheduler.Action{}, false, err
	}
	a, ok := whole.Action(action)
	return a, ok, nil
}
