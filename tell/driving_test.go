package tell_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// terminal runs a thread that asks to write a file on a Terminal with
// output out and nobody to ask: it parks on the confirmation.
func terminal(t *testing.T, out string) (*tell.Terminal, drive.State, *bytes.Buffer, *[]any) {
	t.Helper()
	s, m, _ := scriptedSession(t, `{"text": "writing", "tool_calls": [{"id": "c1", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"hi\\n\"}"}]}
`)
	var w, errw bytes.Buffer
	var docs []any
	rep := tell.Report{Teller: tell.Teller{W: &w, Paint: func(_, s string) string { return s },
		Answer: func(id string, p drive.Pending) string { return "answer " + id + " " + drive.Ref(p) }},
		Output: out, Lines: &drive.LineWriter{W: &w}, Session: s,
		JSON: func(v any) error { docs = append(docs, v); return nil },
		GoOn: func(drive.State) string { return "go on" }}
	term, err := tell.NewTerminal(tell.Terminal{Report: rep, Err: &errw, Say: func(f string, a ...any) { fmt.Fprintf(&errw, f, a...) },
		Hints: tell.TerminalHints{NoSandbox: func(err error) string { return "no sandbox: " + err.Error() }}},
		drive.Approval{}, "", tell.TerminalOptions{Model: m})
	require.NoError(t, err)
	st, err := term.Run(t.Context(), stock.NewThread{Message: facts.UserMessage{Text: "write a.txt"}, By: "ana"})
	require.NoError(t, err)
	return term, st, &w, &docs
}

// A run on a Terminal starts the next thread, shows each fact as a line
// naming its kind, and tells the parked state with how to answer: exit 3.
func TestTerminalRunTellsParked(t *testing.T) {
	term, st, w, _ := terminal(t, tell.OutputText)
	require.Equal(t, "t1", term.ID)
	require.Equal(t, harness.StatusParked, st.Status)
	require.NotEmpty(t, term.Appended)
	require.Contains(t, w.String(), "model.turn")
	code, err := term.Tell(st, term.Appended)
	require.NoError(t, err)
	require.Equal(t, 3, code)
	require.Contains(t, w.String(), "parked:")
	require.Contains(t, w.String(), "answer t1 "+drive.Ref(st.Waits[0]))
}

// -o stream-json: each fact is a line of the stream, and the result line
// ends it with the exit code; nothing is written for a person.
func TestTerminalStream(t *testing.T) {
	term, st, w, _ := terminal(t, tell.OutputStream)
	code, err := term.Tell(st, term.Appended)
	require.NoError(t, err)
	require.Equal(t, 3, code)
	lines := strings.Split(strings.TrimSpace(w.String()), "\n")
	require.Greater(t, len(lines), 2)
	for _, l := range lines[:len(lines)-1] {
		require.True(t, strings.HasPrefix(l, `{"type":"fact"`) || strings.HasPrefix(l, `{"type":"progress"`), l)
	}
	require.Contains(t, lines[len(lines)-1], `"type":"result"`)
	require.Contains(t, lines[len(lines)-1], `"exit":3`)
	require.NotContains(t, w.String(), "parked:")
}

// -o json: the document is the state with the preview of the call to
// confirm (the thread works in the session's workspace), the answers and
// the facts the command appended.
func TestTerminalJSON(t *testing.T) {
	term, st, w, docs := terminal(t, tell.OutputJSON)
	require.Empty(t, w.String(), "facts are in the document, not shown")
	_, err := term.Tell(st, term.Appended)
	require.NoError(t, err)
	require.Len(t, *docs, 1)
	r := (*docs)[0].(tell.Result)
	require.Equal(t, "go on", r.Hint)
	require.Len(t, r.Facts, len(term.Appended))
	require.Equal(t, "answer t1 "+drive.Ref(st.Waits[0]), r.Answers[drive.Ref(st.Waits[0])])
	require.Contains(t, r.Waits[0].Preview, "a.txt")
}

// A thread stopped at the most steps says the command that goes on; an
// interrupt is the hint's error, any other error itself.
func TestTerminalStepLimitAndInterrupt(t *testing.T) {
	term, _, _, _ := terminal(t, tell.OutputText)
	st := term.StepLimit(drive.State{Thread: "t 1", Status: harness.StatusStepLimit})
	require.True(t, strings.HasSuffix(st.Reason, ": harness resume 't 1'"), st.Reason)
	term.Hints.Interrupted = func(id string) error { return errors.New("resumable " + id) }
	ctx, cancel := contextCancelled(t)
	defer cancel()
	require.EqualError(t, term.Interrupted(ctx, "t1", errors.New("boom")), "resumable t1")
	require.EqualError(t, term.Interrupted(t.Context(), "t1", errors.New("boom")), "boom")
}

func contextCancelled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}

// A Terminal given no hints says the plain error: an interrupt leaves
// the thread resumable, and says so.
func TestTerminalWithoutHints(t *testing.T) {
	term, _, _, _ := terminal(t, tell.OutputText)
	term.Hints = tell.TerminalHints{}
	ctx, cancel := contextCancelled(t)
	defer cancel()
	err := term.Interrupted(ctx, "t1", errors.New("boom"))
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "thread t1 is resumable")
}
