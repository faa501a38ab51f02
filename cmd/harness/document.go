package main

import (
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/tools"
)

// resultJSON is how a command left a thread, for -o json: the thread's
// state — the one document every front end gives of it (drive.State) —
// with what this command adds beside it.
type resultJSON struct {
	drive.State
	// Hint says how to go on from here.
	Hint string `json:"hint,omitempty"`
	// Answers say, for each open request (by its ref), the command that
	// answers it.
	Answers map[string]string `json:"answers,omitempty"`
	// Facts are the facts the command appended.
	Facts []facts.Fact `json:"facts"`
}

// printStateJSON prints the state of a thread as -o json gives it: with
// the preview of each call to confirm when the thread works in this
// workspace, how to answer each request, and the facts appended.
func (a *app) printStateJSON(st drive.State, appended []facts.Fact, s *session) error {
	if st.Workspace == "" || st.Workspace == s.stock.Config.Workspace {
		st.Preview(s.place.Root, tools.Preview)
	}
	r := resultJSON{State: st, Hint: goOnHint(st), Facts: appended}
	if r.Facts == nil {
		r.Facts = []facts.Fact{}
	}
	for _, w := range st.Waits {
		if w.Kind == fold.WaitChild {
			continue
		}
		if r.Answers == nil {
			r.Answers = map[string]string{}
		}
		r.Answers[drive.Ref(w)] = answerHint(st.Thread, w)
	}
	return a.printJSON(r)
}
