package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// The commands a person runs to answer or go on, said under what they
// answer: they name this command line's commands and flags, so they are
// said here, not in the libraries.

// answerHint is the command that answers an open request: through the
// thread id, also when the request is one of its children's, resuming
// the thread here.
func answerHint(id string, p drive.Pending) string { return hintFor(id, p, true) }

// hintFor is the command that answers p in the thread id: with resume,
// one that also resumes the thread here (--resume, or a resume after a
// child's reconciliation); without, the answer alone (a worker resumes).
func hintFor(id string, p drive.Pending, resume bool) string {
	// A request id holds the model's call id: each word of a suggested
	// command is quoted as a shell needs it.
	id, ref := tell.ShellWord(id), tell.ShellWord(drive.Ref(p))
	r := ""
	if resume {
		r = " --resume"
	}
	switch p.Kind {
	case fold.WaitConfirmation:
		return fmt.Sprintf("answer: harness approve %s %s%s   (or: harness deny %s %s --reason '…'%s)", id, ref, r, id, ref, r)
	case fold.WaitQuestion:
		if p.Thread != "" {
			return fmt.Sprintf("answer: harness answer %s '…' --request %s%s", id, ref, r)
		}
		return fmt.Sprintf("answer: harness answer %s '…'%s", id, r)
	case fold.WaitPlan:
		if p.Thread != "" {
			return fmt.Sprintf("act on it: harness plan %s act, then harness resume %s   (or ask for another: harness continue %s '…')", tell.ShellWord(p.Thread), id, tell.ShellWord(p.Thread))
		}
		return fmt.Sprintf("act on it: harness plan %s act   (or ask for another plan: harness continue %s '…')", id, id)
	case fold.WaitBudget:
		return budgetHint(id, r, p.Raise)
	case fold.WaitReconcile:
		action, _ := json.Marshal(p.RequestID)
		data := tell.ShellWord(fmt.Sprintf(`{"action_id": %s, "decision": "accept"}`, action))
		if p.Thread != "" {
			then := ""
			if resume {
				then = ", then harness resume " + id
			}
			return fmt.Sprintf(`settle: harness post %s effect.reconciled --data %s%s   (accept, retry or abandon)`, tell.ShellWord(p.Thread), data, then)
		}
		return fmt.Sprintf(`settle: harness post %s effect.reconciled --data %s%s   (accept, retry or abandon)`, id, data, r)
	}
	return ""
}

// goOnHint says how to go on with a thread a budget stopped
// (drive.GoOnOf): fork it and resume the fork with a larger bound; ""
// for any other state.
func goOnHint(st drive.State) string {
	g, ok := drive.GoOnOf(st, stock.DefaultMaxTurns)
	if !ok {
		return ""
	}
	return fmt.Sprintf("to go on: harness fork %s --at %d, then harness resume %s --max-turns %d", st.Thread, g.At, g.Fork, g.MaxTurns)
}

// afterState are the lines said under a thread that failed or stopped:
// how to go on.
func afterState(st drive.State) []string {
	var lines []string
	if st.Retry != "" {
		lines = append(lines, fmt.Sprintf("once the cause is fixed, `harness resume %s` tries %s again", st.Thread, present.Step(st.Retry)))
	}
	if hint := goOnHint(st); hint != "" {
		lines = append(lines, hint)
	}
	return lines
}

// askedHint is how to answer a question an MCP server asked: a command
// that parses as one. The server names its fields: a name is quoted for
// the shell the person may paste the command into ("a$(curl …)" is a
// word, not a command run); a secret is read from stdin.
func askedHint(e drive.Event) string {
	var names []string
	for _, f := range drive.ElicitFields(e.Elicit) {
		if f.Secret {
			names = append(names, "--field "+tell.ShellWord(f.Name)+"=-")
		} else {
			names = append(names, "--field "+tell.ShellWord(f.Name)+"=…")
		}
	}
	return fmt.Sprintf("  answer on the page, or where a harness serve holds the store: harness answer %s --request %s --elicit accept %s (or --elicit decline, --elicit cancel); Ctrl-C stops the call (it is then in doubt)",
		present.EscapeLine(tell.ShellWord(e.Thread)), present.EscapeLine(tell.ShellWord(e.Request)), present.EscapeLine(strings.Join(names, " ")))
}
