package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// StartOrResume is Start asked to continue: a thread that already began
// with this same message (a start retried after a crash, or by a second
// process) is resumed instead of refused. A thread that began with
// another message, or not by a start, is still ErrThreadExists: a new
// message is never dropped silently.
func (t *Thread) StartOrResume(ctx context.Context, message string, also ...Ingress) (Outcome, error) {
	out, err := t.Start(ctx, message, also...)
	if !errors.Is(err, ErrThreadExists) {
		return out, err
	}
	st, ferr := t.folded(ctx)
	if ferr != nil {
		return out, ferr
	}
	seq, ok, ferr := st.fold.Cause(facts.IngressCause(StartKey))
	if ferr != nil {
		return out, ferr
	}
	if !ok {
		return out, fmt.Errorf("%w (it was not begun by a start)", err)
	}
	f, rerr := thread.ReadAt(ctx, t.rt.Store, t.id, seq)
	if rerr != nil {
		return out, rerr
	}
	if m, derr := facts.Decode[facts.UserMessage](f); derr != nil || f.Kind != facts.KindUserMessage || m.Text != message {
		return out, fmt.Errorf("%w (it began with another message)", err)
	}
	return t.Resume(ctx)
}
