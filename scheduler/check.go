package scheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// notAddressed marks an answer to a request this scheduler never made: a
// scheduler nested beside it may have made it. It prints as nothing.
var notAddressed = silent{fold.ErrNotAddressed}

type silent struct{ error }

func (silent) Error() string   { return "" }
func (s silent) Unwrap() error { return s.error }

// accept checks an answer against the open requests.
func (s *state[S]) accept(d facts.Draft) error {
	f := facts.Fact{Kind: d.Kind, Data: d.Data}
	switch d.Kind {
	case facts.KindConfirmationAnswered:
		p, err := facts.Decode[facts.ConfirmationAnswered](f)
		if err != nil {
			return err
		}
		c := s.byRequest[p.RequestID]
		switch {
		case c == nil:
			s.missedRef(p.RequestID)
			return fmt.Errorf("confirmation %q: %w%w", p.RequestID, ErrUnknownRequest, notAddressed)
		case c.answer != nil:
			return fmt.Errorf("confirmation %q: %w", p.RequestID, ErrAnswered)
		case c.last() != nil && c.last().Completed != nil:
			// Completed unasked: a denial of another call stopped the turn.
			return fmt.Errorf("confirmation %q: its call was completed without it (%s): %w", p.RequestID, c.last().Completed.Report.Error, ErrAnswered)
		case p.Digest != "" && c.asked != nil && p.Digest != c.asked.Digest:
			return fmt.Errorf("confirmation %q: digest %s, request has %s: %w", p.RequestID, p.Digest, c.asked.Digest, ErrDigest)
		}
	case facts.KindQuestionAnswered:
		p, err := facts.Decode[facts.QuestionAnswered](f)
		if err != nil {
			return err
		}
		if e := s.byElicit[p.RequestID]; e != nil {
			return s.acceptElicited(e, p)
		}
		if p.Elicited != nil {
			return fmt.Errorf("question %q: an elicitation's answer to a question no server asked: %w%w", p.RequestID, ErrUnknownRequest, notAddressed)
		}
		q := s.question
		switch {
		case q == nil || q.Asked == nil || q.Asked.RequestID != p.RequestID:
			if s.answeredQuestion(p.RequestID) {
				return fmt.Errorf("question %q: %w", p.RequestID, ErrAnswered)
			}
			return fmt.Errorf("question %q: %w%w", p.RequestID, ErrUnknownRequest, notAddressed)
		case q.Answer != nil:
			return fmt.Errorf("question %q: %w", p.RequestID, ErrAnswered)
		case !q.Asked.AllowFreeText && len(q.Asked.Options) > 0 && !slices.Contains(q.Asked.Options, p.Text):
			return fmt.Errorf("question %q: %q (options: %q): %w", p.RequestID, p.Text, q.Asked.Options, ErrNotAnOption)
		}
	case facts.KindEffectReconciled:
		p, err := facts.Decode[facts.EffectReconciled](f)
		if err != nil {
			return err
		}
		_, a := s.attemptOf(p.ActionID)
		switch {
		case a == nil:
			return fmt.Errorf("effect %q: %w%w", p.ActionID, ErrUnknownRequest, notAddressed)
		case a.Reconciled != nil:
			return fmt.Errorf("effect %q: %w", p.ActionID, ErrAnswered)
		case !a.Open():
			return fmt.Errorf("effect %q is not open (its effect state is %s): %w", p.ActionID, effectState(a), ErrUnknownRequest)
		}
	case facts.KindChildReported:
		p, err := facts.Decode[facts.ChildReported](f)
		if err != nil {
			return err
		}
		return s.acceptReport(p)
	}
	return nil
}

func effectState(a *Action) string {
	if a.Completed != nil {
		return string(a.Completed.EffectState)
	}
	return "not completed"
}

// answeredQuestion reports whether id names a question of an earlier turn.
func (s *state[S]) answeredQuestion(id string) bool {
	n, ok := strings.CutPrefix(id, s.scope()+"q-")
	if !ok {
		return false
	}
	turn, err := strconv.Atoi(n)
	return err == nil && turn >= 1 && turn <= s.turns && (s.question == nil || s.question.Turn != turn)
}

// check returns why f cannot come next in the lifecycle of calls and
// actions (see Stage), or nil: the verifier's question, asked of the fold
// of everything before f.
func (s *state[S]) check(f facts.Fact) error {
	if a := s.unchecked; a != nil && !s.checks(f, a) {
		return fmt.Errorf("action %s declared a check (%s) that was not recorded with its completion at seq %d",
			a.ID, a.Requested.Check.Name, a.CompletedSeq)
	}
	if c := s.unstarted; c != nil {
		if err := s.follows(f, c); err != nil {
			return err
		}
	}
	if !transitionKinds[f.Kind] || !owns(f.Cause) {
		return nil
	}
	switch f.Kind {
	case facts.KindWorkspaceChanged:
		return checkWith(f, s.checkWorkspaceChanged)
	case facts.KindConfirmationRequested:
		return checkWith(f, s.checkConfirmationRequested)
	case facts.KindActionRequested:
		return checkWith(f, s.checkActionRequested)
	case facts.KindActionStarted:
		return checkWith(f, s.checkActionStarted)
	case facts.KindActionCompleted:
		return checkWith(f, s.checkActionCompleted)
	case facts.KindCheckRecorded:
		return checkWith(f, s.checkCheckRecorded)
	case facts.KindActionInterrupted:
		return checkWith(f, s.checkActionInterrupted)
	case facts.KindChildSpawned:
		return checkWith(f, s.checkChildSpawned)
	case facts.KindHookRan:
		return checkWith(f, func(p facts.HookRan) error { return s.checkHookRan(f.Cause, p) })
	case facts.KindQuestionAsked:
		return checkWith(f, func(p facts.QuestionAsked) error { return s.checkElicitAsked(f.Cause, p) })
	case facts.KindModelSampled:
		return checkWith(f, func(p facts.ModelSampled) error { return s.checkSampled(f.Cause, p) })
	}
	return nil
}

// checkEnd returns why the log cannot end here, or nil.
func (s *state[S]) checkEnd() error {
	if a := s.unchecked; a != nil {
		return fmt.Errorf("action %s declared a check (%s) that was not recorded with its completion at seq %d",
			a.ID, a.Requested.Check.Name, a.CompletedSeq)
	}
	if c := s.unstarted; c != nil {
		return fmt.Errorf("a workspace.changed found before action %s is not followed by its start or completion", c.ActionID)
	}
	return nil
}

// follows returns why f cannot follow the workspace.changed c: the next
// fact must be the start, or the completion, of the action c names, whose
// reading before is c's new state.
func (s *state[S]) follows(f facts.Fact, c *facts.WorkspaceChanged) error {
	var id, before string
	switch f.Kind {
	case facts.KindActionStarted:
		p, err := facts.Decode[facts.ActionStarted](f)
		if err != nil {
			return err
		}
		id, before = p.ActionID, p.ObservedBefore
	case facts.KindActionCompleted:
		p, err := facts.Decode[facts.ActionCompleted](f)
		if err != nil {
			return err
		}
		id, before = p.ActionID, p.Observation.Before
	default:
		return fmt.Errorf("a workspace.changed found before action %s must be followed by its start or completion, not a %s", c.ActionID, f.Kind)
	}
	switch {
	case id != c.ActionID:
		return fmt.Errorf("a workspace.changed found before action %s is followed by a %s of action %s", c.ActionID, f.Kind, id)
	case before != c.After:
		return fmt.Errorf("a workspace.changed found before action %s says the workspace was at %s, but the action's reading before is %s", c.ActionID, c.After, before)
	}
	return nil
}

// checkWorkspaceChanged checks a change found before an action: the
// action was requested and has not started or completed, and the change
// starts from the thread's last observation.
func (s *state[S]) checkWorkspaceChanged(p facts.WorkspaceChanged) error {
	_, a := s.attemptOf(p.ActionID)
	switch {
	case a == nil:
		return fmt.Errorf("a workspace.changed before action %s, which was never requested", p.ActionID)
	case a.Started != nil:
		return fmt.Errorf("a workspace.changed before action %s, which started at seq %d", p.ActionID, a.StartedSeq)
	case a.Completed != nil:
		return fmt.Errorf("a workspace.changed before action %s, which completed at seq %d", p.ActionID, a.CompletedSeq)
	case s.lastObs.Seq == 0:
		return fmt.Errorf("a workspace.changed before action %s, but the thread observed the workspace nowhere before it", p.ActionID)
	case p.Since != s.lastObs.Seq || p.Before != s.lastObs.Hash:
		return fmt.Errorf("a workspace.changed before action %s starts from %s at seq %d, but the thread last observed %s at seq %d",
			p.ActionID, p.Before, p.Since, s.lastObs.Hash, s.lastObs.Seq)
	}
	return nil
}

// checks reports whether f is the check.recorded of a.
func (s *state[S]) checks(f facts.Fact, a *Action) bool {
	if f.Kind != facts.KindCheckRecorded {
		return false
	}
	p, err := facts.Decode[facts.CheckRecorded](f)
	return err == nil && p.ActionID == a.ID
}

// checkWith decodes f's payload and checks it.
func checkWith[T any](f facts.Fact, check func(T) error) error {
	p, err := facts.Decode[T](f)
	if err != nil {
		return err
	}
	return check(p)
}

func (s *state[S]) checkConfirmationRequested(p facts.ConfirmationRequested) error {
	c := s.byRef[p.CallID]
	switch {
	case c == nil:
		s.missedRef(p.CallID)
		return fmt.Errorf("confirmation %s names no call of the thread", p.RequestID)
	case c.asked != nil:
		return fmt.Errorf("confirmation %s: its call was already put to a person at seq %d", p.RequestID, c.askedSeq)
	case c.last() == nil:
		return fmt.Errorf("confirmation %s comes before its call's action.requested", p.RequestID)
	case !c.policy.Confirm:
		return fmt.Errorf("confirmation %s: its call's request did not ask for a confirmation", p.RequestID)
	case p.Digest != "" && p.Digest != Digest(p.Tool, p.Args):
		return fmt.Errorf("confirmation %s: its digest is not the digest of %s and its arguments", p.RequestID, p.Tool)
	}
	return nil
}

func (s *state[S]) checkActionRequested(p facts.ActionRequested) error {
	ref := refOf(p.ActionID)
	c := s.byRef[ref]
	if c == nil {
		s.missedRef(ref)
		return fmt.Errorf("action %s names no call of the thread", p.ActionID)
	}
	if p.ActionID == rewriteID(ref) {
		return s.checkRewriteRequested(c, p)
	}
	a := c.last()
	switch {
	case a == nil && p.ActionID != ref:
		return fmt.Errorf("action %s: the first attempt of call %s is %s", p.ActionID, ref, ref)
	case a == nil:
		return nil
	case a.Reconciled == nil || a.Reconciled.Decision != facts.DecisionRetry:
		return fmt.Errorf("action %s: call %s already has action %s, which no person asked to retry", p.ActionID, ref, a.ID)
	case p.ActionID != ref+"."+strconv.Itoa(len(c.attempts)+1):
		return fmt.Errorf("action %s: the next attempt of call %s is %s.%d", p.ActionID, ref, ref, len(c.attempts)+1)
	}
	return nil
}

func (s *state[S]) checkActionStarted(p facts.ActionStarted) error {
	c, a := s.attemptOf(p.ActionID)
	switch {
	case a == nil:
		return fmt.Errorf("action %s started, but it was never requested", p.ActionID)
	case a.Started != nil:
		return fmt.Errorf("action %s started again (it started at seq %d)", p.ActionID, a.StartedSeq)
	case a.Completed != nil:
		return fmt.Errorf("action %s started after its completion at seq %d", p.ActionID, a.CompletedSeq)
	case c.needsConfirmation() && c.answer == nil:
		return fmt.Errorf("action %s started before a person answered its confirmation", p.ActionID)
	case c.denied():
		return fmt.Errorf("action %s started, but its call was denied at seq %d", p.ActionID, c.answerAt)
	case c.hookDenied():
		return fmt.Errorf("action %s started, but a before_tool hook denied its call", p.ActionID)
	}
	return nil
}

func (s *state[S]) checkActionCompleted(p facts.ActionCompleted) error {
	_, a := s.attemptOf(p.ActionID)
	switch {
	case a == nil:
		return fmt.Errorf("action %s completed, but it was never requested", p.ActionID)
	case a.Completed != nil:
		return fmt.Errorf("action %s completed again (it completed at seq %d)", p.ActionID, a.CompletedSeq)
	case a.Interrupted != nil:
		return fmt.Errorf("action %s completed after it was recorded as interrupted at seq %d", p.ActionID, a.InterruptedSeq)
	case a.Started == nil && p.Report.StartedAt != "" && !s.replayed(a) && a.Requested.Served == nil:
		return fmt.Errorf("action %s: its adapter ran (the report has a start time) but no action.started precedes its completion", p.ActionID)
	}
	return nil
}

// replayed reports whether a's idempotency key was completed by an
// earlier attempt, whose completion a completion of a returns.
func (s *state[S]) replayed(a *Action) bool {
	prior := s.done[a.Requested.IdempotencyKey]
	return prior != nil && prior.ID != a.ID
}

func (s *state[S]) checkCheckRecorded(p facts.CheckRecorded) error {
	_, a := s.attemptOf(p.ActionID)
	switch {
	case a == nil:
		return fmt.Errorf("a check of action %s, which was never requested", p.ActionID)
	case a.Completed == nil:
		return fmt.Errorf("a check of action %s before its completion", p.ActionID)
	case a.Check != nil:
		return fmt.Errorf("a second check of action %s (it was checked at seq %d)", p.ActionID, a.CheckSeq)
	case a.Requested.Check == nil:
		return fmt.Errorf("a check of action %s, whose request declared none", p.ActionID)
	case p.Check.Name != a.Requested.Check.Name || p.Check.Target != a.Requested.Check.Target:
		return fmt.Errorf("action %s declared %s %s but the check recorded is %s %s", p.ActionID,
			a.Requested.Check.Name, a.Requested.Check.Target, p.Check.Name, p.Check.Target)
	}
	return nil
}

func (s *state[S]) checkActionInterrupted(p facts.ActionInterrupted) error {
	_, a := s.attemptOf(p.ActionID)
	switch {
	case a == nil:
		return fmt.Errorf("action %s interrupted, but it was never requested", p.ActionID)
	case a.Started == nil:
		return fmt.Errorf("action %s recorded as interrupted, but it never started", p.ActionID)
	case a.Completed != nil:
		return fmt.Errorf("action %s recorded as interrupted after its completion at seq %d", p.ActionID, a.CompletedSeq)
	case a.Interrupted != nil:
		return fmt.Errorf("action %s recorded as interrupted again (at seq %d)", p.ActionID, a.InterruptedSeq)
	}
	return nil
}
