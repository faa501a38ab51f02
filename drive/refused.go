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
	// Each component's refusal, joined: the ones a fact was not for say
	// nothing to the person.
	var why []string
	for _, line := range strings.Split(msg, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "not addressed to this component") {
			why = append(why, line)
		}
	}
	if len(why) > 0 {
		msg = strings.Join(why, "; ")
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
