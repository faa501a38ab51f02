package scheduler

import (
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/fold"
)

// A call whose process died while a server's question waited is in doubt
// (recover), unless the question says the call goes on at the server over
// a resumable session (facts.Elicit.Resume): then the thread keeps waiting
// for the answer — the question stays a wait, the action stays started —
// and once it is answered the deliver transition hands the answer to the
// server and reads the call's result there (Env.Deliver), completing the
// action. Old logs have no Resume: their calls recover as before.

// deliverKey is the key of the transition that delivers the answer to the
// n-th elicitation of action id.
func deliverKey(id string, n int) string { return "tool/deliver/" + id + "/" + strconv.Itoa(n) }

// MayAsk reports whether the transition key runs action id, so that the
// server it calls may put questions through it: its execution, or the
// delivery of an answer after a restart.
func MayAsk(key, id string) bool {
	return key == executeKey(id) || strings.HasPrefix(key, "tool/deliver/"+id+"/")
}

// resumable returns the latest elicitation of action a when it may be
// delivered by a process that did not make the call (Elicit.Resume), and
// its number (from 1); nil when there is none, or when the environment
// cannot deliver.
func (s *state[S]) resumable(a *Action) (*Elicitation, int) {
	if s.env.Deliver == nil {
		return nil, 0
	}
	var last *Elicitation
	n := 0
	for _, e := range s.elicits {
		if e.Asked.Elicit.ActionID == a.ID {
			last = e
			n++
		}
	}
	if last == nil || last.Asked.Elicit.Resume == nil {
		return nil, 0
	}
	return last, n
}

// deliver is the transition that delivers the answer to e, the n-th
// elicitation of the started action a, and completes a with what the
// server answered to its call.
func (s *state[S]) deliver(a *Action, e *Elicitation, n int) fold.Transition[S] {
	req := action.FromFact(a.Requested)
	return fold.Transition[S]{Key: deliverKey(a.ID, n), Effect: s.env.Deliver(req, *a.Started, e.Asked, *e.Answer)}
}

// deliverable reports whether the started action a waits on, or has an
// answer to, a question that may be delivered after a restart.
func (s *state[S]) deliverable(a *Action) bool {
	e, _ := s.resumable(a)
	return e != nil
}
