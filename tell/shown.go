package tell

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/present"
)

// Fact shows a fact of a thread driven here as it is appended, as line
// (FactLine, or a child's); under an action's completion, what its
// command printed (the tail), its exit code and time. While an action
// runs, a terminal shows its output live.
func (l *Live) Fact(f facts.Fact, line string) {
	if f.Kind == facts.KindActionCompleted {
		l.Stop()
	}
	l.Line(line)
	switch f.Kind {
	case facts.KindActionStarted:
		if p, err := facts.Decode[facts.ActionStarted](f); err == nil {
			l.Start("running " + present.EscapeLine(p.ActionID))
		}
	case facts.KindActionCompleted:
		if p, err := facts.Decode[facts.ActionCompleted](f); err == nil {
			for _, line := range present.CommandSummary(p.Report, LiveLines) {
				fmt.Fprintf(l.w, "        %s\n", line)
			}
		}
	}
}

// Line writes line above what is drawn (a running command's output): a
// fact another process appended while the command runs.
func (l *Live) Line(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	l.erase(&b)
	b.WriteString(line)
	b.WriteByte('\n')
	io.WriteString(l.w, b.String())
}

// Progress shows on a terminal what the thread does between its facts
// (drive.Progress): a running command's output, live; an MCP server's
// question, and asker asks it (a nil Asker: none); the model's text as it
// streams. Off a terminal it is nil: nothing is shown.
func (l *Live) Progress(asker *Asker) drive.Progress {
	if !l.On() {
		return nil
	}
	turns := &TurnShow{W: l.w}
	return func(e drive.Event) {
		switch e.Kind {
		case drive.EventOutput:
			l.Output(e.Stream, []byte(e.Text))
		case drive.EventAsked:
			l.Asked(e)
			asker.Event(e)
		default:
			turns.Event(e)
		}
	}
}

// Waiting says that a model turn waits before it is tried again, and
// why: "waiting 5s: rate limited by openai (429)".
func Waiting(paint Paint, wait time.Duration, err error) string {
	if wait >= time.Second {
		wait = wait.Round(100 * time.Millisecond)
	} else {
		wait = wait.Round(time.Millisecond)
	}
	return fmt.Sprintf("%s %v: %s", paint.on("yellow", "waiting"), wait, present.EscapeLine(model.Reason(err)))
}

// Retrying says that a failed model turn is tried once more, and why.
func Retrying(paint Paint, st drive.State) string {
	return fmt.Sprintf("%s %s; trying it once more", paint.on("yellow", "retry:"), present.Reason(st.Reason))
}

// InDoubt says, for each action found in doubt (its process died while
// it ran), that it is not run again and what is recorded instead.
func InDoubt(paint Paint, st drive.State) []string {
	var lines []string
	for _, id := range st.InDoubt {
		lines = append(lines, fmt.Sprintf("%s action %s was in progress when its process died: it is in doubt and will not be run again; recording what the workspace shows now",
			paint.on("yellow", "in doubt:"), present.EscapeLine(id)))
	}
	return lines
}
