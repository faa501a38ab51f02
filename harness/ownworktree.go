package harness

import (
	"context"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
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
func ownWorktreeOf(st *state) (*facts.Worktree, error) { return ownWorktreeIn(st.id, st.fold) }

// ownWorktreeIn is ownWorktreeOf of a fold of thread id.
func ownWorktreeIn(id string, f *fold.Fold[Services]) (*facts.Worktree, error) {
	l := lineageOf(f)
	if l == nil || l.own.system == nil || l.spawned != nil {
		return nil, nil
	}
	sc, err := facts.Decode[facts.SystemConfigured](*l.own.system)
	if err != nil {
		return nil, fmt.Errorf("thread %s at seq %d: %w", id, l.own.system.Seq, err)
	}
	return sc.Worktree, nil
}

// unfinished reports whether a fold of thread id, done, is of a thread
// whose own worktree is not finished since its latest model turn: a
// Resume would finish it (and may offer its merge), so the thread is
// not done yet.
func unfinished(id string, f *fold.Fold[Services]) (bool, error) {
	w, err := ownWorktreeIn(id, f)
	if err != nil || w == nil {
		return false, err
	}
	done, err := finishedIn(id, f)
	return !done, err
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
	if t.rt.Services.Worktrees == nil {
		return fmt.Errorf("thread %s (worktree %s): %w", t.id, w.Path, ErrNoWorktrees)
	}
	// A fork copies its original's configuration, worktree and all: only
	// the thread the worktree was made for works in it.
	if w.Branch != t.rt.Services.Worktrees.Branch(t.id) {
		return fmt.Errorf("thread %s (worktree %s on %s): %w", t.id, w.Path, w.Branch, ErrNotItsWorktree)
	}
	svc, err := t.rt.Services.Worktrees.In(ctx, t.rt.Services, *w)
	if err != nil {
		return fmt.Errorf("thread %s: its worktree %s: %w", t.id, w.Path, err)
	}
	crt := *t.rt
	crt.Services = svc
	t.home = t.rt
	t.rt, t.wt, t.own = &crt, w, true
	return nil
}

// finishOwn commits what the thread left in its own worktree to its
// branch and removes the worktree (keeps it when the thread did not end
// done), recording worktree.finished — once for each end: a thread whose
// work was finished since its latest model turn (see finished) is left
// as it is. When the thread ended done, its branch changes something and
// its configuration asks (facts.WorktreeMergeAsk, the default), the
// record offers a person the merge of the branch into the workspace
// (facts.WorktreeResult.Offered), which the scheduler then asks as a
// write. It reports whether it appended an offer: the thread has more to
// do (request the merge, wait for a person).
func (t *Thread) finishOwn(ctx context.Context, st *state, status Status) (bool, error) {
	if !t.own || t.rt.Services.Worktrees == nil || !slices.Contains([]Status{StatusDone, StatusFailed, StatusStopped}, status) {
		return false, nil
	}
	if done, err := finished(st); err != nil || done {
		return false, err
	}
	mode, err := mergeMode(st)
	if err != nil {
		return false, err
	}
	res, err := t.rt.Services.Worktrees.Finish(ctx, *t.wt, t.id, status != StatusDone)
	if cerr := ctx.Err(); cerr != nil {
		return false, cerr
	}
	if err != nil {
		res.Error = err.Error()
	}
	res.Offered = status == StatusDone && mode != facts.WorktreeMergeBranch && res.Error == "" && res.Kept == "" &&
		len(res.Changed) > 0 && res.Branch != "" && res.Base != "" && res.Head != ""
	if res.Offered {
		// A thread taken up again after its end, that changed nothing
		// since, is not offered the same change twice.
		again, err := offeredBefore(st, res.Head)
		if err != nil {
			return false, err
		}
		res.Offered = !again
	}
	d, err := facts.NewDraft(facts.KindWorktreeFinished, "", res)
	if err != nil {
		return false, err
	}
	appended, err := t.appendTo(ctx, st, d, facts.WorktreeFinishedKey(st.fold.Seq()))
	if err != nil {
		return false, err
	}
	if res.Kept == "" {
		// The worktree is gone: the thread's services are rooted again
		// as for a thread whose worktree was removed (Worktrees.In),
		// where the offered merge acts in the workspace.
		t.leave()
	}
	return appended && res.Offered, nil
}

// leave undoes enter: the thread's services are made again from the
// runtime's at the next enter.
func (t *Thread) leave() {
	if t.home != nil {
		t.rt = t.home
	}
	t.home, t.wt, t.own, t.entered = nil, nil, false, false
}

// finished reports whether the thread's own worktree was finished since
// its latest model turn: its last fact is its worktree.finished, or the
// call its latest turn waits on is the merge its worktree.finished
// offered, and no message came after that.
func finished(st *state) (bool, error) { return finishedIn(st.id, st.fold) }

// finishedIn is finished of a fold of thread id.
func finishedIn(id string, f *fold.Fold[Services]) (bool, error) {
	if f.Last().Kind == facts.KindWorktreeFinished {
		return true, nil
	}
	cur, err := currentOf(id, f)
	if err != nil {
		return false, err
	}
	var offered uint64
	for _, call := range cur.Calls {
		if call.Offer != nil {
			offered = max(offered, call.TurnSeq)
		}
	}
	if offered == 0 {
		return false, nil
	}
	l := lineageOf(f)
	if l == nil {
		return true, nil
	}
	msg, ok := l.own.LastAnswer(facts.KindUserMessage)
	return !ok || msg.Seq < offered, nil
}

// offeredBefore reports whether an earlier end of the thread offered the
// merge of head.
func offeredBefore(st *state, head string) (bool, error) {
	all, err := readingOf(st.id, st.fold)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(all.Calls, func(c scheduler.Call) bool { return c.Offer != nil && c.Offer.Head == head }), nil
}

// mergeMode is what the thread's configuration says its end does with
// its branch (facts.WorktreeMergeAsk for a log that says nothing).
func mergeMode(st *state) (string, error) {
	l := lineageOf(st.fold)
	if l == nil || l.own.system == nil {
		return facts.WorktreeMergeAsk, nil
	}
	sc, err := facts.Decode[facts.SystemConfigured](*l.own.system)
	if err != nil {
		return "", fmt.Errorf("thread %s at seq %d: %w", st.id, l.own.system.Seq, err)
	}
	if sc.WorktreeMerge == "" {
		return facts.WorktreeMergeAsk, nil
	}
	return sc.WorktreeMerge, nil
}
