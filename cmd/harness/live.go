package main

import (
	"bytes"
	"fmt"
	"io"
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

// liveLines is how many lines of a running command's output are shown.
const liveLines = 5

// live shows the output of the action running, on a terminal.
type live struct {
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
}

// hold stops drawing while a person is asked at the terminal (an MCP
// server's question); what it returns lets drawing go on.
func (l *live) hold() func() {
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

func newLive(w io.Writer, on bool) *live { return &live{w: w, on: on} }

// start shows label while an action runs, from now until stop.
func (l *live) start(label string) {
	if l == nil || !l.on {
		return
	}
	l.stop()
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

// output is given a running command's output (drive.EventOutput).
func (l *live) output(_ string, p []byte) {
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
	if len(l.lines) > liveLines {
		l.lines = l.lines[len(l.lines)-liveLines:]
	}
	if len(l.partial) > 4096 {
		l.partial = l.partial[len(l.partial)-4096:]
	}
}

// turnShow shows model turns on a terminal: a spinner while the model
// works, and its text as it streams (escaped: the model's text is data,
// and a terminal must not be steered by it). The model.turn fact is
// appended (and printed) only once the turn is complete.
type turnShow struct {
	w io.Writer

	// mu guards what follows: the turn shown now.
	mu       sync.Mutex
	stop     func() // the spinner's; nil when none runs
	text     *present.Writer
	streamed bool
}

// event shows a turn's progress; output events are live's.
func (t *turnShow) event(e drive.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
	switch e.Kind {
	case drive.EventTurnStarted:
		t.stop = spinner(t.w, fmt.Sprintf("model turn %d…", e.Turn))
		t.text, t.streamed = present.NewWriter(t.w), false
	case drive.EventText:
		if t.text == nil {
			t.text = present.NewWriter(t.w)
		}
		t.streamed = true
		t.text.Write([]byte(e.Text))
	case drive.EventTurnEnded:
		if t.streamed {
			t.text.Flush()
			fmt.Fprintln(t.w)
			if e.Error != "" {
				// The turn is tried again from its start, or fails.
				fmt.Fprintln(t.w, "(the stream stopped: the text above is not kept)")
			}
		}
		t.text, t.streamed = nil, false
	}
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// draw redraws the lines and the spinner in place of what was drawn.
func (l *live) draw(frame int) {
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
		if len(show) > liveLines {
			show = show[len(show)-liveLines:]
		}
	}
	for _, line := range show {
		fmt.Fprintf(&b, "      │ %s\n", cut(line, 110))
	}
	fmt.Fprintf(&b, "%s %s · %s\n", spinnerFrames[frame%len(spinnerFrames)], l.label, present.Elapsed(time.Since(l.started)))
	l.drawn = len(show) + 1
	io.WriteString(l.w, b.String())
}

// erase moves up over what was drawn and clears it.
func (l *live) erase(b *strings.Builder) {
	if l.drawn > 0 {
		fmt.Fprintf(b, "\x1b[%dF\x1b[J", l.drawn)
		l.drawn = 0
	}
}

// stop ends the display and erases it.
func (l *live) stop() {
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

// The renderings of present that records.go and threads.go call by
// these names.
var (
	cut            = present.Cut
	commandSummary = present.CommandSummary
	tokenCount     = present.TokenCount
)
