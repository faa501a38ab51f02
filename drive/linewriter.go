package drive

import (
	"io"
	"sync"

	"github.com/seed-7cc7a084/harness/facts"
)

// LineWriter writes the stream's lines to W as they come, each whole:
// progress comes from several goroutines.
type LineWriter struct {
	W io.Writer
	// mu guards W while a line is written, and ended.
	mu    sync.Mutex
	ended bool
}

// line writes one line.
func (l *LineWriter) line(b []byte, err error) error {
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.W.Write(b)
	return err
}

// Fact writes a fact's line.
func (l *LineWriter) Fact(f facts.Fact) error { return l.line(AppendFactLine(nil, f)) }

// Progress writes a progress event's line (a Progress): ephemeral, so a
// line lost is nothing lost.
func (l *LineWriter) Progress(e Event) { _ = l.line(AppendProgressLine(nil, e)) }

// Result writes the result line, the stream's last.
func (l *LineWriter) Result(r Result) error {
	l.mu.Lock()
	l.ended = true
	l.mu.Unlock()
	return l.line(AppendResultLine(nil, r))
}

// Ended reports whether the result line was written.
func (l *LineWriter) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}
