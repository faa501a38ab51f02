package drive

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Options say how Drive runs a thread on: which confirmations a policy
// answers, whether a failed model turn is tried again, how the model is
// loaded, how a person is asked, and the hooks a front end shows progress
// through. The zero value resumes with the runtime's model, answers
// nothing by policy, asks nobody and does not retry.
type Options struct {
	// Approval answers the confirmations it decides (see ApplyApproval);
	// the zero Approval decides none.
	Approval Approval
	// Policy, when set, decides instead of Approval (see Policy): a Go
	// policy, its answers recorded by its Name.
	Policy Policy
	// FollowPolicy: the thread's own policy (its latest policy.set, as
	// each look's view reads it — harness.View.Own — so that a change made
	// while the thread is driven, a person's "always" at the prompt,
	// applies at once) decides instead
	// of Approval's mode and patterns; Approval's Root and Resolve are
	// kept. A thread that records no policy is decided by Policy, or
	// Approval.
	FollowPolicy bool
	// AmendPolicy, when set with FollowPolicy, is applied to the thread's
	// policy before it decides, and is not recorded: what a caller's own
	// flags add to the thread's (a worker's --approve, --allow and --deny,
	// combined as stock.Amend combines a command's). A thread that records no
	// policy is still decided by Approval alone.
	AmendPolicy func(facts.PolicySet) facts.PolicySet
	// Retry: a failed thread whose failed transition can be run again
	// (State.Retry, a model turn) is resumed once more, once per Drive.
	// Set it when the call is a person's word that the cause (a key, a
	// quota, a service down) may be fixed.
	Retry bool
	// LoadModel, when set, loads the model when a model turn is first due
	// — a parked or finished thread never needs it, nor a resume that runs
	// only tools — given the model the thread recorded ("" if none). Drive
	// gives the runtime a model that calls it. A model that cannot be
	// loaded stops the Resume that asked for it before the turn is
	// recorded (the thread stays resumable), and is Drive's error.
	LoadModel func(recorded string) (model.Model, error)
	// Resume, when set, runs one Resume of the thread instead of
	// th.Resume(ctx), for a front end that explains an interruption; st
	// is the state that called for it. Its errors are returned by Drive
	// as they are. An error wrapping harness.ErrDefect is not an error of
	// Drive: the defect is recorded, and the next look finds the thread
	// failed.
	Resume func(ctx context.Context, th *harness.Thread, st State) (harness.Outcome, error)
	// OnRetry, when set, is called before a failed thread is resumed once
	// more (see Retry), with its state: st.Reason says why it failed.
	OnRetry func(st State)
	// OnInDoubt, when set, is called before a thread with actions in doubt
	// (st.InDoubt: their process died while they ran) is resumed; the
	// Resume records them as interrupted, never runs them again, and the
	// thread parks on reconcile.
	OnInDoubt func(st State)
	// OnHeld, when set, is called once, before the first resume, when
	// another runtime holds the thread (another process drives it, or
	// one of this process's): the resume waits until it lets go.
	OnHeld func(st State)
	// Ask, when set, asks a person the requests of a parked thread that
	// Approval left open. It posts the answers itself, each as it is given
	// (with PostAnswer under AnswerKey, so that an answer given twice is
	// appended once), and returns how many requests it answered: an
	// answer someone else gave meanwhile counts. Zero leaves the thread
	// parked and Drive returns its state; its error is returned as it is.
	//
	// Drive reads the runtime's Store and Services again after Ask
	// returns, so Ask may replace them: a command that closes its store
	// while a person thinks, so that others can use it, and opens it
	// again.
	Ask func(ctx context.Context, th *harness.Thread, waits []Pending) (answered int, err error)
	// Progress, when set, is told what the thread does as it does it (see
	// Event): the runtime's model is made Live, and every Resume runs
	// under WithProgress. Its events are ephemeral; the facts are the
	// record.
	Progress Progress
}

// Drive runs the thread on until it is done, failed or stopped, or
// waits for a person nobody here answers, and returns how it then stands.
// It repeats: look at the thread; a resumable one is resumed; a parked
// one has its confirmations answered by opts.Policy (or opts.Approval), and the requests
// left are put to opts.Ask; a failed one is resumed once more if
// opts.Retry allows it. Anything else is returned. The thread's log is
// folded once: every look and every resume goes on from where the last
// one read (harness.Thread keeps the fold).
//
// A Resume that runs the runtime's Config.MaxSteps transitions ends the
// drive with StatusStepLimit (see StepLimited): the thread is still
// resumable, but a model looping on a tool that needs no confirmation
// must not keep the caller forever. A thread that is resumable but whose
// Resume twice in a row runs nothing is an error: going round again would
// spin.
//
// The returned state is the last one looked at; on an error it is the
// state the failing step started from.
func Drive(ctx context.Context, th *harness.Thread, opts Options) (State, error) {
	resume := opts.Resume
	if resume == nil {
		resume = func(ctx context.Context, th *harness.Thread, _ State) (harness.Outcome, error) { return th.Resume(ctx) }
	}
	if opts.LoadModel != nil {
		lz := &lazy{load: opts.LoadModel}
		th.Runtime().Services.Model = lz
		next := resume
		resume = func(ctx context.Context, th *harness.Thread, st State) (harness.Outcome, error) {
			ctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			lz.arm(st.Model, cancel)
			defer lz.arm("", nil)
			out, err := next(ctx, th, st)
			if lerr := lz.failed(); lerr != nil {
				return out, lerr
			}
			return out, err
		}
	}
	if opts.Progress != nil {
		ctx = WithProgress(ctx, opts.Progress)
		svc := &th.Runtime().Services
		svc.Model = Live(svc.Model)
		if load := svc.Models; load != nil {
			// A child of an agent that names a model streams too.
			svc.Models = func(spec string) (model.Model, error) {
				m, err := load(spec)
				return Live(m), err
			}
		}
	}
	// A log behind the person's own seal of it (the store lost facts)
	// gets nothing: no answer by policy, no resume.
	if err := th.CheckSealed(ctx); err != nil {
		return State{}, err
	}
	retried := false
	idle := 0 // resumes in a row that ran nothing
	for first := true; ; first = false {
		st, err := Inspect(ctx, th)
		if err != nil {
			return st, err
		}
		if first && opts.OnHeld != nil && heldElsewhere(ctx, th, st) {
			opts.OnHeld(st)
		}
		switch st.Status {
		case harness.StatusFailed:
			if st.Retry == "" || !opts.Retry || retried {
				return st, nil
			}
			// A failed model turn: whatever made it fail (a key, a quota,
			// a service down) may be fixed now. Once.
			retried = true
			if opts.OnRetry != nil {
				opts.OnRetry(st)
			}
			out, err := resume(ctx, th, st)
			if stop, st, err := resumed(ctx, th, st, out, err); stop {
				return st, err
			}
			continue
		case harness.StatusResumable, StatusRunning:
			if len(st.InDoubt) > 0 && opts.OnInDoubt != nil {
				opts.OnInDoubt(st)
			}
			out, err := resume(ctx, th, st)
			if stop, st, err := resumed(ctx, th, st, out, err); stop {
				return st, err
			}
			// Idle: nothing ran, here or (on a shared store) elsewhere.
			if idle = idle + 1; out.Steps > 0 || out.Seq != st.Head.Seq {
				idle = 0
			}
			if idle > 1 {
				// Twice nothing ran though something was enabled: going
				// round again would spin.
				return st, fmt.Errorf("thread %s: resume runs nothing at seq %d though %s is enabled", th.ID(), out.Seq, st.Next)
			}
			continue
		case harness.StatusParked:
		default:
			return st, nil
		}
		var policy Policy = opts.Approval
		if opts.Policy != nil {
			policy = opts.Policy
		}
		if opts.FollowPolicy {
			p, _, ok, err := st.View.Own.Policy()
			if err != nil {
				return st, err
			}
			if ok {
				if opts.AmendPolicy != nil {
					p = opts.AmendPolicy(p)
				}
				approval, err := ApprovalOf(p)
				if err != nil {
					return st, fmt.Errorf("thread %s: its policy: %w", th.ID(), err)
				}
				approval.Root, approval.Resolve = opts.Approval.Root, opts.Approval.Resolve
				policy = approval
			}
		}
		ask, posted, err := ApplyPolicy(ctx, th, policy, st.Waits)
		if err != nil && !errors.Is(err, scheduler.ErrAnswered) {
			return st, err
		}
		// Answered meanwhile by someone else (err is ErrAnswered, or the
		// policy's post was a duplicate): the thread moved; look again.
		if posted > 0 || err != nil || headMoved(ctx, th, st) {
			continue
		}
		if opts.Ask != nil && len(ask) > 0 {
			answered, err := opts.Ask(ctx, th, ask)
			if err != nil {
				return st, err
			}
			if answered > 0 {
				continue
			}
		}
		return st, nil
	}
}

// resumed reports whether Drive stops after a Resume of the state st that
// ended with out and err, and with what: an error (a defect is not one:
// the next look finds the thread failed), the step limit, or a failure
// that stays enabled (see failedAgain).
func resumed(ctx context.Context, th *harness.Thread, st State, out harness.Outcome, err error) (bool, State, error) {
	if err != nil && !errors.Is(err, harness.ErrDefect) {
		return true, st, err
	}
	if out.Status == harness.StatusStepLimit {
		st, err := StepLimited(ctx, th, out)
		return true, st, err
	}
	return failedAgain(ctx, th, out)
}

// failedAgain reports whether Drive must stop after a Resume whose outcome
// is out: a Resume that ends failed or stopped while the thread still
// looks resumable stopped on a transition that failed and stays enabled
// (one a component retries on the next Resume, without limit); resuming
// again at once would only fail again. The state returned says so.
func failedAgain(ctx context.Context, th *harness.Thread, out harness.Outcome) (bool, State, error) {
	if out.Status != harness.StatusFailed && out.Status != harness.StatusStopped {
		return false, State{}, nil
	}
	st, err := Inspect(ctx, th)
	if err != nil {
		return true, st, err
	}
	if st.Status != harness.StatusResumable {
		return false, st, nil
	}
	st.Status, st.Reason = out.Status, out.Reason
	return true, st, nil
}

// heldElsewhere reports whether a resume of th, which stands as st,
// would wait for another runtime that holds it: one that runs its
// actions (StatusRunning), or, between them, one a look without waiting
// finds (harness.Free). A thread nothing can resume is held by nobody
// worth saying.
func heldElsewhere(ctx context.Context, th *harness.Thread, st State) bool {
	switch st.Status {
	case StatusRunning:
		return true
	case harness.StatusResumable:
	case harness.StatusFailed:
		if st.Retry == "" {
			return false
		}
	default:
		return false
	}
	free, err := harness.Free(ctx, th.Store(), th.ID())
	return err == nil && !free
}

// headMoved reports whether the thread's head is past the state's.
func headMoved(ctx context.Context, th *harness.Thread, st State) bool {
	h, err := th.Store().Head(ctx, th.ID())
	return err == nil && h.Seq != st.Head.Seq
}

// StepLimited is the state of the thread after a Resume (or Start)
// whose outcome out is StatusStepLimit: it ran the runtime's
// Config.MaxSteps transitions and the thread is still resumable. The
// state is reported as StatusStepLimit, with a Reason that says how many
// steps ran; a caller that goes no further says how to go on. If the
// thread is no longer resumable (another writer moved it), its state is
// returned as Inspect reports it.
func StepLimited(ctx context.Context, th *harness.Thread, out harness.Outcome) (State, error) {
	st, err := Inspect(ctx, th)
	if err != nil || st.Status != harness.StatusResumable {
		return st, err
	}
	st.Status = harness.StatusStepLimit
	st.Reason = fmt.Sprintf("ran %s in one go, the most one Resume runs (is something looping?); resume to go on", present.Plural(out.Steps, "step", "steps"))
	return st, nil
}
