package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// A tree of threads: a parent whose model delegated (see Delegate) and
// the children it spawned, each its own thread with its own log, actor,
// tools and budget.
//
// The parent waits on a child as it waits for a person: its scheduler
// lists a wait of kind fold.WaitChild and enables nothing for the call.
// A Resume of the parent that finds nothing of its own to run drives the
// children it waits on (tend), one after another in call order — they
// share the workspace, so that the runtime observes each action alone:
//
//  1. the child is created, if it is not yet: its first fact,
//     thread.spawned, names the parent's child.spawned fact and its hash,
//     and its second is its task; both in one append at seq 0, so a child
//     exists completely or not at all, and a second creation finds it;
//  2. the child is resumed (its own children with it);
//  3. a child that ended — done, stopped, or failed for good — records
//     thread.ended (its key is "end": once), and its outcome is posted
//     into the parent as child.reported under a key derived from the
//     child's id and that final fact's seq and hash: once. Reports are
//     posted in call order.
//
// A crash anywhere in between leaves one of these states, and the next
// Resume takes it from there: one child, one end, one report. A child
// that waits for a person parks the tree: the parent's Outcome carries
// the child's requests (fold.Wait.Thread names the child), and an answer
// posted to the child — through the parent's tree (Thread.Open) or
// directly — lets the next Resume of the parent go on.
//
// A parent that stops (its budget spent, a person's thread.stopped, a
// defect) stops the children it waits on: thread.stopped in each child,
// then its end and its report, so both sides record it.

// lineage is the component that reads a thread's place in a tree: a
// child's spawn (its first fact), its end, and a stop. Compose puts it
// first in every actor, so its stop is the one a projection reports.
type lineage struct {
	seen       uint64
	spawned    *facts.ThreadSpawned
	ended      *facts.ThreadEnded
	endedSeq   uint64
	stopped    *facts.ThreadStopped
	stoppedSeq uint64
	// request is the first stop.requested, at requestSeq: the thread is
	// stopped from there, and thread.stopped carries it out.
	request    *facts.StopRequested
	requestSeq uint64
	err        error
	// own is what the thread records of itself (see own.go).
	own own
}

// Lineage is the lineage component's view: a child's link to its parent
// and its end, and a stop.
type Lineage struct {
	// Spawn is the thread's first fact when it is a child; nil otherwise.
	Spawn *facts.ThreadSpawned
	// Ended is a child's outcome once it ended, at EndedSeq.
	Ended    *facts.ThreadEnded
	EndedSeq uint64
	// Stopped is the stop a person or a parent posted, at StoppedSeq.
	Stopped    *facts.ThreadStopped
	StoppedSeq uint64
	// Requested is the stop a person asked for while another process
	// drove the thread, at RequestedSeq; Stopped, once set, carries it
	// out (see Thread.Stop).
	Requested    *facts.StopRequested
	RequestedSeq uint64
}

func (l *lineage) Name() string { return "lineage" }

func (l *lineage) Step(f facts.Fact) error {
	l.seen = f.Seq
	l.own.step(f)
	var err error
	switch f.Kind {
	case facts.KindThreadSpawned:
		if f.Seq == 1 {
			p, derr := facts.Decode[facts.ThreadSpawned](f)
			l.spawned, err = &p, derr
		}
	case facts.KindThreadEnded:
		if l.ended == nil {
			p, derr := facts.Decode[facts.ThreadEnded](f)
			l.ended, l.endedSeq, err = &p, f.Seq, derr
		}
	case facts.KindThreadStopped:
		if l.stopped == nil {
			p, derr := facts.Decode[facts.ThreadStopped](f)
			l.stopped, l.stoppedSeq, err = &p, f.Seq, derr
		}
	case facts.KindStopRequested:
		if l.request == nil {
			p, derr := facts.Decode[facts.StopRequested](f)
			l.request, l.requestSeq, err = &p, f.Seq, derr
		}
	}
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("lineage: seq %d: %w", f.Seq, err)
	}
	return nil
}

func (l *lineage) view() Lineage {
	return Lineage{Spawn: l.spawned, Ended: l.ended, EndedSeq: l.endedSeq, Stopped: l.stopped, StoppedSeq: l.stoppedSeq,
		Requested: l.request, RequestedSeq: l.requestSeq}
}

// Output stops a child that ended failed or stopped, and a stopped
// thread, or one whose stop was asked for: nothing more runs in any.
func (l *lineage) Output() fold.Output[Services] {
	out := fold.Output[Services]{View: l.view()}
	switch {
	case l.err != nil:
		out.Stop = &fold.Stop{Status: fold.StatusFailed, Reason: l.err.Error()}
	case l.ended != nil && l.ended.Status != facts.EndDone:
		reason := "ended " + string(l.ended.Status)
		if l.ended.Reason != "" {
			reason += ": " + l.ended.Reason
		}
		status := fold.StatusStopped
		if l.ended.Status == facts.EndFailed {
			status = fold.StatusFailed
		}
		out.Stop = &fold.Stop{Status: status, Reason: reason}
	case l.stopped != nil:
		out.Stop = &fold.Stop{Status: fold.StatusStopped, Reason: stoppedReason(*l.stopped)}
	case l.request != nil:
		out.Stop = &fold.Stop{Status: fold.StatusStopped, Reason: stoppedReason(facts.ThreadStopped(*l.request))}
	}
	return out
}

func stoppedReason(p facts.ThreadStopped) string {
	s := "stopped"
	if p.By != "" {
		s += " by " + p.By
	}
	if p.Reason != "" {
		s += ": " + p.Reason
	}
	return s
}

// notYours is what the lineage says of a fact that is another
// component's to take; it prints as nothing.
type notYours struct{}

func (notYours) Error() string { return "" }
func (notYours) Unwrap() error { return fold.ErrNotAddressed }

// Accept refuses what a child or an ended thread cannot take: a message
// after a child's task, anything after its end, a second stop.
func (l *lineage) Accept(d facts.Draft) error {
	if l.ended != nil {
		return fmt.Errorf("the thread ended (%s) at seq %d and reported to its parent: it takes nothing more", l.ended.Status, l.endedSeq)
	}
	switch d.Kind {
	case facts.KindUserMessage:
		if l.spawned != nil && d.Cause != facts.IngressCause(StartKey) {
			return fmt.Errorf("the thread is a child of %s: its one message is its task, and it reports to its parent", l.spawned.Parent)
		}
	case facts.KindThreadSpawned:
		if l.seen != 0 {
			return errors.New("a thread.spawned is a child's first fact")
		}
		return nil
	case facts.KindThreadEnded:
		if l.spawned == nil {
			return errors.New("the thread is no child: it has no parent to report to")
		}
		return nil
	case facts.KindThreadStopped, facts.KindStopRequested:
		if l.stopped != nil {
			return fmt.Errorf("the thread was stopped at seq %d", l.stoppedSeq)
		}
		return nil
	case facts.KindWorktreeFinished:
		return l.ownWorktree(facts.Fact{Kind: d.Kind, Data: d.Data})
	}
	return notYours{}
}

// Check refuses, for the verifier, a fact that cannot come where it is:
// anything after a child's end, a spawn record that is not a first fact.
func (l *lineage) Check(f facts.Fact) error {
	switch {
	case l.ended != nil:
		return fmt.Errorf("the thread ended at seq %d: nothing follows a child's thread.ended", l.endedSeq)
	case f.Kind == facts.KindThreadSpawned && (f.Seq != 1 || f.Cause != facts.IngressCause(facts.SpawnKey)):
		return fmt.Errorf("a thread.spawned is a child's first fact, with cause %s", facts.IngressCause(facts.SpawnKey))
	case f.Kind == facts.KindThreadEnded && (l.spawned == nil || f.Cause != facts.IngressCause(facts.EndKey)):
		return fmt.Errorf("a thread.ended ends a child thread, with cause %s", facts.IngressCause(facts.EndKey))
	case f.Kind == facts.KindWorktreeFinished:
		if !strings.HasPrefix(f.Cause, facts.IngressCause(facts.WorktreeFinishedKey(0)[:len("worktree-finished/")])) {
			return fmt.Errorf("a worktree.finished is posted by the runtime, with cause %s", facts.IngressCause("worktree-finished/SEQ"))
		}
		return l.ownWorktree(f)
	}
	return nil
}

// ownWorktree refuses a worktree.finished (f) in a thread whose
// configuration records no worktree of its own, and one that offers the
// merge of a branch, or from a base, other than that worktree's: an
// offer names the thread's own work.
func (l *lineage) ownWorktree(f facts.Fact) error {
	if l.spawned != nil || l.own.system == nil {
		return errors.New("a worktree.finished ends the work of a thread configured with a worktree of its own")
	}
	sc, err := facts.Decode[facts.SystemConfigured](*l.own.system)
	if err != nil {
		return err
	}
	w := sc.Worktree
	if w == nil {
		return errors.New("a worktree.finished ends the work of a thread configured with a worktree of its own")
	}
	p, err := facts.Decode[facts.WorktreeResult](f)
	if err != nil {
		return err
	}
	if p.Offered && (p.Branch != w.Branch || p.Base != w.Base) {
		return fmt.Errorf("a worktree.finished offers the merge of branch %s from %.12s, not the thread's own worktree's (%s from %.12s)", p.Branch, p.Base, w.Branch, w.Base)
	}
	return nil
}

// CheckEnd accepts any end.
func (l *lineage) CheckEnd() error { return nil }

// lineageOf is the lineage component of a fold, or nil.
func lineageOf(f *fold.Fold[Services]) *lineage {
	for _, c := range f.Components() {
		if l, ok := unwrapComponent(c).(*lineage); ok {
			return l
		}
	}
	return nil
}

// waited are the delegations of a fold's latest turn whose child has not
// reported, in call order.
func waited(f *fold.Fold[Services]) ([]scheduler.Call, error) {
	var r scheduler.Reading
	for _, c := range f.Components() {
		if c, ok := unwrapComponent(c).(reader); ok {
			cur, err := c.Current()
			if err != nil {
				return nil, err
			}
			r = merge(r, cur)
		}
	}
	var out []scheduler.Call
	for _, c := range r.Calls {
		if c.Child != nil && c.Child.Waiting() {
			out = append(out, c)
		}
	}
	return out, nil
}

// delegates reports whether the thread's actor can drive children.
func (t *Thread) delegates() bool { return t.actor.spec != nil && t.actor.spec.delegate != nil }

// tend is called by Resume when nothing of the thread's own can run. It
// drives the children the thread waits on (see the comment at the top of
// this file), stopping them instead when the thread stopped, and reports
// whether it posted a report (the thread moved: project again). When it
// did not, a parked tree's children's requests are in out.Waits, and out
// says a child's step limit or retryable failure (out.Status set).
func (t *Thread) tend(ctx context.Context, st *state, p fold.Projection[Services], out *Outcome) (bool, error) {
	if !t.delegates() {
		return false, nil
	}
	kids, err := waited(st.fold)
	if err != nil || len(kids) == 0 {
		return false, err
	}
	moved, blocked := false, false
	var waits []fold.Wait
	spent := map[string]facts.Spend{} // what each child spent, for share
	for _, c := range kids {
		kid, err := t.kid(ctx, c, true)
		if err != nil {
			return moved, err
		}
		if p.Stop != nil {
			// The thread stopped: so do the children it waits on.
			if err := kid.stop(ctx, "parent "+t.id, p.Stop.Reason); err != nil {
				return moved, err
			}
		}
		// While a child runs, a stop of this thread asked for elsewhere
		// (see Thread.Stop) cuts it off as a caller's cancel would: what
		// it runs is recorded as interrupted, in the child.
		if p.Stop == nil {
			// What the tree's budget leaves the child, as the tree
			// spent it so far (see treebudget.go).
			if err := t.share(ctx, st, kids, c, kid, spent); err != nil {
				return moved, fmt.Errorf("child %s of %s: %w", kid.id, t.id, err)
			}
		}
		kctx, unwatch := ctx, func() bool { return false }
		if p.Stop == nil {
			kctx, unwatch = t.rt.watchStop(ctx, t.id, st.fold.Seq())
		}
		kout, err := kid.Resume(kctx)
		delete(spent, c.Ref)    // it may have spent
		out.Steps += kout.Steps // this call ran them
		if unwatch() && ctx.Err() == nil {
			// Fold the stop: the thread is stopped, and its next look
			// records it and stops the children.
			return true, t.rt.catchUp(ctx, st)
		}
		if err != nil && !errors.Is(err, ErrDefect) {
			return moved, fmt.Errorf("child %s of %s: %w", kid.id, t.id, err)
		}
		if kout.Status == StatusStepLimit {
			steps := "s"
			if kout.Steps == 1 {
				steps = ""
			}
			out.Status, out.Reason = StatusStepLimit, fmt.Sprintf("child %s ran %d step%s; resume to go on", kid.id, kout.Steps, steps)
			return false, nil
		}
		v, err := kid.View(ctx)
		if err != nil {
			return moved, err
		}
		switch {
		case endable(v):
			if err := kid.end(ctx); err != nil {
				return moved, err
			}
			if !blocked {
				posted, err := t.report(ctx, st, c, kid)
				if err != nil {
					return moved, err
				}
				moved = moved || posted
				continue
			}
		case v.Status == StatusFailed:
			// A failure a resume tries again (a model turn): the tree
			// waits for a person's resume, as a thread of its own would.
			out.Status, out.Reason = StatusFailed, fmt.Sprintf("child %s %s", kid.id, v.Reason)
		default:
			for _, w := range kout.Waits {
				if w.Thread == "" {
					w.Thread = kid.id
				}
				waits = append(waits, w)
			}
		}
		blocked = true
	}
	if moved {
		out.Status, out.Reason = "", ""
		return true, nil
	}
	if out.Status == "" && p.Stop == nil {
		out.Waits = waits
	}
	return false, nil
}

// answerable are the waits of a parked thread that an Outcome lists,
// given the waits of its children (kids, each naming its thread): a
// wait for a child (fold.WaitChild), which nobody can answer, is left out
// when the child's own requests stand for it; one whose child lists
// nothing (it runs elsewhere) stays, so that a parked outcome names what
// it waits on.
func answerable(own, kids []fold.Wait) []fold.Wait {
	var out []fold.Wait
	for _, w := range own {
		if w.Kind == fold.WaitChild && slices.ContainsFunc(kids, func(k fold.Wait) bool {
			return k.Thread == w.RequestID || strings.HasPrefix(k.Thread, w.RequestID+".")
		}) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// endable reports whether a child's view is an end: done, stopped, or
// failed for good — or already recorded as ended.
func endable(v View) bool {
	if v.Lineage.Ended != nil {
		return true
	}
	switch v.Status {
	case StatusDone, StatusStopped:
		return true
	case StatusFailed:
		return v.Retry == ""
	}
	return false
}

// kid returns the child thread a delegation of t spawned, creating it
// first when create is set and it does not exist yet (nil, nil when it
// does not and create is not set). Its runtime is t's, with the child's
// tools.
func (t *Thread) kid(ctx context.Context, c scheduler.Call, create bool) (*Thread, error) {
	id := c.Child.ID()
	if k := t.kids[id]; k != nil {
		prev := k.rt.Services
		*k.rt = *t.rt
		k.rt.Services.Tools = prev.Tools
		if k.wt != nil { // its services are rooted in its worktree
			k.rt.Services.Observer, k.rt.Services.Workspace, k.rt.Services.Ledger = prev.Observer, prev.Workspace, prev.Ledger
		}
		return k, nil
	}
	f, err := thread.ReadAt(ctx, t.rt.Store, t.id, c.Child.SpawnedSeq)
	if err != nil {
		return nil, err
	}
	sp := c.Child.Spawned
	spawn := facts.ThreadSpawned{Parent: t.id, Seq: f.Seq, Hash: f.Hash().String(), Key: f.Cause,
		CallID: c.Ref, Task: sp.Task, Tools: sp.Tools, MaxTurns: sp.MaxTurns, MaxTokens: sp.MaxTokens, Agent: sp.Agent,
		Worktree: sp.Worktree}
	have, ok, err := thread.SpawnOf(ctx, t.rt.Store, id)
	switch {
	case err != nil:
		return nil, err
	case !ok && !create:
		if _, err := t.rt.Store.Head(ctx, id); errors.Is(err, thread.ErrNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("thread %s, the child %s spawned at seq %d, is another thread, which %s did not spawn (a fork or rerun named so): %w", id, t.id, f.Seq, t.id, ErrNotChild)
	case !ok:
		if have, err = createChild(ctx, t.rt.Store, id, spawn); err != nil {
			return nil, err
		}
	}
	if have.Parent != spawn.Parent || have.Seq != spawn.Seq || have.Hash != spawn.Hash || have.Key != spawn.Key {
		return nil, fmt.Errorf("thread %s names its spawn at seq %d of %s, not the spawn at seq %d of %s that names it: %w",
			id, have.Seq, have.Parent, spawn.Seq, spawn.Parent, ErrNotChild)
	}
	// have is the spawn t's log records (read above): the link holds.
	k, err := t.linked(ctx, id, have)
	if err != nil {
		return nil, err
	}
	if t.kids == nil {
		t.kids = map[string]*Thread{}
	}
	t.kids[id] = k
	return k, nil
}

// createChild appends a child's first facts — thread.spawned and its task
// — in one append to a thread with none. A child created first (by a
// runtime that crashed after, or one racing this) is read back instead.
func createChild(ctx context.Context, store thread.Store, id string, spawn facts.ThreadSpawned) (facts.ThreadSpawned, error) {
	first, err := facts.NewDraft(facts.KindThreadSpawned, facts.IngressCause(facts.SpawnKey), spawn)
	if err != nil {
		return spawn, err
	}
	task, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(StartKey), facts.UserMessage{Text: spawn.Task})
	if err != nil {
		return spawn, err
	}
	_, err = store.Append(ctx, id, 0, first, task)
	switch {
	case err == nil:
		return spawn, nil
	case errors.Is(err, thread.ErrConflict), errors.Is(err, thread.ErrDuplicateCause):
		have, ok, rerr := thread.SpawnOf(ctx, store, id)
		if rerr != nil {
			return spawn, rerr
		}
		if !ok {
			return spawn, fmt.Errorf("create child %s of %s: the id is taken by a thread %s did not spawn (a fork or rerun named so, or a thread started with that id): %w",
				id, spawn.Parent, spawn.Parent, ErrNotChild)
		}
		return have, nil
	}
	return spawn, fmt.Errorf("create child %s of %s: %w", id, spawn.Parent, err)
}

// stop posts thread.stopped to the thread, by and for the reason given,
// unless it ended or was stopped already.
func (t *Thread) stop(ctx context.Context, by, reason string) error {
	d, err := facts.NewDraft(facts.KindThreadStopped, "", facts.ThreadStopped{By: by, Reason: reason})
	if err != nil {
		return err
	}
	st, err := t.load(ctx)
	if err != nil {
		return err
	}
	if l := lineageOf(st.fold); l != nil && (l.ended != nil || l.stopped != nil) {
		return nil
	}
	_, err = t.appendIngress(ctx, d, "stop")
	if errors.Is(err, fold.ErrRefused) {
		return nil // ended or stopped meanwhile
	}
	return err
}

// end records the child's outcome as its last fact (thread.ended, key
// "end"), holding the thread: once, and only when its view is an end.
func (t *Thread) end(ctx context.Context) error {
	held, release, err := Hold(ctx, t.rt.Store, t.id)
	if err != nil {
		return fmt.Errorf("end child %s: %w", t.id, err)
	}
	defer release()
	st, err := t.load(held)
	if err != nil {
		return err
	}
	if _, ok := st.fold.Used(facts.IngressCause(facts.EndKey)); ok {
		return nil
	}
	v, err := viewOf(t.id, st.fold)
	if err != nil {
		return err
	}
	te := facts.ThreadEnded{Reason: v.Reason, Result: lastText(st.fold)}
	switch {
	case !endable(v):
		return fmt.Errorf("end child %s: it is %s, not done, stopped or failed for good", t.id, v.Status)
	case v.Status == StatusDone:
		te.Status = facts.EndDone
	case v.Status == StatusStopped:
		te.Status = facts.EndStopped
	default:
		te.Status = facts.EndFailed
	}
	if v.Budget != nil {
		te.Turns, te.Tokens, te.USD = v.Budget.Turns, v.Budget.Tokens, v.Budget.USD
	} else {
		te.Turns = v.Turn.Turns
	}
	if w := t.wt; w != nil && t.rt.Services.Worktrees != nil {
		// What the child left in its worktree goes to its branch; the
		// worktree is removed, or kept when the child did not finish.
		res, err := t.rt.Services.Worktrees.Finish(held, *w, t.id, te.Status != facts.EndDone)
		if cerr := held.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			res.Error = err.Error()
		}
		te.Worktree = &res
	}
	d, err := facts.NewDraft(facts.KindThreadEnded, "", te)
	if err != nil {
		return err
	}
	_, err = t.appendIngress(held, d, facts.EndKey)
	return err
}

// report posts a child's outcome, read from its thread.ended, into the
// parent whose Resume state is st. It reports whether it appended.
func (t *Thread) report(ctx context.Context, st *state, c scheduler.Call, kid *Thread) (bool, error) {
	kst, err := kid.load(ctx)
	if err != nil {
		return false, err
	}
	last := kst.fold.Last()
	if last.Kind != facts.KindThreadEnded {
		return false, fmt.Errorf("report child %s: its last fact is %s at seq %d, not its thread.ended", kid.id, last.Kind, last.Seq)
	}
	te, err := facts.Decode[facts.ThreadEnded](last)
	if err != nil {
		return false, err
	}
	hash := last.Hash().String()
	rep := facts.ChildReported{Child: kid.id, CallID: c.Ref, Seq: last.Seq, Hash: hash, Status: te.Status,
		Reason: te.Reason, Result: te.Result, Turns: te.Turns, Tokens: te.Tokens, USD: te.USD, Worktree: te.Worktree}
	d, err := facts.NewDraft(facts.KindChildReported, "", rep)
	if err != nil {
		return false, err
	}
	return t.appendTo(ctx, st, d, facts.ReportKey(kid.id, last.Seq, hash))
}

// appendIngress appends d to the thread under the ingress key, as Post
// does, for the kinds only the runtime posts (a child's end, a stop).
func (t *Thread) appendIngress(ctx context.Context, d facts.Draft, key string) (bool, error) {
	st, err := t.load(ctx)
	if err != nil {
		return false, err
	}
	return t.appendTo(ctx, st, d, key)
}

// appendTo appends d under the ingress key at the head of the fold st,
// once: a key already used appends nothing (false), a fact the fold
// refuses is an error wrapping fold.ErrRefused, and another writer going
// first is folded and decided again.
func (t *Thread) appendTo(ctx context.Context, st *state, d facts.Draft, key string) (bool, error) {
	d.Cause = facts.IngressCause(key)
	for {
		// Cause, not Used: a restored fold whose cause index fails must
		// say so, not append again and again against a store that knows
		// the cause.
		if _, ok, err := st.fold.Cause(d.Cause); err != nil {
			return false, fmt.Errorf("%s to %s: %w", d.Kind, t.id, err)
		} else if ok {
			return false, nil
		}
		if err := st.fold.Accept(d); err != nil {
			return false, fmt.Errorf("%s to %s: %w", d.Kind, t.id, err)
		}
		_, err := t.rt.Store.Append(ctx, t.id, st.fold.Seq(), d)
		switch {
		case err == nil:
			return true, t.rt.catchUp(ctx, st)
		case errors.Is(err, thread.ErrConflict), errors.Is(err, thread.ErrDuplicateCause):
			if err := t.rt.catchUp(ctx, st); err != nil {
				return false, err
			}
		default:
			return false, fmt.Errorf("%s to %s: %w", d.Kind, t.id, err)
		}
	}
}

// lastText is the text of the thread's last model turn: a child's last
// word to its parent.
func lastText(f *fold.Fold[Services]) string {
	for _, c := range f.Components() {
		s, ok := unwrapComponent(c).(*scheduler.Scheduler[Services])
		if !ok {
			continue
		}
		msgs := s.Messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == facts.RoleAssistant {
				return msgs[i].Text
			}
		}
		return ""
	}
	return ""
}

// Tree is a thread and the children it waits on, each read as its own
// view says, and what the whole tree waits for: the reading a front end
// shows of a parent whose children work.
type Tree struct {
	// View is the thread's own view.
	View View
	// Children are the children the thread waits on (spawned and not
	// reported), in call order. A child not created yet has only its id
	// and the status resumable (a Resume creates it).
	Children []Tree
	// Status is the tree's: resumable when a Resume of the thread would
	// run something anywhere in it (a child to create, run, end or
	// report; children to stop); failed (with Retry) when a child's
	// failure waits for a resume to be tried again; parked when every
	// waited child waits for a person; otherwise the thread's own.
	Status Status
	Reason string
	// Retry, on a failed tree, is the failed transition a resume tries
	// again, in the thread Thread names.
	Retry string
	// Waits are what the tree waits for a person to answer: the thread's
	// own requests, and its children's, each with fold.Wait.Thread set
	// to the thread it belongs to.
	Waits []fold.Wait
}

// Tree reads the thread and the children it waits on (see Tree). It
// creates nothing and runs nothing.
func (t *Thread) Tree(ctx context.Context) (Tree, error) {
	st, err := t.folded(ctx)
	if err != nil {
		return Tree{View: View{Thread: t.id}}, err
	}
	v, err := viewOf(t.id, st.fold)
	if err != nil {
		return Tree{View: v}, err
	}
	tr := Tree{View: v, Status: v.Status, Reason: v.Reason, Retry: v.Retry}
	for _, w := range v.Waits {
		if w.Kind != fold.WaitChild || !t.delegates() {
			tr.Waits = append(tr.Waits, w)
		}
	}
	if !t.delegates() {
		return tr, nil
	}
	kids, err := waited(st.fold)
	if err != nil || len(kids) == 0 {
		return tr, err
	}
	stopped := v.Status == StatusStopped || v.Status == StatusFailed
	resumable, failed, blocked := false, "", false
	for _, c := range kids {
		kid, err := t.kid(ctx, c, false)
		if err != nil {
			return tr, err
		}
		if kid == nil {
			tr.Children = append(tr.Children, Tree{View: View{Thread: c.Child.ID(), Status: StatusResumable}, Status: StatusResumable})
			resumable = true
			continue
		}
		ktr, err := kid.Tree(ctx)
		if err != nil {
			return tr, err
		}
		tr.Children = append(tr.Children, ktr)
		switch {
		case stopped:
		case endable(ktr.View) && !(ktr.View.Lineage.Ended != nil && blocked):
			resumable = true
		case ktr.Status == StatusResumable:
			resumable = true
		case ktr.Status == StatusFailed && failed == "":
			failed = fmt.Sprintf("child %s %s", kid.id, ktr.Reason)
			tr.Retry = ktr.Retry
		case ktr.Status == StatusParked && budgetStale(v, ktr.View):
			// The tree's budget changed since the child was told: a
			// Resume tells it (treebudget.go), and it may go on.
			resumable = true
		case ktr.Status == StatusParked:
			for _, w := range ktr.Waits {
				if w.Thread == "" {
					w.Thread = kid.id
				}
				tr.Waits = append(tr.Waits, w)
			}
		}
		if !endable(ktr.View) {
			blocked = true
		}
	}
	switch {
	case stopped:
		// A Resume stops the children first.
		tr.Status, tr.Reason = StatusResumable, v.Reason+"; a resume stops its children"
	case resumable:
		tr.Status, tr.Reason = StatusResumable, ""
	case failed != "":
		tr.Status, tr.Reason = StatusFailed, failed
	default:
		tr.Status = StatusParked
	}
	return tr, nil
}

// SnapshotVersion is the version of the lineage's snapshots: the seq of
// the last fact folded, then, each as a flag and its payload (and seq):
// the spawn record, the end, the stop, the stop requested (version 3);
// then what the thread records of itself (version 2; see own.snapshot).
func (l *lineage) SnapshotVersion() uint32 { return 3 }

// Snapshot keeps what the lineage read; a record it could not read keeps
// none.
func (l *lineage) Snapshot() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	var e fold.Encoder
	e.Uint(l.seen)
	for _, r := range []struct {
		kind    facts.Kind
		payload any
		seq     uint64
	}{{facts.KindThreadSpawned, l.spawned, 1}, {facts.KindThreadEnded, l.ended, l.endedSeq}, {facts.KindThreadStopped, l.stopped, l.stoppedSeq}, {facts.KindStopRequested, l.request, l.requestSeq}} {
		var data []byte
		switch p := r.payload.(type) {
		case *facts.ThreadSpawned:
			if p != nil {
				d, err := facts.NewDraft(r.kind, "", *p)
				if err != nil {
					return nil, err
				}
				data = d.Data
			}
		case *facts.ThreadEnded:
			if p != nil {
				d, err := facts.NewDraft(r.kind, "", *p)
				if err != nil {
					return nil, err
				}
				data = d.Data
			}
		case *facts.ThreadStopped:
			if p != nil {
				d, err := facts.NewDraft(r.kind, "", *p)
				if err != nil {
					return nil, err
				}
				data = d.Data
			}
		case *facts.StopRequested:
			if p != nil {
				d, err := facts.NewDraft(r.kind, "", *p)
				if err != nil {
					return nil, err
				}
				data = d.Data
			}
		}
		e.Bool(data != nil)
		if data != nil {
			e.Uint(r.seq)
			e.Bytes(data)
		}
	}
	if err := l.own.snapshot(&e); err != nil {
		return nil, err
	}
	return e.Data(), nil
}

// Restore reads a snapshot.
func (l *lineage) Restore(data []byte, p fold.Prefix) error {
	d := fold.NewDecoder(p.Thread(), data)
	l.seen = d.Uint()
	read := func(kind facts.Kind) (uint64, facts.Fact, bool) {
		if !d.Bool() {
			return 0, facts.Fact{}, false
		}
		seq := d.Uint()
		return seq, facts.Fact{Thread: p.Thread(), Seq: seq, Kind: kind, Data: d.Bytes()}, d.Err() == nil
	}
	if _, f, ok := read(facts.KindThreadSpawned); ok {
		sp, err := facts.Decode[facts.ThreadSpawned](f)
		if err != nil {
			return err
		}
		l.spawned = &sp
	}
	if seq, f, ok := read(facts.KindThreadEnded); ok {
		te, err := facts.Decode[facts.ThreadEnded](f)
		if err != nil {
			return err
		}
		l.ended, l.endedSeq = &te, seq
	}
	if seq, f, ok := read(facts.KindThreadStopped); ok {
		ts, err := facts.Decode[facts.ThreadStopped](f)
		if err != nil {
			return err
		}
		l.stopped, l.stoppedSeq = &ts, seq
	}
	if seq, f, ok := read(facts.KindStopRequested); ok {
		sr, err := facts.Decode[facts.StopRequested](f)
		if err != nil {
			return err
		}
		l.request, l.requestSeq = &sr, seq
	}
	if err := l.own.restore(d, l.seen); err != nil {
		return err
	}
	if err := d.Finish(); err != nil {
		return err
	}
	return l.own.check(p)
}

// ValidateNewRoot checks the id a person names for a new thread that is
// no child (a fork's, a rerun's): a valid thread id (thread.ValidateID)
// with no ".", which is the shape of a child's id (thread.ChildID). A
// thread with the id PARENT.CALL would take the id of the child a thread
// PARENT spawns for CALL, and PARENT could not delegate that call.
func ValidateNewRoot(id string) error {
	if err := thread.ValidateID(id); err != nil {
		return err
	}
	if strings.Contains(id, ".") {
		return fmt.Errorf("%q has a \".\", the shape of %w (PARENT.CALL): a thread that is no child cannot take it; name it without a \".\"", id, ErrChildShaped)
	}
	return nil
}
