package tell

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/present"
)

// What a command does is shown as it does it: on a terminal, while an
// action runs, the last lines of its output under a spinner with the time
// it has taken; after it, wherever the output goes, the tail of what it
// printed, its exit code and its time. A command's output is its own —
// the model's, in the end — and is escaped before it is shown.

// LiveLines is how many lines of a running command's output are shown.
const LiveLines = 5

// Live shows the output of the action running, on a terminal. A nil
// Live, or one that is not on, shows nothing.
type Live struct {
	w  io.Writer
	on bool // the output is a terminal

	// mu guards what follows: what is drawn, and the channels of the
	// drawing in progress.
	mu      sync.Mutex
	label   string
	started time.Time
	lines   []string // the last complete lines, escaped
	partial []byte
	drawn   int // lines drawn under the last fact line
	done    chan struct{}
	ended   chan struct{}
	// held: a prompt has the terminal, and nothing is drawn.
	held bool

	// Hint is how to answer a question an MCP server asks (Asked), said
	// under it; nil says none.
	Hint func(e drive.Event) string
}

// Hold stops drawing while a person is asked at the terminal (an MCP
// server's question); what it returns lets drawing go on.
func (l *Live) Hold() func() {
	if l == nil || !l.on {
		return func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	l.erase(&b)
	io.WriteString(l.w, b.String())
	l.held = true
	return func() {
		l.mu.Lock()
		l.held = false
		l.mu.Unlock()
	}
}

// NewLive shows on w, when on (w is a terminal).
func NewLive(w io.Writer, on bool) *Live { return &Live{w: w, on: on} }

// On reports whether l shows anything.
func (l *Live) On() bool { return l != nil && l.on }

// Start shows label while an action runs, from now until stop.
func (l *Live) Start(label string) {
	if l == nil || !l.on {
		return
	}
	l.Stop()
	l.mu.Lock()
	l.label, l.started, l.lines, l.partial, l.drawn = label, time.Now(), nil, nil, 0
	l.done, l.ended = make(chan struct{}), make(chan struct{})
	done, ended := l.done, l.ended
	l.mu.Unlock()
	go func() {
		defer close(ended)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		wait := time.NewTimer(250 * time.Millisecond) // a quick action shows nothing
		defer wait.Stop()
		shown := false
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-wait.C:
				shown = true
			case <-t.C:
			}
			if shown {
				l.draw(i)
			}
		}
	}()
}

// Output is given a running command's output (drive.EventOutput).
func (l *Live) Output(_ string, p []byte) {
	if l == nil || !l.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, present.EscapeLine(strings.TrimRight(string(l.partial[:i]), "\r")))
		l.partial = l.partial[i+1:]
	}
	if len(l.lines) > LiveLines {
		l.lines = l.lines[len(l.lines)-LiveLines:]
	}
	if len(l.partial) > 4096 {
		l.partial = l.partial[len(l.partial)-4096:]
	}
}

// TurnShow shows model turns on a terminal: a spinner while the model
// works, and its text as it streams (escaped: the model's text is data,
// and a terminal must not be steered by it). The model.turn fact is
// appended (and printed) only once the turn is complete.
type TurnShow struct {
	W io.Writer

	// mu guards what follows: the turn shown now.
	mu       sync.Mutex
	stop     func() // the spinner's; nil when none runs
	text     *present.Writer
	streamed bool
}

// Event shows a turn's progress; output events are live's.
func (t *TurnShow) Event(e drive.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
	switch e.Kind {
	case drive.EventTurnStarted:
		t.stop = Spinner(t.W, fmt.Sprintf("model turn %d…", e.Turn))
		t.text, t.streamed = present.NewWriter(t.W), false
	case drive.EventText:
		if t.text == nil {
			t.text = present.NewWriter(t.W)
		}
		t.streamed = true
		t.text.Write([]byte(e.Text))
	case drive.EventTurnEnded:
		if t.streamed {
			t.text.Flush()
			fmt.Fprintln(t.W)
			if e.Error != "" {
				// The turn is tried again from its start, or fails.
				fmt.Fprintln(t.W, "(the stream stopped: the text above is not kept)")
			}
		}
		t.text, t.streamed = nil, false
	}
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// draw redraws the lines and the spinner in place of what was drawn.
func (l *Live) draw(frame int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return
	}
	var b strings.Builder
	l.erase(&b)
	show := l.lines
	if len(l.partial) > 0 {
		show = append(append([]string(nil), show...), present.EscapeLine(string(l.partial)))
		if len(show) > LiveLines {
			show = show[len(show)-LiveLines:]
		}
	}
	for _, line := range show {
		fmt.Fprintf(&b, "      │ %s\n", present.Cut(line, 110))
	}
	fmt.Fprintf(&b, "%s %s · %s\n", spinnerFrames[frame%len(spinnerFrames)], l.label, present.Elapsed(time.Since(l.started)))
	l.drawn = len(show) + 1
	io.WriteString(l.w, b.String())
}

// erase moves up over what was drawn and clears it.
func (l *Live) erase(b *strings.Builder) {
	if l.drawn > 0 {
		fmt.Fprintf(b, "\x1b[%dF\x1b[J", l.drawn)
		l.drawn = 0
	}
}

// Stop ends the display and erases it.
func (l *Live) Stop() {
	if l == nil || !l.on {
		return
	}
	l.mu.Lock()
	done, ended := l.done, l.ended
	l.done, l.ended = nil, nil
	l.mu.Unlock()
	if done == nil {
		return
	}
	close(done)
	<-ended
	l.mu.Lock()
	var b strings.Builder
	l.erase(&b)
	io.WriteString(l.w, b.String())
	l.mu.Unlock()
}

// Spinner shows a spinner on w after a moment, until stop is called; stop
// erases it.
func Spinner(w io.Writer, label string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(250 * time.Millisecond)
		defer t.Stop()
		shown := false
		for i := 0; ; i++ {
			select {
			case <-done:
				if shown {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-t.C:
				shown = true
				fmt.Fprintf(w, "\r%s %s", spinnerFrames[i%len(spinnerFrames)], label)
				t.Reset(100 * time.Millisecond)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// Asked shows, on a terminal, a question an MCP server asked while the
// action runs (drive.EventAsked): everything of it is the server's,
// escaped; the command waits for the answer, given on the page, the API,
// MCP or another terminal with harness answer --elicit.
func (l *Live) Asked(e drive.Event) {
	if l == nil || !l.on || e.Elicit == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	l.erase(&b)
	WriteAsked(&b, e)
	if l.Hint != nil {
		fmt.Fprintln(&b, l.Hint(e))
	}
	io.WriteString(l.w, b.String())
}

// WriteAsked writes the question e for a person: the server's message
// and fields, escaped, and a word on what looks like a secret.
func WriteAsked(w io.Writer, e drive.Event) {
	el := e.Elicit
	fmt.Fprintf(w, "? the MCP server %s asks, during action %s (question %s) — its words, not harness's:\n",
		present.EscapeLine(el.Server), present.EscapeLine(e.ActionID), present.EscapeLine(e.Request))
	fmt.Fprintf(w, "    %s\n", present.EscapeLine(e.Text))
	for _, f := range drive.ElicitFields(el) {
		line := fmt.Sprintf("    field %s (%s", present.EscapeLine(f.Name), f.Type)
		if f.Required {
			line += ", required"
		}
		if len(f.Enum) > 0 {
			line += ", one of " + present.EscapeLine(strings.Join(f.Enum, " | "))
		}
		if f.Default != "" {
			line += ", default " + present.EscapeLine(strconv.Quote(f.Default))
		}
		line += ")"
		if f.Title != "" {
			line += ": " + present.EscapeLine(f.Title)
		}
		fmt.Fprintln(w, line)
	}
	if len(el.Sensitive) > 0 {
		fmt.Fprintf(w, "  ! it asks for what looks like a secret (%s): harness never asks for one this way; give it only if you trust %s (NAME=- reads it from stdin, off the command line)\n",
			present.EscapeLine(strings.Join(el.Sensitive, ", ")), present.EscapeLine(el.Server))
	}
}

// FieldLabel names a field of a server's form, escaped, with its type and
// whether it is required.
func FieldLabel(f drive.ElicitField) string {
	label := present.EscapeLine(f.Name)
	if f.Title != "" {
		label += " " + present.EscapeLine("("+f.Title+")")
	}
	kind := f.Type
	if f.Type == "boolean" {
		kind += ", yes or no"
	}
	if len(f.Enum) > 0 {
		kind += ", one of " + strconv.Itoa(len(f.Enum)) + " (a number or the value)"
	}
	switch {
	case f.Default != "":
		if f.Required {
			kind += ", required"
		}
		kind += ", Enter takes the default " + present.EscapeLine(strconv.Quote(f.Default))
	case f.Required:
		kind += ", required"
	default:
		kind += ", optional: Enter leaves it out"
	}
	return fmt.Sprintf("%s [%s]", label, kind)
}
