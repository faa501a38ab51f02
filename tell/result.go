package tell

import (
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// Result is how a command left a thread, as its JSON document: the
// thread's state — the one document every front end gives of it
// (drive.State) — with what the command adds beside it.
type Result struct {
	drive.State
	// Hint says how to go on from here.
	Hint string `json:"hint,omitempty"`
	// Answers say, for each open request (by its ref), the command that
	// answers it.
	Answers map[string]string `json:"answers,omitempty"`
	// Facts are the facts the command appended.
	Facts []facts.Fact `json:"facts"`
}

// ResultOf is the document of the state st after a command appended
// the facts appended: hint says how to go on, answer the command that
// answers an open request of the thread (a wait on a child is answered
// in the child, and has none).
func ResultOf(st drive.State, hint string, answer func(thread string, p drive.Pending) string, appended []facts.Fact) Result {
	r := Result{State: st, Hint: hint, Facts: appended}
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
		r.Answers[drive.Ref(w)] = answer(st.Thread, w)
	}
	return r
}
