package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// snapshotCheck compares the snapshots a store keeps of a thread with the
// fold of its log, as the fold reaches each one's seq. A nil check checks
// nothing.
type snapshotCheck struct {
	thread string
	kept   map[uint64]thread.Snapshot // by seq; membership only
	first  *SnapshotMismatchError     // the first that fails, by seq
}

// keptSnapshots lists the thread's snapshots; a damaged record is a
// failure of the check at its seq.
func keptSnapshots(ctx context.Context, store thread.Store, id string) (*snapshotCheck, error) {
	snaps := thread.SnapshotsOf(store)
	if snaps == nil {
		return nil, nil
	}
	c := &snapshotCheck{thread: id, kept: map[uint64]thread.Snapshot{}}
	for s, err := range snaps.ListSnapshots(ctx, id) {
		var se *thread.SnapshotError
		switch {
		case errors.As(err, &se):
			c.fail(se.Seq, "its record is damaged: "+se.Err.Error())
		case err != nil:
			return nil, fmt.Errorf("verify %s: %w", id, err)
		default:
			c.kept[s.Seq] = s
		}
	}
	return c, nil
}

func (c *snapshotCheck) fail(seq uint64, reason string) {
	if c.first == nil || seq < c.first.Seq {
		c.first = &SnapshotMismatchError{Thread: c.thread, Seq: seq, Reason: reason}
	}
}

// check compares the snapshot kept at f's seq, if any, with the fold,
// which has just stepped f.
func (c *snapshotCheck) check(actor harness.Actor, fd *fold.Fold[harness.Services], f facts.Fact) {
	if c == nil {
		return
	}
	s, ok := c.kept[f.Seq]
	if !ok {
		return
	}
	delete(c.kept, f.Seq)
	if s.Hash != f.Hash() {
		c.fail(f.Seq, fmt.Sprintf("its hash %s is not the hash of the fact at its seq (%s)", s.Hash, f.Hash()))
		return
	}
	want, err := fd.Snapshot()
	if err != nil {
		c.fail(f.Seq, "the fold of the log there keeps no snapshot: "+err.Error())
		return
	}
	if bytes.Equal(want, s.Data) {
		return
	}
	// Not what the fold makes. One of another version is not this
	// program's to check; anything else is wrong.
	_, rerr := fold.Restore(actor.New(), s.Data, f, noPrefix{f}, noPrefix{f})
	switch {
	case errors.Is(rerr, fold.ErrSnapshotVersion):
	case rerr != nil:
		c.fail(f.Seq, "it does not restore: "+rerr.Error())
	default:
		c.fail(f.Seq, "it restores, but it is not what the fold of the log up to it makes")
	}
}

// result is the first failure, counting snapshots past the log's end.
func (c *snapshotCheck) result(end uint64) error {
	if c == nil {
		return nil
	}
	for seq := range c.kept {
		c.fail(seq, fmt.Sprintf("the log ends at seq %d", end))
	}
	if c.first == nil {
		return nil
	}
	return c.first
}

// noPrefix is the prefix of a snapshot that is only restored to be told
// apart: nothing of it is read.
type noPrefix struct{ last facts.Fact }

func (p noPrefix) Thread() string { return p.last.Thread }
func (p noPrefix) Seq() uint64    { return p.last.Seq }
func (p noPrefix) Read(uint64) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		yield(facts.Fact{}, errors.New("not read"))
	}
}
func (p noPrefix) Cause(string) (uint64, bool, error) { return 0, false, errors.New("not asked") }
