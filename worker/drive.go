package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
)

// errBusy: another holds the thread.
var errBusy = errors.New("another holds the thread")

// errElsewhere: the thread works in another workspace than the worker's
// (Options.Workspace).
var errElsewhere = errors.New("the thread works in another workspace")

// errDraining: the worker is draining; the drive stopped before its next
// step.
var errDraining = errors.New("the worker is draining")

// elsewhereDelay is how long a job of a thread of another workspace is
// put off: long enough that the worker does not spin on it, short enough
// that a worker there soon takes it.
const elsewhereDelay = 10 * time.Second

// work drives the thread of the slot s under its lease, until it is done,
// parked, failed or stopped and no job joined meanwhile, and finishes the
// jobs; a thread another holds, a drive that fails or a drain gives the
// jobs back.
func (w *Worker) work(id string, s *slot) {
	if w.followed(id, s) {
		return
	}
	// A child thread (the delegate tool) runs only as its parent drives
	// it: an answer to a child's request, or a child that ended, moves its
	// tree, so the worker drives the tree's root. The slot stays the
	// child's, for its jobs.
	slotID := id
	// A root that cannot be found is an error as a lease not taken is:
	// the child is never driven on its own, by the top-level actor rather
	// than the one its delegation composes.
	root, err := harness.RootOf(w.hard, w.o.Store, id)
	var held context.Context
	var release func()
	if err == nil {
		id = root
		held, release, err = w.take(id)
	}
	if err != nil {
		w.mu.Lock()
		delay := w.later(s.jobs)
		w.mu.Unlock()
		switch {
		case w.hard.Err() != nil:
			w.log(Event{Kind: EventHandedOver, Thread: id})
			delay = 0
		case errors.Is(err, errBusy):
			w.log(Event{Kind: EventPutOff, Thread: id, Later: delay})
		default:
			w.log(Event{Kind: EventError, Thread: id, Err: err, Later: delay})
		}
		w.giveBack(slotID, s, nil, delay)
		return
	}
	defer release()
	var covered []Job // the jobs the look in progress answers for
	keepCtx, stopKeep := context.WithCancel(held)
	defer stopKeep()
	go w.keep(keepCtx, s, &covered)
	w.log(Event{Kind: EventTook, Thread: id})
	var told *drive.State // the end last logged: a look that finds the same says nothing
	for {
		w.mu.Lock()
		covered = append(covered, s.jobs...)
		s.jobs = nil
		w.mu.Unlock()
		st, drove, err := w.look(held, id)
		switch {
		case errors.Is(err, errDraining), w.hard.Err() != nil:
			w.log(Event{Kind: EventHandedOver, Thread: id})
			w.giveBack(slotID, s, w.taken(&covered), 0)
			return
		case errors.Is(err, errElsewhere):
			// Not this worker's: a worker (or a command) in its workspace
			// drives it. Put off, not finished, so that one can take it.
			jobs := w.taken(&covered)
			delay := max(w.later(jobs), elsewhereDelay)
			w.log(Event{Kind: EventElsewhere, Thread: id, Err: err, Later: delay})
			w.giveBack(slotID, s, jobs, delay)
			return
		case errors.Is(err, harness.ErrUnknownThread):
			// No facts: nothing to drive, now or later.
		case err != nil:
			jobs := w.taken(&covered)
			delay := w.later(jobs)
			w.log(Event{Kind: EventError, Thread: id, Err: err, Later: delay})
			w.giveBack(slotID, s, jobs, delay)
			return
		case st.Status == harness.StatusStepLimit:
			// Still resumable: the model's turns are bounded by the
			// thread's budget, so go on.
			continue
		case told != nil && told.Status == st.Status && told.Head.Seq == st.Head.Seq:
			// Looked again (jobs joined meanwhile) and found the thread
			// as it was: one end, said once.
		case !drove && st.Status == harness.StatusDone:
			// Found done without driving it: only a drive ends a thread
			// done, and the worker that drove it said so (this look is
			// of a job given out again, under load, after that drive).
		default:
			w.log(Event{Kind: EventStopped, Thread: id, State: st})
			told = &st
		}
		for _, j := range w.taken(&covered) {
			_ = j.Done()
		}
		if w.done(slotID, s) {
			return
		}
		// Jobs joined while the thread was driven: their appends may have
		// come after its last look. Look once more.
	}
}

// followed finishes the jobs of the slot that were given out for the
// first time and whose appends the thread has an append after — made by
// a runtime that had folded them (or by a later post, with a job of its
// own): that runtime went on from them, and it held the thread under a
// job of its own that is given out again should it die. It reports
// whether the slot is done with; otherwise the jobs left are to look at.
func (w *Worker) followed(id string, s *slot) bool {
	for {
		w.mu.Lock()
		jobs := s.jobs
		w.mu.Unlock()
		for _, j := range jobs {
			if j.Delivered() > 1 {
				// Given out before: the worker that had it may have died
				// driving the thread.
				return false
			}
			if f, err := j.Followed(w.hard); err != nil || !f {
				return false
			}
		}
		w.mu.Lock()
		s.jobs = s.jobs[len(jobs):]
		w.mu.Unlock()
		for _, j := range jobs {
			_ = j.Done()
		}
		if w.done(id, s) {
			return true
		}
	}
}

// taken returns the jobs *covered and empties it, under the worker's lock
// (the keeper reads it).
func (w *Worker) taken(covered *[]Job) []Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobs := *covered
	*covered = nil
	return jobs
}

// done removes the thread's slot and reports true, unless jobs joined it
// meanwhile.
func (w *Worker) done(id string, s *slot) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(s.jobs) > 0 {
		return false
	}
	delete(w.active, id)
	select {
	case w.freed <- struct{}{}:
	default:
	}
	return true
}

// keep says, every Queue.KeepEvery until ctx ends, that the jobs of the
// slot are still being worked on.
func (w *Worker) keep(ctx context.Context, s *slot, covered *[]Job) {
	every := w.o.Queue.KeepEvery()
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		jobs := append(append([]Job(nil), *covered...), s.jobs...)
		w.mu.Unlock()
		for _, j := range jobs {
			_ = j.Working()
		}
	}
}

// take holds the thread (harness.Hold: this process's lock and the
// thread's lease) if it can within Options.LeaseWait, under the worker's
// hard context: the context it returns holds the thread until release.
// A thread another holds is errBusy.
func (w *Worker) take(id string) (context.Context, func(), error) {
	ctx, cancel := context.WithCancelCause(w.hard)
	t := time.AfterFunc(w.o.LeaseWait, func() { cancel(errBusy) })
	held, release, err := harness.Hold(ctx, w.o.Store, id)
	if !t.Stop() {
		// The wait ran out, perhaps as the lease was taken: let go.
		if err == nil {
			release()
		}
		cancel(nil)
		return nil, nil, errBusy
	}
	if err != nil {
		cancel(nil)
		return nil, nil, err
	}
	return held, func() { release(); cancel(nil) }, nil
}

// look drives the thread once with package drive, under ctx (which holds
// it), on a runtime of its own: until it is done, parked, failed, stopped
// or at the step limit, answering what the thread's policy (or, if it
// records none, the worker's approval) decides and asking nobody. drove
// says whether it resumed the thread (found it resumable).
func (w *Worker) look(ctx context.Context, id string) (st drive.State, drove bool, err error) {
	rt, free, err := w.o.Runtime(id)
	if err != nil {
		return drive.State{Thread: id}, false, err
	}
	defer free()
	if w.o.Workspace != "" {
		v, err := rt.Thread(w.o.Actor, id).View(ctx)
		if err != nil && !errors.Is(err, harness.ErrUnknownThread) {
			return drive.State{Thread: id}, false, err
		}
		if err == nil {
			ws, err := v.Own.Workspace()
			if err != nil {
				return drive.State{Thread: id}, false, err
			}
			if ws != "" && ws != w.o.Workspace {
				return drive.State{Thread: id, Workspace: ws}, false, fmt.Errorf("thread %s works in %s, not %s: %w", id, ws, w.o.Workspace, errElsewhere)
			}
		}
	}
	g := &gate{w: w}
	var progress drive.Progress
	if w.o.Progress != nil {
		progress = w.o.Progress(ctx, id)
	}
	st, err = drive.Drive(ctx, rt.Thread(w.o.Actor, id), drive.Options{
		Progress:     progress,
		Approval:     w.o.Approval,
		Policy:       w.o.Policy,
		FollowPolicy: true,
		AmendPolicy:  w.o.AmendPolicy,
		LoadModel: func(recorded string) (model.Model, error) {
			m, err := w.o.LoadModel(recorded)
			if err != nil {
				return nil, err
			}
			return gated{Model: m, g: g}, nil
		},
		Resume: func(ctx context.Context, th *harness.Thread, _ drive.State) (harness.Outcome, error) {
			if w.draining.Load() {
				return harness.Outcome{Thread: id}, errDraining
			}
			drove = true
			rctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			g.arm(cancel)
			defer g.arm(nil)
			out, err := th.Resume(rctx)
			if errors.Is(context.Cause(rctx), errDraining) {
				return out, errDraining
			}
			return out, err
		},
		OnInDoubt: func(st drive.State) { w.log(Event{Kind: EventInDoubt, Thread: id, State: st}) },
	})
	return st, drove, err
}

// gate stops a Resume at its next model turn once the worker drains: the
// turn is not taken, nothing is recorded for it, and the thread stays
// resumable for the worker it is handed over to.
type gate struct {
	w      *Worker
	mu     sync.Mutex              // guards cancel
	cancel context.CancelCauseFunc // the Resume in progress
}

func (g *gate) arm(cancel context.CancelCauseFunc) {
	g.mu.Lock()
	g.cancel = cancel
	g.mu.Unlock()
}

// stop reports whether the worker drains, and if so cancels the Resume in
// progress.
func (g *gate) stop() bool {
	if !g.w.draining.Load() {
		return false
	}
	g.mu.Lock()
	cancel := g.cancel
	g.mu.Unlock()
	if cancel != nil {
		cancel(errDraining)
	}
	return true
}

// gated is a thread's model behind its gate.
type gated struct {
	model.Model
	g *gate
}

// Turn takes the turn, unless the worker drains.
func (m gated) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	if m.g.stop() {
		return model.Decision{}, errDraining
	}
	return m.Model.Turn(ctx, req)
}
