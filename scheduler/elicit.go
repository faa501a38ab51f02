package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// An elicitation is a question an MCP server asked a person while one of
// the thread's actions — a call of one of its tools — ran: the process
// that holds the call appends question.asked (facts.QuestionAsked.Elicit
// set) under the cause ElicitCause, and waits for its answer. The thread
// waits on it (a fold.WaitQuestion) beside the running action, for as
// long as the action runs; the answer (question.answered with Elicited)
// is the server's response, never a message to the model. An elicitation
// whose action ended unanswered (completed, or interrupted when its
// process died) is not waited on any more.

// Elicitation is a question an MCP server asked during an action.
type Elicitation struct {
	Asked               facts.QuestionAsked
	Answer              *facts.QuestionAnswered
	AskedSeq, AnswerSeq uint64
	// Running says the action that asked still runs (started, neither
	// completed nor interrupted): only then can the answer reach the
	// server.
	Running bool
	// Resumable says the answer reaches the server even when the process
	// that made the call is gone: the question is the latest of its
	// running action and names a resumable session (see deliver.go).
	Resumable bool
}

// ElicitCause is the cause of the n-th elicitation (from 1) of action id:
// a fact of the action's run, appended while it runs.
func ElicitCause(actionID string, n int) string {
	return fmt.Sprintf("%s/elicit/%d", executeKey(actionID), n)
}

// ElicitRequest is the request id of the n-th elicitation of action id.
func ElicitRequest(actionID string, n int) string {
	return fmt.Sprintf("%s-e%d", actionID, n)
}

// running reports whether the action id has started and not ended.
func (s *state[S]) running(id string) bool {
	_, a := s.attemptOf(id)
	return a != nil && a.Started != nil && a.Completed == nil && a.Interrupted == nil
}

func (s *state[S]) elicitAsked(f facts.Fact, p facts.QuestionAsked) {
	if s.byElicit[p.RequestID] != nil || !s.running(p.Elicit.ActionID) {
		return // the verifier refuses it (checkElicitAsked)
	}
	e := &Elicitation{Asked: p, AskedSeq: f.Seq}
	s.elicits = append(s.elicits, e)
	s.byElicit[p.RequestID] = e
}

// elicitAnswered folds the answer to an elicitation; false when p answers
// none.
func (s *state[S]) elicitAnswered(f facts.Fact, p facts.QuestionAnswered) bool {
	e := s.byElicit[p.RequestID]
	if e == nil {
		return false
	}
	if e.Answer == nil {
		e.Answer, e.AnswerSeq = &p, f.Seq
	}
	return true
}

// checkElicitAsked returns why an elicitation cannot come here: its action
// must be running, its cause the action's, its request id new.
func (s *state[S]) checkElicitAsked(cause string, p facts.QuestionAsked) error {
	if p.Elicit == nil {
		return nil
	}
	id := p.Elicit.ActionID
	switch {
	case !strings.HasPrefix(cause, executeKey(id)+"/elicit/"):
		return fmt.Errorf("an elicitation of action %s under the cause %q, not the action's", id, cause)
	case !s.running(id):
		return fmt.Errorf("an elicitation of action %s, which is not running", id)
	case s.byElicit[p.RequestID] != nil:
		return fmt.Errorf("an elicitation %q asked twice", p.RequestID)
	}
	return nil
}

// acceptElicited checks an answer to the elicitation e.
func (s *state[S]) acceptElicited(e *Elicitation, p facts.QuestionAnswered) error {
	switch {
	case e.Answer != nil:
		return fmt.Errorf("question %q: %w", p.RequestID, ErrAnswered)
	case p.Elicited == nil:
		return fmt.Errorf("question %q is the MCP server %s's: it is answered with accept (and the input asked for), decline or cancel: %w",
			p.RequestID, e.Asked.Elicit.Server, ErrBadAnswer)
	case !s.running(e.Asked.Elicit.ActionID):
		return fmt.Errorf("question %q: the call of action %s that asked it has ended, so no answer can reach the server: %w",
			p.RequestID, e.Asked.Elicit.ActionID, ErrAnswered)
	}
	if err := CheckElicited(e.Asked.Elicit.Schema, *p.Elicited); err != nil {
		return fmt.Errorf("question %q: %w: %w", p.RequestID, ErrBadAnswer, err)
	}
	return nil
}

// CheckElicited checks an answer to an elicitation against the schema the
// server asked for: accept carries one JSON object that the schema
// validates; decline and cancel carry nothing. The schema is compiled with
// no loader: a reference to anything outside it fails.
func CheckElicited(schema facts.RawJSON, a facts.Elicited) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if a.Action != facts.ElicitAccept {
		return nil
	}
	content := []byte(a.Content)
	if len(content) == 0 {
		content = []byte("{}")
	}
	doc, err := decodeOne(content)
	if err != nil {
		return fmt.Errorf("the input is not JSON: %v", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return errors.New("the input is not a JSON object")
	}
	if len(schema) == 0 {
		return nil
	}
	compiled, err := CompileSchema(schema)
	if err != nil {
		return fmt.Errorf("the requested schema: %v", err)
	}
	if err := compiled.Validate(content); err != nil {
		return fmt.Errorf("the input does not fit the requested schema: %s", bound(err.Error()))
	}
	return nil
}

// elicitWaits adds a wait for each elicitation its running action waits on.
func (s *state[S]) elicitWaits(v *View) {
	for _, e := range s.elicits {
		if e.Answer == nil && s.running(e.Asked.Elicit.ActionID) {
			v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitQuestion, RequestID: e.Asked.RequestID, Summary: e.Asked.Text})
		}
	}
}

// elicitations returns the elicitations, those of the latest turn's
// actions only when latest.
func (s *state[S]) elicitations(latest bool) []Elicitation {
	var out []Elicitation
	for _, e := range s.elicits {
		c, _ := s.attemptOf(e.Asked.Elicit.ActionID)
		if latest && (c == nil || !slices.Contains(s.calls, c)) {
			continue
		}
		x := *e
		x.Running = s.running(e.Asked.Elicit.ActionID)
		if _, a := s.attemptOf(e.Asked.Elicit.ActionID); x.Running && a != nil {
			last, _ := s.resumable(a)
			x.Resumable = last == e
		}
		out = append(out, x)
	}
	return out
}

// Elicitation returns the elicitation with the request id.
func (r Reading) Elicitation(id string) (Elicitation, bool) {
	for _, e := range r.Elicitations {
		if e.Asked.RequestID == id {
			return e, true
		}
	}
	return Elicitation{}, false
}
