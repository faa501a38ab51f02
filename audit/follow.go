package audit

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// Follower keeps a thread's verification up to date as its log grows: each
// Update verifies only the facts appended since the one before (a
// Verifier kept between them), so a page that shows a thread's verdict
// after every new fact pays for each fact once, not for the whole log
// each time. Its verdict is VerifyLog's, with these differences of cost:
//
//   - a snapshot kept at the seq the follower has reached is checked
//     against its fold there; one kept at an earlier seq, which it passed
//     before the snapshot was written, makes that Update verify the whole
//     log again (once per such snapshot: a resume keeps one where it
//     leaves the thread);
//   - a thread of a tree (a parent, a child, a fork) is verified whole at
//     every Update, as VerifyLog does: its links read other threads;
//   - the store's own indexes (thread.Store.Verify) are checked when the
//     follower starts, and by VerifyLog, not at every Update.
//
// A Follower is not safe for concurrent use.
type Follower struct {
	store thread.Store
	actor harness.Actor // the root's, as VerifyLog takes it
	id    string
	v     *Verifier // nil until the first Update
	// checked are the snapshots compared with the fold: seq → the digest
	// of the record checked (one put again under its seq is checked
	// again).
	checked map[uint64][32]byte
	snapErr error // the first snapshot that failed
}

// Follow returns a follower of thread id of store, folded by actor as
// VerifyLog folds it. It reads nothing until Update.
func Follow(store thread.Store, actor harness.Actor, id string) *Follower {
	return &Follower{store: store, actor: actor, id: id, checked: map[uint64][32]byte{}}
}

// Update verifies the facts appended since the last Update and returns
// the verdict on the whole log as it now stands (nil: it verifies; as
// VerifyLog returns it otherwise), and the seq it reached. err is a
// failure to read the store, after which the next Update tries again.
func (fl *Follower) Update(ctx context.Context) (seq uint64, verdict, err error) {
	if fl.v == nil {
		if err := fl.start(ctx); err != nil {
			return 0, nil, err
		}
	}
	if fl.v.tree {
		return fl.whole(ctx)
	}
	for f, err := range fl.store.Read(ctx, fl.id, fl.v.Seq()+1) {
		if err != nil {
			return fl.v.Seq(), nil, fmt.Errorf("verify %s: %w", fl.id, err)
		}
		if fl.v.Add(f) != nil {
			break
		}
	}
	if fl.v.tree {
		return fl.whole(ctx)
	}
	if err := fl.snapshots(ctx); err != nil {
		if errors.Is(err, errPassed) {
			return fl.restart(ctx)
		}
		return fl.v.Seq(), nil, err
	}
	if err := fl.v.End(); err != nil {
		return fl.v.Seq(), err, nil
	}
	return fl.v.Seq(), fl.snapErr, nil
}

// Tree reports whether the thread is one of a tree of threads (a parent,
// a child) or a fork, whose verdict covers its links and children too,
// as far as the last Update read.
func (fl *Follower) Tree() bool { return fl.v != nil && fl.v.tree }

// start checks the store's own record of the thread and opens it.
func (fl *Follower) start(ctx context.Context) error {
	if err := fl.store.Verify(ctx, fl.id); err != nil {
		var ce *thread.CorruptError
		if errors.As(err, &ce) {
			fl.v = NewVerifier(fl.actor, fl.id)
			fl.v.err = err
			return nil
		}
		return err
	}
	th, err := (&harness.Runtime{Store: fl.store}).Open(ctx, fl.actor, fl.id)
	if err != nil {
		return fmt.Errorf("verify %s: %w", fl.id, err)
	}
	fl.v = NewVerifier(th.Actor(), fl.id)
	return nil
}

// whole is VerifyLog of the thread, for a thread of a tree.
func (fl *Follower) whole(ctx context.Context) (uint64, error, error) {
	h, err := fl.store.Head(ctx, fl.id)
	if err != nil {
		return fl.v.Seq(), nil, fmt.Errorf("verify %s: %w", fl.id, err)
	}
	return h.Seq, VerifyLog(ctx, fl.store, fl.actor, fl.id), nil
}

// errPassed: a snapshot was kept at a seq the follower passed before it
// was written.
var errPassed = errors.New("a snapshot behind the follower")

// snapshots checks the snapshots kept of the thread that were not
// checked yet: one at the seq reached, against the fold there.
func (fl *Follower) snapshots(ctx context.Context) error {
	snaps := thread.SnapshotsOf(fl.store)
	if snaps == nil {
		return nil
	}
	last := fl.v.v.last
	for s, err := range snaps.ListSnapshots(ctx, fl.id) {
		var se *thread.SnapshotError
		switch {
		case errors.As(err, &se):
			if fl.snapErr == nil {
				fl.snapErr = &SnapshotMismatchError{Thread: fl.id, Seq: se.Seq, Reason: "its record is damaged: " + se.Err.Error()}
			}
			continue
		case err != nil:
			return fmt.Errorf("verify %s: %w", fl.id, err)
		}
		sum := sha256.Sum256(s.Data)
		if d, ok := fl.checked[s.Seq]; ok && d == sum {
			continue
		}
		switch {
		case s.Seq > fl.v.Seq():
			// Kept after the facts this Update read: the next reads them.
			continue
		case s.Seq < fl.v.Seq():
			return errPassed
		}
		fl.checked[s.Seq] = sum
		c := &snapshotCheck{thread: fl.id, kept: map[uint64]thread.Snapshot{s.Seq: s}}
		c.check(fl.v.actor, fl.v.v.fold, last)
		if c.first != nil && fl.snapErr == nil {
			fl.snapErr = c.first
		}
	}
	return nil
}

// restart verifies the whole log again, with every snapshot kept, and
// follows on from its end.
func (fl *Follower) restart(ctx context.Context) (uint64, error, error) {
	snaps, err := keptSnapshots(ctx, fl.store, fl.id)
	if err != nil {
		return fl.v.Seq(), nil, err
	}
	v := NewVerifier(fl.v.actor, fl.id)
	v.snaps = snaps
	all := map[uint64][32]byte{}
	if snaps != nil {
		for seq, s := range snaps.kept {
			all[seq] = sha256.Sum256(s.Data)
		}
	}
	for f, err := range fl.store.Read(ctx, fl.id, 1) {
		if err != nil {
			return fl.v.Seq(), nil, fmt.Errorf("verify %s: %w", fl.id, err)
		}
		if v.Add(f) != nil {
			break
		}
	}
	v.snaps = nil
	// The ones checked on the way are gone from snaps.kept; the rest, kept
	// past the facts read, are the next Update's.
	checked := map[uint64][32]byte{}
	for seq, sum := range all {
		if _, left := snaps.kept[seq]; !left {
			checked[seq] = sum
		}
	}
	fl.v, fl.checked, fl.snapErr = v, checked, nil
	if snaps != nil && snaps.first != nil {
		fl.snapErr = snaps.first
	}
	if err := v.End(); err != nil {
		return v.Seq(), err, nil
	}
	return v.Seq(), fl.snapErr, nil
}
