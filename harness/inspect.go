package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/thread"
)

// State is where a thread's log leaves it, folded without running
// anything.
type State struct {
	Thread string
	// Status is done, parked, failed, stopped or resumable (a resume would
	// run something: an approved call nobody resumed, an action in doubt).
	Status Status
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
	// InDoubt are the actions that started and never completed or were
	// recorded as interrupted: their process died. A resume records them
	// as interrupted and parks on reconcile; it never runs them again.
	InDoubt []string
	// Head is the thread's last fact.
	Head thread.Head
	// Model is the model recorded on system.configured, "" before one was.
	Model string
	// Workspace is the workspace recorded on system.configured (see
	// Config.Workspace), "" before one was or where none was recorded.
	Workspace string
}

// Pending is an open request with what the log says about it.
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
}

// Inspect folds a thread's log through the actor's components and says
// where it stands: what a resume would do, or what it waits for. It runs
// nothing and appends nothing. A thread with no facts is ErrUnknownThread.
func Inspect(ctx context.Context, store thread.Store, actor Actor, id string) (State, error) {
	st := State{Thread: id}
	head, err := store.Head(ctx, id)
	if errors.Is(err, thread.ErrNotFound) {
		return st, fmt.Errorf("thread %s: %w", id, ErrUnknownThread)
	}
	if err != nil {
		return st, fmt.Errorf("thread %s: %w", id, err)
	}
	st.Head = head
	fl := fold.New(actor.New()...)
	asked := map[string]facts.ConfirmationRequested{}
	questions := map[string]facts.QuestionAsked{}
	requested := map[string]facts.ActionRequested{}
	completed := map[string]facts.ActionCompleted{}
	interrupted := map[string]facts.ActionInterrupted{}
	var started []string
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return st, fmt.Errorf("thread %s: %w", id, err)
		}
		if f.Seq > head.Seq {
			break
		}
		if err := fl.Step(f); err != nil {
			return st, fmt.Errorf("thread %s at seq %d: %w", id, f.Seq, err)
		}
		switch f.Kind {
		case facts.KindSystemConfigured:
			p, err := facts.Decode[facts.SystemConfigured](f)
			if err != nil {
				return st, err
			}
			st.Model, st.Workspace = p.Model, p.Workspace
		case facts.KindConfirmationRequested:
			p, err := facts.Decode[facts.ConfirmationRequested](f)
			if err != nil {
				return st, err
			}
			asked[p.RequestID] = p
		case facts.KindQuestionAsked:
			p, err := facts.Decode[facts.QuestionAsked](f)
			if err != nil {
				return st, err
			}
			questions[p.RequestID] = p
		case facts.KindActionRequested:
			p, err := facts.Decode[facts.ActionRequested](f)
			if err != nil {
				return st, err
			}
			requested[p.ActionID] = p
		case facts.KindActionStarted:
			p, err := facts.Decode[facts.ActionStarted](f)
			if err != nil {
				return st, err
			}
			started = append(started, p.ActionID)
		case facts.KindActionCompleted:
			p, err := facts.Decode[facts.ActionCompleted](f)
			if err != nil {
				return st, err
			}
			completed[p.ActionID] = p
		case facts.KindActionInterrupted:
			p, err := facts.Decode[facts.ActionInterrupted](f)
			if err != nil {
				return st, err
			}
			interrupted[p.ActionID] = p
		}
	}
	for _, a := range started {
		_, done := completed[a]
		_, rec := interrupted[a]
		if !done && !rec && !slices.Contains(st.InDoubt, a) {
			st.InDoubt = append(st.InDoubt, a)
		}
	}
	p, err := fl.Project()
	if err != nil {
		return st, fmt.Errorf("thread %s at seq %d: %w", id, head.Seq, err)
	}
	switch {
	case p.Stop != nil:
		st.Status, st.Reason = Status(p.Stop.Status), p.Stop.Reason
		if p.Retry != nil {
			st.Retry = p.Retry.Key
		}
	case len(p.Enabled) > 0:
		st.Status, st.Next = StatusResumable, p.Enabled[0].Key
	case len(p.Waits) > 0:
		st.Status = StatusParked
	default:
		st.Status = StatusDone
	}
	for _, w := range p.Waits {
		pd := Pending{Wait: w}
		switch w.Kind {
		case fold.WaitConfirmation:
			if c, ok := asked[w.RequestID]; ok {
				pd.Tool, pd.Args, pd.Digest = c.Tool, c.Args, c.Digest
			}
		case fold.WaitQuestion:
			if q, ok := questions[w.RequestID]; ok {
				pd.Options, pd.AllowFreeText = q.Options, q.AllowFreeText
			}
		case fold.WaitReconcile:
			if r, ok := requested[w.RequestID]; ok {
				pd.Tool, pd.Args = r.Adapter, string(r.Payload)
			}
			if c, ok := completed[w.RequestID]; ok {
				pd.Completion = &c
			}
			if i, ok := interrupted[w.RequestID]; ok {
				pd.Interrupted = &i
			}
		}
		st.Waits = append(st.Waits, pd)
	}
	return st, nil
}
