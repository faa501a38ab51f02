// Package ask asks a person at a terminal: a line, one key (the
// terminal in raw mode while it waits), or text not echoed. Only what is
// typed after a question is put answers it.
package ask

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/seed-7cc7a084/harness/present"
)

// MaxLine bounds a line typed as an answer.
const MaxLine = 64 << 10

// Prompter asks a person at the terminal. Input is read by one
// goroutine, so that an interrupt (Ctrl-C), or an answer given elsewhere,
// ends a wait for an answer. A choice (Key) is one key: the terminal is
// put in raw mode while it waits for it, and Enter after the key is still
// accepted; text (Line) is a line, edited as the terminal edits lines.
// Only what is typed after a question is put answers it: a key typed
// ahead, or late for a question that is gone, answers nothing.
type Prompter struct {
	out    io.Writer
	chunks chan chunk
	// fd is the input's terminal, or -1: keys are then read from lines.
	fd int
	// The state of the goroutine that asks (no one else reads it):
	// pending is input read and not yet taken, each byte with when it
	// was read; since: input read before it answers nothing (the time
	// the question being asked was put);
	// swallow: until then, an Enter read is the key just taken's (typed
	// with it), not an answer of its own; at: when the byte next gave
	// last was read; eof: the input ended.
	pending []typed
	since   time.Time
	swallow time.Time
	at      time.Time
	eof     bool
}

// chunk is what one read of the input gave.
type chunk struct {
	data []byte
	err  error
	at   time.Time
}

// typed is one byte of input, and when it was read.
type typed struct {
	b  byte
	at time.Time
}

// New asks on out, reading in: a terminal's keys one at a time where
// in is one (Key), else lines.
func New(in io.Reader, out io.Writer) *Prompter {
	p := &Prompter{out: out, chunks: make(chan chunk), fd: -1}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.fd = int(f.Fd())
	}
	go func() {
		buf := make([]byte, 512)
		for {
			n, err := in.Read(buf)
			p.chunks <- chunk{bytes.Clone(buf[:n]), err, time.Now()}
			if err != nil {
				close(p.chunks)
				return
			}
		}
	}()
	return p
}

// ErrNoAnswer: the input ended before an answer.
var ErrNoAnswer = errors.New("no answer")

// Fresh puts a new question: input typed before now — a key typed ahead,
// or late for a request that was answered elsewhere while the person
// typed — answers nothing, and is dropped.
func (p *Prompter) Fresh() { p.since = time.Now() }

// next takes the next byte typed for the request being asked; ok is
// false when the input ended.
func (p *Prompter) next(ctx context.Context) (b byte, ok bool, err error) {
	for {
		for len(p.pending) > 0 {
			t := p.pending[0]
			p.pending = p.pending[1:]
			if t.at.Before(p.since) {
				if isEnter(t.b) && !t.at.After(p.swallow) {
					p.swallow = time.Time{} // the key's Enter, dropped with it
				}
				continue // typed for a request that is gone
			}
			p.at = t.at
			return t.b, true, nil
		}
		if p.eof {
			return 0, false, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case c, open := <-p.chunks:
			for _, b := range c.data {
				p.pending = append(p.pending, typed{b, c.at})
			}
			if !open || c.err != nil {
				p.eof = true
			}
		}
	}
}

// KeyEnter is how soon after a key an Enter is taken as typed with it
// (a person used to Enter after each answer): later, it is an answer of
// its own — the Enter that keeps a rule shown after the key, say.
const KeyEnter = 400 * time.Millisecond

// swallowed reports whether b, just read, is an Enter typed with the key
// taken before it; any byte ends the swallow.
func (p *Prompter) swallowed(b byte) bool {
	until := p.swallow
	p.swallow = time.Time{}
	return isEnter(b) && !p.at.After(until)
}

// isEnter reports whether b ends a line (a terminal in raw mode sends
// Enter as a carriage return).
func isEnter(b byte) bool { return b == '\n' || b == '\r' }

// Line prints question and returns the line typed, trimmed. An interrupt
// returns the context's error.
func (p *Prompter) Line(ctx context.Context, question string) (string, error) {
	p.Fresh()
	fmt.Fprint(p.out, question)
	var line []byte
	for {
		b, ok, err := p.next(ctx)
		if err != nil {
			fmt.Fprintln(p.out)
			return "", err
		}
		if !ok {
			if len(line) == 0 {
				fmt.Fprintln(p.out)
				return "", ErrNoAnswer
			}
			return strings.TrimSpace(string(line)), nil
		}
		if p.swallowed(b) {
			continue // the Enter after the key just taken
		}
		if isEnter(b) {
			return strings.TrimSpace(string(line)), nil
		}
		if len(line) >= MaxLine {
			return "", fmt.Errorf("an answer longer than %d bytes", MaxLine)
		}
		line = append(line, b)
	}
}

// Key prints question and returns the one key typed, lower case, ""
// for Enter alone. On a terminal it reads the key in raw mode, so that it
// needs no Enter (an Enter typed after it is the key's). Ctrl-C
// interrupts, as at a line. Off a terminal it reads a line.
func (p *Prompter) Key(ctx context.Context, question string) (string, error) {
	if p.fd < 0 {
		return p.Line(ctx, question)
	}
	p.Fresh()
	fmt.Fprint(p.out, question)
	old, err := term.MakeRaw(p.fd)
	if err != nil {
		return "", fmt.Errorf("read a key: %w", err)
	}
	var b byte
	var ok bool
	for {
		b, ok, err = p.next(ctx)
		if ok && p.swallowed(b) {
			continue
		}
		break
	}
	_ = term.Restore(p.fd, old)
	switch {
	case err != nil:
		fmt.Fprintln(p.out)
		return "", err
	case !ok || b == 4: // Ctrl-D
		fmt.Fprintln(p.out)
		return "", ErrNoAnswer
	case b == 3: // Ctrl-C: raw mode makes it a key; make it the interrupt it is
		fmt.Fprintln(p.out)
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			return "", err
		}
		<-ctx.Done()
		return "", ctx.Err()
	}
	if isEnter(b) {
		fmt.Fprintln(p.out)
		return "", nil
	}
	p.swallow = time.Now().Add(KeyEnter) // an Enter typed with the key is the key's
	key := strings.ToLower(present.EscapeLine(string(b)))
	fmt.Fprintln(p.out, key)
	return key, nil
}

// Hidden is Line with what is typed not echoed, where the terminal can
// hide it; question says the prompt, told whether it is hidden.
func (p *Prompter) Hidden(ctx context.Context, question func(hidden bool) string) (string, error) {
	if p.fd < 0 {
		return p.Line(ctx, question(false))
	}
	restore, hidden := echoOff(p.fd)
	defer restore()
	return p.Line(ctx, question(hidden))
}
