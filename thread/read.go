package thread

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
)

// ReadAt returns the fact of thread id at seq. A thread with no fact
// there is a *SeqError (ErrNoSeq); an error of the read (ErrNotFound for
// a thread with no facts, a *CorruptError) is returned wrapped with the
// thread and seq.
func ReadAt(ctx context.Context, s Store, id string, seq uint64) (facts.Fact, error) {
	for f, err := range s.Read(ctx, id, seq) {
		if err != nil {
			return facts.Fact{}, fmt.Errorf("read %s at seq %d: %w", id, seq, err)
		}
		if f.Seq != seq {
			break
		}
		return f, nil
	}
	return facts.Fact{}, &SeqError{Thread: id, Seq: seq}
}

// FirstAfter reads the facts of thread id appended after *after, up to
// the head it finds first, and returns the first for which match is
// true; *after moves on to the last fact read. ok is false when none
// matched, or the store cannot be read now (a watch looks again later:
// what it has not read it reads then). It is the one step of every watch
// of a log for what someone else appends (a stop, an answer).
func FirstAfter(ctx context.Context, s Store, id string, after *uint64, match func(facts.Fact) bool) (f facts.Fact, ok bool) {
	h, err := s.Head(ctx, id)
	if err != nil || h.Seq <= *after {
		return facts.Fact{}, false
	}
	for f, err := range s.Read(ctx, id, *after+1) {
		if err != nil || f.Seq > h.Seq {
			return facts.Fact{}, false
		}
		*after = f.Seq
		if match(f) {
			return f, true
		}
	}
	return facts.Fact{}, false
}
