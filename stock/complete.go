package stock

import (
	"context"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
)

// CompletionWait bounds the look at the store a shell completion takes.
const CompletionWait = 2 * time.Second

// Complete is what of says of the store of the workspace p, for a shell
// completion: the store is opened read-only, nothing created, with no
// wait for a store another process holds and nothing said, and the look
// is cut after CompletionWait. A store that cannot be read in time
// completes nothing.
func Complete(ctx context.Context, p Place, getenv func(string) string, of func(ctx context.Context, s *Session) ([]drive.Completion, error)) []drive.Completion {
	ctx, cancel := context.WithTimeout(ctx, CompletionWait)
	defer cancel()
	s, err := OpenSession(ctx, p, SessionOptions{Getenv: getenv, Lenient: true, ReadOnly: true})
	if err != nil {
		return nil
	}
	defer s.Close()
	cs, err := of(ctx, s)
	if err != nil {
		return nil
	}
	return cs
}

// ThreadCompletions are the session's thread ids that start with prefix,
// the one active last first, each described by its status and title
// (drive.ThreadCompletions).
func (s *Session) ThreadCompletions(ctx context.Context, prefix string) ([]drive.Completion, error) {
	rows, _, err := s.Threads(ctx, drive.ListOptions{})
	return drive.ThreadCompletions(rows, prefix), err
}
