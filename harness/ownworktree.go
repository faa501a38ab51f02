package harness

import (
	"context"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
)

// A thread configured with Config.OwnWorktree (a worker's root thread)
// works in a worktree of its own, which its system.configured records:
// once that is folded, the thread's services are rooted there (enter),
// as a child's are in the worktree its spawn records (linked). When the
// thread ends — done, failed or stopped — what it left there is
// committed to its branch and the worktree removed, or kept when it did
// not end done (finishOwn), recorded on worktree.finished.

// ownWorktree is the worktree the system.configured of the fold's thread
// records as its own, nil for none (a child's is its spawn's, not this).
func ownWorktreeOf(st *state) (*facts.Worktree, error) {
	l := lineageOf(st.fold)
	if l == nil || l.own.system == nil || l.spawned != nil {
		return nil, nil
	}
	sc, err := facts.Decode[facts.SystemConfigured](*l.own.system)
	if err != nil {
		return nil, fmt.Errorf("thread %s at seq %d: %w", st.id, l.own.system.Seq, err)
	}
	return sc.Worktree, nil
}

// enter roots the thread's services in its own worktree once its
// system.configured, folded in st, records one. A runtime without
// worktrees does not run such a thread at all (ErrNoWorktrees): it would
// act in the workspace.
func (t *Thread) enter(ctx context.Context, st *state) error {
	if t.wt != nil || t.entered {
		return nil
	}
	if l := lineageOf(st.fold); l == nil || l.own.system == nil {
		return nil // not configured yet
	}
	t.entered = true
	w, err := ownWorktreeOf(st)
	if err != nil || w == nil {
		return err
	}
	if !itsBranch(w.Branch, t.id) {
		return fmt.Errorf("thread %s (worktree %s on %s): %w", t.id, w.Path, w.Branch, ErrNotItsWorktree)
	}
	if t.rt.Services.Worktrees == nil {
		return fmt.Errorf("thread %s (worktree %s): %w", t.id, w.Path, ErrNoWorktrees)
	}
	svc, err := t.rt.Services.Worktrees.In(ctx, t.rt.Services, *w)
	if err != nil {
		return fmt.Errorf("thread %s: its worktree %s: %w", t.id, w.Path, err)
	}
	crt := *t.rt
	crt.Services = svc
	t.rt, t.wt, t.own = &crt, w, true
	return nil
}

// finishOwn commits what the thread left in its own worktree to its
// branch and removes the worktree (keeps it when the thread did not end
// done), recording worktree.finished — once for each end: a thread whose
// last fact is already its worktree.finished is left as it is. It
// reports whether it appended.
func (t *Thread) finishOwn(ctx context.Context, st *state, status Status) (bool, error) {
	if !t.own || t.rt.Services.Worktrees == nil || !slices.Contains([]Status{StatusDone, StatusFailed, StatusStopped}, status) {
		return false, nil
	}
	if st.fold.Last().Kind == facts.KindWorktreeFinished {
		return false, nil
	}
	res, err := t.rt.Services.Worktrees.Finish(ctx, *t.wt, t.id, status != StatusDone)
	if cerr := ctx.Err(); cerr != nil {
		return false, cerr
	}
	if err != nil {
		res.Error = err.Error()
	}
	d, err := facts.NewDraft(facts.KindWorktreeFinished, "", res)
	if err != nil {
		return false, err
	}
	return t.appendTo(ctx, st, d, facts.WorktreeFinishedKey(st.fold.Seq()))
}

// itsBranch reports whether branch can be the worktree branch of the
// thread id: "harness/" and the id, for an id a branch name holds as it
// is (one that needed changing is given the benefit of the doubt). A
// fork copies its original's configuration, worktree and all.
func itsBranch(branch, id string) bool {
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return true
		}
	}
	return branch == "harness/"+id
}
