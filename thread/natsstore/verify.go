package natsstore

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Verify walks id's whole log and checks every link; see thread.Store.
//
// It reads every record from the first through an ordered consumer (not
// the store's cache) and checks: that each record's facts decode, carry the
// seqs it names and one time, and follow on from the record before; the
// hash chain; that the head each record names (its last fact's hash, kind
// and time) is its last fact's; and that no cause of a record was used by
// an earlier record — the facts of one append may share a cause, two
// appends may not.
func (s *Store) Verify(ctx context.Context, id string) error {
	if err := s.begin(ctx, "verify", id); err != nil {
		return err
	}
	defer s.leave()
	if err := s.verify(ctx, id); err != nil {
		return fmt.Errorf("verify %s: %w", id, err)
	}
	return nil
}

func (s *Store) verify(ctx context.Context, id string) error {
	last, err := s.lastRecord(ctx, id)
	if err != nil {
		return err
	}
	if last == nil {
		return thread.ErrNotFound
	}
	type use struct{ seq, record uint64 } // a cause's first fact and its record
	var (
		head   = thread.Head{Thread: id}
		causes = map[string]use{}
	)
	return s.scan(ctx, id, 1, last.seq, last.last() <= fewFacts, func(r *record) error {
		if r.first != head.Seq+1 {
			return corrupt(id, r.first, "the record at stream seq %d starts at seq %d, but the record before ends at seq %d", r.seq, r.first, head.Seq)
		}
		var lastFact facts.Fact
		err := s.readFacts(ctx, id, r, r.first, func(f facts.Fact) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if f.Prev != head.Hash {
				return corrupt(id, f.Seq, "prev is %s, but seq %d hashes to %s", f.Prev, f.Seq-1, head.Hash)
			}
			if !f.At.Equal(r.at) {
				return corrupt(id, f.Seq, "appended at %s, but the other facts of its append at %s", f.At, r.at)
			}
			switch u, ok := causes[f.Cause]; {
			case !ok:
				causes[f.Cause] = use{seq: f.Seq, record: r.seq}
			case u.record != r.seq:
				return corrupt(id, f.Seq, "cause %q was already used at seq %d, by an earlier append", f.Cause, u.seq)
			}
			head = thread.Head{Thread: id, Seq: f.Seq, Hash: f.Hash(), Kind: f.Kind, At: f.At}
			lastFact = f
			return nil
		})
		if err != nil {
			return err
		}
		if head.Hash != r.hash || lastFact.Kind != r.kind {
			return corrupt(id, r.last(), "the record at stream seq %d names a head (hash %s, kind %s) that is not its last fact's (hash %s, kind %s)", r.seq, r.hash, r.kind, head.Hash, lastFact.Kind)
		}
		return nil
	})
}
