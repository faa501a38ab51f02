package stock

import (
	"context"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/thread"
)

// Fork starts the thread as from the facts 1 to at of the thread id
// (rewind.Fork: a seq the thread has not is a *rewind.SeqError, an id
// taken harness.ErrThreadExists) and returns its head and how it stands.
// An as of "" is rewind.ForkID(id, at).
func (s *Session) Fork(ctx context.Context, id string, at uint64, as string) (thread.Head, drive.State, error) {
	if as == "" {
		as = rewind.ForkID(id, at)
	}
	h, err := rewind.Fork(ctx, s.Store, id, at, as)
	if err != nil {
		return h, drive.State{}, err
	}
	st, err := s.Inspect(ctx, as)
	return h, st, err
}
