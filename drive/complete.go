package drive

import (
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Completion is a word a shell may complete an argument with, and what it
// names, on one line and escaped (the model and the repository write
// titles and arguments).
type Completion struct {
	Value string
	About string
}

// completionAbout is how much of what a completion names is said.
const completionAbout = 60

// about says s on one line, its spaces squashed, escaped and cut.
func about(s string) string {
	return present.Cut(present.EscapeLine(strings.Join(strings.Fields(s), " ")), completionAbout)
}

// ThreadCompletions are the threads of rows whose ids start with prefix,
// in the rows' order, each about its status and title.
func ThreadCompletions(rows []State, prefix string) []Completion {
	var out []Completion
	for _, r := range rows {
		if strings.HasPrefix(r.Thread, prefix) {
			out = append(out, Completion{r.Thread, string(r.Status) + ": " + about(r.Title)})
		}
	}
	return out
}

// RequestCompletions are the open requests of kind of st (and of the
// children it waits on) whose refs (Ref) start with prefix, each about
// its call.
func RequestCompletions(st State, kind fold.WaitKind, prefix string) []Completion {
	var out []Completion
	for _, w := range st.Waits {
		if ref := Ref(w); w.Kind == kind && strings.HasPrefix(ref, prefix) {
			out = append(out, Completion{ref, about(w.Tool + " " + w.Args)})
		}
	}
	return out
}

// ActionCompletions are the actions of a thread's reading whose ids start
// with prefix, each about its tool and the seq it was requested at.
func ActionCompletions(r scheduler.Reading, prefix string) []Completion {
	var out []Completion
	for _, act := range r.Actions() {
		if strings.HasPrefix(act.ID, prefix) {
			out = append(out, Completion{act.ID, about(act.Requested.Adapter) + " at seq " + strconv.FormatUint(act.RequestedSeq, 10)})
		}
	}
	return out
}
