package harness

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// View is a thread as its log leaves it, read through the actor's
// components without running anything: the one reading every front end,
// the verifier, undo and a worker use. What waits and what would run next
// is the projection a Resume would act on; what each request asked and
// what became of each action is the coding scheduler's reading — the same
// fold that decides the thread's next step: of the latest turn in the
// View (Turn), of the whole thread from Thread.Reading.
type View struct {
	Thread string
	// Head is the last fact folded.
	Head thread.Head
	// Status is done, parked, failed, stopped, or resumable (a Resume
	// would run something).
	Status Status
	// Waits are what the thread waits for a person to answer: all of a
	// parked thread's, and those still open while something else can run.
	Waits []fold.Wait
	// Reason says why the thread failed or stopped.
	Reason string
	// Retry, on a failed thread, is the key of the failed transition a new
	// Resume runs once more (a model turn: its cause may be fixed).
	Retry string
	// Next is the key of the transition a Resume would run first.
	Next string
	// Turn is the coding scheduler's reading of the latest model turn: the
	// thread's configuration, the calls of the turn with their actions,
	// its question. Whatever waits or runs is there (a call of an earlier
	// turn is settled), and it costs what the turn holds, not the log.
	// With several schedulers (nested Infer parts) it holds all their
	// calls.
	Turn scheduler.Reading
	// Budget is what the budget part counted, when the actor has one.
	Budget *BudgetView
	// Lineage is the thread's place in a tree: a child's link to its
	// parent and its end, and a stop (see Delegate).
	Lineage Lineage
	// Own is what the thread records of itself: its title, its
	// workspace, its policy, the answers posted to it (see Own).
	Own Own
	// Instructions are the instruction files the thread's latest turn was
	// given as recorded (see InstructionReader), when the actor has a
	// System part.
	Instructions *InstructionsView
	// Plan is whether the thread plans, and its latest plan (see plan
	// mode), when the actor has a System part.
	Plan *PlanView
}

// statusOf is the status a projection gives a thread: stopped or failed
// when a component stopped it, resumable when something is enabled,
// parked when it waits for a person, done otherwise. It is how a Resume
// ends and how every reader says where a thread stands.
func statusOf[S any](p fold.Projection[S]) Status {
	switch {
	case p.Stop != nil:
		return Status(p.Stop.Status)
	case len(p.Enabled) > 0:
		return StatusResumable
	case len(p.Waits) > 0:
		return StatusParked
	}
	return StatusDone
}

// View reads the thread id through the actor's components. A thread with
// no facts is ErrUnknownThread.
func (rt *Runtime) View(ctx context.Context, actor Actor, id string) (View, error) {
	return rt.Thread(actor, id).View(ctx)
}

// Reading is the coding scheduler's reading of the whole thread id (see
// Thread.Reading).
func (rt *Runtime) Reading(ctx context.Context, actor Actor, id string) (scheduler.Reading, error) {
	return rt.Thread(actor, id).Reading(ctx)
}

// View reads the thread as its log stands now (see Runtime.View).
func (t *Thread) View(ctx context.Context) (View, error) {
	st, err := t.folded(ctx)
	if err != nil {
		return View{Thread: t.id}, err
	}
	return viewOf(t.id, st.fold)
}

// Reading is the coding scheduler's reading of the whole thread as its log
// stands now: its configuration, every call with every action, every
// question and undo — what the effects, the audit and undo read.
func (t *Thread) Reading(ctx context.Context) (scheduler.Reading, error) {
	st, err := t.folded(ctx)
	if err != nil {
		return scheduler.Reading{}, err
	}
	return readingOf(t.id, st.fold)
}

// folded is the thread's fold, up to date; a thread with no facts is
// ErrUnknownThread.
func (t *Thread) folded(ctx context.Context) (*state, error) {
	st, err := t.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("thread %s: %w", t.id, err)
	}
	if st.fold.Seq() == 0 {
		return nil, fmt.Errorf("thread %s: %w", t.id, ErrUnknownThread)
	}
	return st, nil
}

// viewOf is the View of a fold of the thread id, as its log stands at the
// fold's seq.
func viewOf(id string, f *fold.Fold[Services]) (View, error) {
	last := f.Last()
	v := View{Thread: id, Head: thread.Head{Thread: id, Seq: f.Seq(), Hash: f.Hash(), Kind: last.Kind, At: last.At}}
	p, err := f.Project()
	if err != nil {
		return v, fmt.Errorf("thread %s at seq %d: %w", id, f.Seq(), err)
	}
	v.Status, v.Waits = statusOf(p), p.Waits
	if v.Status == StatusDone {
		// A thread in a worktree of its own is done once its work there
		// is finished (worktree.finished): until then a Resume has that
		// to do, and may offer its merge.
		if u, err := unfinished(id, f); err != nil {
			return v, err
		} else if u {
			v.Status = StatusResumable
		}
	}
	switch {
	case p.Stop != nil:
		v.Reason = p.Stop.Reason
		if p.Retry != nil {
			v.Retry = p.Retry.Key
		}
	case len(p.Enabled) > 0:
		v.Next = p.Enabled[0].Key
	}
	for _, c := range f.Components() {
		switch c := unwrapComponent(c).(type) {
		case reader:
			r, err := c.Current()
			if err != nil {
				return v, fmt.Errorf("thread %s: %w", id, err)
			}
			v.Turn = merge(v.Turn, r)
		case *budget:
			b := c.View()
			v.Budget = &b
		case *system:
			if v.Instructions == nil {
				in, pl := c.ins.view(), c.plan.view()
				v.Instructions, v.Plan = &in, &pl
			}
		case *lineage:
			v.Lineage, v.Own = c.view(), c.own.Own
		}
	}
	return v, nil
}

// currentOf is the coding scheduler's reading of the thread id's latest
// turn (as View's Turn), from a fold of its log.
func currentOf(id string, f *fold.Fold[Services]) (scheduler.Reading, error) {
	var cur scheduler.Reading
	for _, c := range f.Components() {
		if c, ok := unwrapComponent(c).(reader); ok {
			r, err := c.Current()
			if err != nil {
				return cur, fmt.Errorf("thread %s: %w", id, err)
			}
			cur = merge(cur, r)
		}
	}
	return cur, nil
}

// readingOf is the coding scheduler's reading of a whole thread, from a
// fold of its log (see Thread.Reading).
func readingOf(id string, f *fold.Fold[Services]) (scheduler.Reading, error) {
	var whole scheduler.Reading
	for _, c := range f.Components() {
		if c, ok := unwrapComponent(c).(reader); ok {
			r, err := c.Reading()
			if err != nil {
				return whole, fmt.Errorf("thread %s: %w", id, err)
			}
			whole = merge(whole, r)
		}
	}
	return whole, nil
}

// reader is a component that reads a thread as the coding scheduler does.
type reader interface {
	Current() (scheduler.Reading, error)
	Reading() (scheduler.Reading, error)
}

// unwrapComponent sees through components that wrap another (such as
// fold.Prefixed).
func unwrapComponent(c fold.Component[Services]) fold.Component[Services] {
	for {
		u, ok := c.(interface {
			Unwrap() fold.Component[Services]
		})
		if !ok {
			return c
		}
		c = u.Unwrap()
	}
}

// merge adds the reading of a second scheduler to the first's: their
// calls in the order they were made, then the second's questions. Both read the same
// configuration and undos.
func merge(a, b scheduler.Reading) scheduler.Reading {
	if a.Thread == "" {
		return b
	}
	a.Turns += b.Turns
	a.Calls = append(a.Calls, b.Calls...)
	slices.SortStableFunc(a.Calls, func(x, y scheduler.Call) int { return cmp.Compare(x.TurnSeq, y.TurnSeq) })
	a.Questions = append(a.Questions, b.Questions...)
	if a.Output == nil {
		a.Output = b.Output
	}
	return a
}
