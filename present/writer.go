package present

import (
	"io"
	"unicode/utf8"
)

// Writer escapes text for a terminal as it is written, for text that
// arrives in pieces (a model's streamed reply): what EscapeText does to a
// whole string, it does to the stream, line feeds kept. A UTF-8 sequence
// split between two writes is held until the rest arrives; Flush writes a
// sequence left incomplete at the end, escaped.
type Writer struct {
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence at the end of the last write
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it. It reports len(p) written when the
// escaped text was written whole.
func (w *Writer) Write(p []byte) (int, error) {
	buf := append(w.pending, p...)
	w.pending = nil
	// Hold back an incomplete sequence at the end.
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	w.pending = append(w.pending, buf[cut:]...)
	if _, err := io.WriteString(w.w, EscapeText(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes an incomplete UTF-8 sequence held back, escaped.
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	s := EscapeText(string(w.pending))
	w.pending = nil
	_, err := io.WriteString(w.w, s)
	return err
}
