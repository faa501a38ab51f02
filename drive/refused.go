package drive

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// Refused says a fact of kind the thread id's fold would not take
// plainly — "thread t1 does not take this confirmation.answered:
// confirmation "x": no such request" — not the layers the refusal came
// through; the error still matches what err matches. Any other error is
// returned as it is.
func Refused(err error, id string, kind facts.Kind) error {
	if !errors.Is(err, fold.ErrRefused) {
		return err
	}
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, fold.ErrRefused.Error()+": "+string(kind)+": "); ok {
		msg = rest
	}
	// The components' refusals, joined (fold.Fold.Accept): one that only
	// says the fact was not for it says nothing to the person.
	if parts := refusals(err); len(parts) > 0 {
		var why []string
		for _, e := range parts {
			if m := strings.TrimSpace(e.Error()); m != "" && !strings.HasPrefix(m, fold.ErrNotAddressed.Error()) {
				why = append(why, m)
			}
		}
		if len(why) > 0 {
			msg = strings.Join(why, "; ")
		}
	}
	return &plainError{msg: fmt.Sprintf("thread %s does not take this %s: %s", id, kind, msg), err: err}
}

// plainError is err said for a person, still matching what err matches.
type plainError struct {
	msg string
	err error
}

func (e *plainError) Error() string { return e.msg }
func (e *plainError) Unwrap() error { return e.err }

// refusals are the components' own refusals in err, a fold.ErrRefused
// made by fold.Fold.Accept ("%w: KIND: %w" of ErrRefused and the
// components' errors joined); none when err is not one.
func refusals(err error) []error {
	type multi interface{ Unwrap() []error }
	for e := err; e != nil; {
		if m, ok := e.(multi); ok {
			for _, x := range m.Unwrap() {
				if x == fold.ErrRefused {
					continue
				}
				if j, ok := x.(multi); ok {
					return j.Unwrap()
				}
				return []error{x}
			}
			return nil
		}
		e = errors.Unwrap(e)
	}
	return nil
}
