package harness

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/fold"
)

// Component is a Part of one's own: fresh returns a new fold component for
// each fold of a thread (stepped through no facts). It folds every fact of
// the thread, as the stock parts do, and may enable transitions of its
// own and wait for a person; the facts its transitions return are
// appended like any other (a kind it declares must be registered with
// facts.Register), and their keys are kept from running twice by the same
// rule. Its transitions are tried in its place among the parts; in a
// nested Infer its keys get that Infer's prefix. Read its view with
// ViewAs.
func Component(fresh func() fold.Component[Services]) Part { return componentPart{fresh} }

type componentPart struct {
	fresh func() fold.Component[Services]
}

func (p componentPart) add(a *assembly, prefix string) {
	a.build = append(a.build, func(*kit) fold.Component[Services] {
		c := p.fresh()
		if prefix != "" {
			return fold.Prefixed(prefix, c)
		}
		return c
	})
}

// ViewAs is the view (fold.Output.View) of the thread's first component
// named name (in a nested Infer, with its prefix: "infer1/name"), as the thread's kept fold has it after catching up with the
// log: the facts folded before are not folded again. A thread with no
// facts is ErrUnknownThread; an actor with no component of that name is
// ErrNoComponent; a view that is not a T is ErrViewType.
func ViewAs[T any](ctx context.Context, th *Thread, name string) (T, error) {
	var zero T
	st, err := th.folded(ctx)
	if err != nil {
		return zero, err
	}
	for _, c := range st.fold.Components() {
		if c.Name() != name {
			continue
		}
		v := unwrapComponent(c).Output().View
		t, ok := v.(T)
		if !ok {
			return zero, fmt.Errorf("thread %s: component %s: its view is a %T, not a %T: %w", th.id, name, v, zero, ErrViewType)
		}
		return t, nil
	}
	return zero, fmt.Errorf("thread %s: %w: %s", th.id, ErrNoComponent, name)
}
