package drive

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// State is where a thread stands for a person or a front end: its view
// (harness.View), with each open request spelled out and every action
// that started and has no end told apart — running, or in doubt.
type State struct {
	Thread string
	// Status is done, parked, failed, stopped or resumable (a resume would
	// run something: an approved call nobody resumed, an action in doubt),
	// or step_limit when Drive stopped a thread that is still resumable.
	Status harness.Status
	// Waits are the open requests of the thread, with what a person needs
	// to answer them: all of a parked thread's, and those still open while
	// something else can run.
	Waits []Pending
	// Reason says why a thread failed or stopped.
	Reason string
	// Retry, on a failed thread, is the key of the failed transition a
	// resume runs once more (a model turn: its cause, a key or a service,
	// can be fixed); "" when the failure is for good.
	Retry string
	// Next is the key of the transition a resume would run first.
	Next string
	// InDoubt are the actions that started and never completed nor were
	// recorded as interrupted, while nobody holds the thread: their
	// process died. A resume records them as interrupted and parks on
	// reconcile; it never runs them again.
	InDoubt []string
	// Running are the actions that started and have no end yet while a
	// runtime (in this process, or another holding the thread's lease)
	// holds the thread: they are in progress, not in doubt.
	Running []string
	// Head is the thread's last fact.
	Head thread.Head
	// Model is the model recorded on system.configured, "" before one was.
	Model string
	// Workspace is the workspace recorded on system.configured (see
	// harness.Config.Workspace), "" before one was or where none was
	// recorded.
	Workspace string
	// View is the whole view the state was read from.
	View harness.View
	// Children are the states of the children the thread waits on (see
	// harness.Delegate), in call order; their requests are among Waits,
	// each naming its thread (Pending.Thread).
	Children []State
}

// Pending is an open request with what the thread's view says about it.
type Pending struct {
	fold.Wait
	// Tool and Args are the call to confirm (a confirmation), or the tool
	// of the open action (a reconcile).
	Tool, Args string
	// Digest identifies the call to confirm exactly.
	Digest string
	// Options and AllowFreeText are the question's.
	Options       []string
	AllowFreeText bool
	// Completion is the open action's record, when it completed (a
	// reconcile of an unknown effect); Interrupted when it was found in
	// doubt.
	Completion  *facts.ActionCompleted
	Interrupted *facts.ActionInterrupted
	// Action is the open action (a reconcile) or, for a confirmation, the
	// request recorded for the call; nil where there is none.
	Action *scheduler.Action
}

// Inspect reads the thread (harness.Thread.View) and says where it
// stands: what a resume would do, or what it waits for. It runs nothing
// and appends nothing. A thread with no facts is harness.ErrUnknownThread.
//
// A thread that waits on children (harness.Thread.Tree) stands where its
// tree does: resumable when a resume would move a child on, parked when
// every child waits for a person, whose requests are then the thread's
// Waits, each naming the thread it belongs to.
func Inspect(ctx context.Context, th *harness.Thread) (State, error) {
	tr, err := th.Tree(ctx)
	if err != nil {
		return State{Thread: th.ID()}, err
	}
	return stateOfTree(ctx, th, tr)
}

// stateOf is the state of the view v of a thread of store.
func stateOf(ctx context.Context, store thread.Store, v harness.View) (State, error) {
	st := State{Thread: v.Thread, Status: v.Status, Reason: v.Reason, Retry: v.Retry, Next: v.Next, Head: v.Head, View: v}
	if sys := v.Turn.System; sys != nil {
		st.Model, st.Workspace = sys.Model, sys.Workspace
	}
	var started []string
	for _, a := range v.Turn.Actions() {
		if a.Stage() == scheduler.StageStarted {
			started = append(started, a.ID)
		}
	}
	if len(started) > 0 {
		// Started with no end: in doubt only if nobody holds the thread.
		free, err := harness.Free(ctx, store, v.Thread)
		if err != nil {
			return st, fmt.Errorf("thread %s: %w", v.Thread, err)
		}
		if free {
			st.InDoubt = started
		} else {
			st.Running = started
		}
	}
	for _, w := range v.Waits {
		st.Waits = append(st.Waits, pending(v.Turn, w))
	}
	return st, nil
}

// pending is the wait w with what the reading says of its request.
func pending(r scheduler.Reading, w fold.Wait) Pending {
	pd := Pending{Wait: w}
	switch w.Kind {
	case fold.WaitConfirmation:
		if c, ok := r.Call(w.RequestID); ok && c.Confirmation != nil {
			pd.Tool, pd.Args, pd.Digest = c.Confirmation.Tool, c.Confirmation.Args, c.Confirmation.Digest
			if len(c.Actions) > 0 {
				a := c.Actions[len(c.Actions)-1]
				pd.Action = &a
			}
		}
	case fold.WaitQuestion:
		if q, ok := r.Question(w.RequestID); ok {
			pd.Options, pd.AllowFreeText = q.Asked.Options, q.Asked.AllowFreeText
		}
	case fold.WaitReconcile:
		if a, ok := r.Action(w.RequestID); ok {
			pd.Tool, pd.Args = a.Requested.Adapter, string(a.Requested.Payload)
			pd.Completion, pd.Interrupted, pd.Action = a.Completed, a.Interrupted, &a
		}
	}
	return pd
}
