package drive

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// stateOfTree is the state of th as its tree tr stands: its own view's,
// with the tree's status, and the open requests of the whole tree.
func stateOfTree(ctx context.Context, th *harness.Thread, tr harness.Tree) (State, error) {
	st, err := stateOf(ctx, th.Store(), tr.View)
	if err != nil {
		return st, err
	}
	if len(tr.Children) == 0 {
		return shownRunning(st), nil
	}
	st.Status, st.Reason, st.Retry = tr.Status, tr.Reason, tr.Retry
	if st.Budget != nil {
		// The children still waited on spend from the tree's budget
		// as they go; the view counts only those that reported.
		below := spentBelow(tr.Children)
		st.Budget.Spent.USD += below.USD
		st.Budget.Spent.Tokens += below.Tokens
	}
	own := st.Waits[:0:0]
	for _, w := range st.Waits {
		if w.Kind != fold.WaitChild {
			own = append(own, w)
		}
	}
	st.Waits = own
	for _, ct := range tr.Children {
		if ct.View.Head.Seq == 0 {
			// Not created yet: a resume creates it.
			st.Children = append(st.Children, State{Thread: ct.View.Thread, Status: ct.Status, Parent: st.Thread, Root: st.Root})
			continue
		}
		kid, err := th.Open(ctx, ct.View.Thread)
		if err != nil {
			return st, err
		}
		cst, err := stateOfTree(ctx, kid, ct)
		if err != nil {
			return st, err
		}
		st.Children = append(st.Children, cst)
		for _, w := range cst.Waits {
			if w.Thread == "" {
				w.Thread = cst.Thread
			}
			// The tree says which of a child's requests it waits on (none
			// of a stopped or failed parent's); this only adds what a
			// person needs to answer them.
			if treeWaits(tr, w) {
				st.Waits = append(st.Waits, w)
			}
		}
	}
	return shownRunning(st), nil
}

// shownRunning is st running (StatusRunning) when it is resumable and a
// runtime that holds it runs its actions, or one of its children's.
func shownRunning(st State) State {
	if st.Status != harness.StatusResumable {
		return st
	}
	running := len(st.Running) > 0
	for _, c := range st.Children {
		running = running || c.Status == StatusRunning
	}
	if running {
		st.Status = StatusRunning
	}
	return st
}

// treeWaits reports whether the tree tr waits on the child's request w.
func treeWaits(tr harness.Tree, w Pending) bool {
	return slices.ContainsFunc(tr.Waits, func(tw fold.Wait) bool {
		return tw.Thread == w.Thread && tw.RequestID == w.RequestID && tw.Kind == w.Kind
	})
}

// Target is the thread a pending request belongs to: th, or — a request
// of a child, named by Pending.Thread — the thread of th's tree it names,
// through which an answer is posted.
func Target(ctx context.Context, th *harness.Thread, p Pending) (*harness.Thread, error) {
	if p.Thread == "" || p.Thread == th.ID() {
		return th, nil
	}
	kid, err := th.Open(ctx, p.Thread)
	if err != nil {
		return nil, fmt.Errorf("the request %s of %s: %w", p.RequestID, p.Thread, err)
	}
	return kid, nil
}

// Ref is how a person names a pending request: its id, or for a child's,
// "<thread>/<id>".
func Ref(p Pending) string {
	if p.Thread == "" {
		return p.RequestID
	}
	return p.Thread + "/" + p.RequestID
}

// matches reports whether a request named as a person names it (an id, or
// "<thread>/<id>") is p.
func matches(p Pending, named string) bool {
	if thread, id, ok := strings.Cut(named, "/"); ok {
		return p.Thread == thread && p.RequestID == id
	}
	return p.RequestID == named
}
