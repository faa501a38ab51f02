package thread

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"

	"github.com/cockroachdb/pebble/v2"

	"github.com/seed-7cc7a084/harness/facts"
)

// Snapshot is what a fold of a thread's log made of it at one fact: the
// components' views, encoded by whoever folded them (package fold), kept
// beside the log so that a resume folds only the facts after it. A
// snapshot is never a fact: it may be lost or stale, and whoever reads
// one checks it against the log — Hash must be the hash of the fact at
// Seq — and may ignore it and fold the log instead.
type Snapshot struct {
	Thread string
	// Seq is the seq of the last fact the fold had read.
	Seq uint64
	// Hash is that fact's hash.
	Hash facts.Hash
	// Data is the fold's encoding of its views; the store does not read it.
	Data []byte
}

// Snapshots is implemented by a store that keeps snapshots beside its
// threads, as the Pebble store does. It is optional: a runtime on a store
// without it folds every log from its first fact.
type Snapshots interface {
	// PutSnapshot keeps s as the thread's latest snapshot, and drops the
	// oldest of its snapshots past the KeptSnapshots newest. A snapshot at
	// a seq already kept replaces it. The thread must have a fact at
	// s.Seq that hashes to s.Hash: anything else is refused, and nothing
	// is kept (so is a write to a store that may not write now: read-only,
	// or its disk full). Like a blob, a snapshot is not synced on its own:
	// one lost in a crash costs a fold.
	PutSnapshot(ctx context.Context, s Snapshot) error
	// LatestSnapshot returns the thread's snapshot with the highest seq,
	// an error matching ErrNoSnapshot when it has none, or one matching
	// ErrBadSnapshot when the stored record is damaged.
	LatestSnapshot(ctx context.Context, thread string) (Snapshot, error)
	// ListSnapshots yields the thread's snapshots in seq order. A damaged
	// record yields a *SnapshotError (ErrBadSnapshot) naming its seq, and
	// the listing goes on; any other error is yielded once, and ends it.
	ListSnapshots(ctx context.Context, thread string) iter.Seq2[Snapshot, error]
	// CauseSeq returns the seq of the thread's first fact with cause, and
	// whether there is one: the cause index, which is what a fold restored
	// from a snapshot asks about the causes of the facts before it.
	CauseSeq(ctx context.Context, thread, cause string) (uint64, bool, error)
}

// SnapshotsOf returns the snapshots a store keeps: its own, or its
// backing store's (a wrapper that counts or watches the calls of a Pebble
// store keeps the Pebble store's snapshots); nil when it keeps none.
func SnapshotsOf(s Store) Snapshots {
	if s == nil {
		return nil
	}
	if sn, ok := s.(Snapshots); ok {
		return sn
	}
	if b := s.Backing(); b != nil && b != s {
		if sn, ok := b.(Snapshots); ok {
			return sn
		}
	}
	return nil
}

// KeptSnapshots is how many snapshots of a thread the Pebble store keeps:
// the newest, for resume, and a few before it, for a verifier to check.
const KeptSnapshots = 4

// ErrNoSnapshot: a thread has no snapshot.
var ErrNoSnapshot = errors.New("no snapshot")

// ErrBadSnapshot: a stored snapshot record is damaged, or does not belong
// where it is stored. The error is a *SnapshotError.
var ErrBadSnapshot = errors.New("damaged snapshot")

// SnapshotError names a snapshot record that cannot be read.
type SnapshotError struct {
	Thread string
	Seq    uint64
	Err    error
}

// Error names thread and seq and what is wrong.
func (e *SnapshotError) Error() string {
	return fmt.Sprintf("snapshot of %s at seq %d: %v: %v", e.Thread, e.Seq, ErrBadSnapshot, e.Err)
}

// Is reports whether target is ErrBadSnapshot.
func (e *SnapshotError) Is(target error) bool { return target == ErrBadSnapshot }

// Unwrap returns Err.
func (e *SnapshotError) Unwrap() error { return e.Err }

var _ Snapshots = (*PebbleStore)(nil)

const tableSnapshot = 's'

// snapshotPrefix returns 's' id 0x00, the prefix of id's snapshot keys.
func snapshotPrefix(id string) []byte {
	k := make([]byte, 0, 2+len(id)+8)
	k = append(k, tableSnapshot)
	k = append(k, id...)
	return append(k, sep)
}

// snapshotKey returns 's' id 0x00 seq, seq big-endian.
func snapshotKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(snapshotPrefix(id), seq)
}

// snapshotVersion is the version of the snapshot record layout:
//
//	version  1 byte
//	hash     32 bytes
//	data     the rest, up to the checksum
//	crc      4 bytes, CRC-32C of the bytes before (and of the key's seq,
//	         so a record copied under another seq reads as damaged),
//	         little-endian
const snapshotVersion = 1

func encodeSnapshot(s Snapshot) []byte {
	b := make([]byte, 0, 1+len(s.Hash)+len(s.Data)+4)
	b = append(b, snapshotVersion)
	b = append(b, s.Hash[:]...)
	b = append(b, s.Data...)
	return binary.LittleEndian.AppendUint32(b, snapshotSum(s.Seq, b))
}

func snapshotSum(seq uint64, body []byte) uint32 {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return crc32.Update(crc32.Checksum(k[:], castagnoli), castagnoli, body)
}

func decodeSnapshot(id string, seq uint64, b []byte) (Snapshot, error) {
	bad := func(format string, args ...any) error {
		return &SnapshotError{Thread: id, Seq: seq, Err: fmt.Errorf(format, args...)}
	}
	if len(b) < 1+32+4 {
		return Snapshot{}, bad("record is %d bytes, too short", len(b))
	}
	body := b[:len(b)-4]
	if binary.LittleEndian.Uint32(b[len(b)-4:]) != snapshotSum(seq, body) {
		return Snapshot{}, bad("checksum mismatch")
	}
	if body[0] != snapshotVersion {
		return Snapshot{}, bad("record is version %d; this program reads version %d", body[0], snapshotVersion)
	}
	s := Snapshot{Thread: id, Seq: seq, Data: bytes.Clone(body[1+32:])}
	copy(s.Hash[:], body[1:1+32])
	return s, nil
}

// PutSnapshot keeps s; see Snapshots.
func (s *PebbleStore) PutSnapshot(ctx context.Context, snap Snapshot) error {
	id := snap.Thread
	if err := s.begin(ctx, "put snapshot of", id); err != nil {
		return err
	}
	defer s.leave()
	if snap.Seq == 0 {
		return fmt.Errorf("put snapshot of %s: seq 0 names no fact", id)
	}
	if err := s.writable(); err != nil {
		return fmt.Errorf("put snapshot of %s: %w", id, err)
	}
	f, ok, err := get(s.db, factKey(id, snap.Seq))
	switch {
	case err != nil:
		return fmt.Errorf("put snapshot of %s at seq %d: %w", id, snap.Seq, err)
	case !ok:
		return fmt.Errorf("put snapshot of %s at seq %d: no such fact: %w", id, snap.Seq, ErrNotFound)
	}
	fact, err := facts.DecodeFact(id, f)
	if err != nil {
		return fmt.Errorf("put snapshot of %s: %w", id, &CorruptError{Thread: id, Seq: snap.Seq, Err: err})
	}
	if h := fact.Hash(); h != snap.Hash {
		return fmt.Errorf("put snapshot of %s at seq %d: the fact there hashes to %s, not %s", id, snap.Seq, h, snap.Hash)
	}
	// The newest KeptSnapshots stay, this one among them unless that many
	// newer ones are kept already.
	prefix := snapshotPrefix(id)
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefix, UpperBound: upperOf(prefix)})
	if err != nil {
		return fmt.Errorf("put snapshot of %s: %w", id, err)
	}
	var older [][]byte // keys of kept snapshots older than snap, newest first
	newer := 0
	for ok := it.Last(); ok; ok = it.Prev() {
		seq, valid := snapshotSeq(id, it.Key())
		switch {
		case !valid || seq == snap.Seq:
		case seq > snap.Seq:
			newer++
		default:
			older = append(older, bytes.Clone(it.Key()))
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("put snapshot of %s: %w", id, err)
	}
	if newer >= KeptSnapshots {
		return nil // older than every snapshot kept: it would be dropped at once
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(snapshotKey(id, snap.Seq), encodeSnapshot(snap), nil); err != nil {
		return fmt.Errorf("put snapshot of %s: %w", id, err)
	}
	for i, k := range older {
		if newer+1+i >= KeptSnapshots {
			if err := b.Delete(k, nil); err != nil {
				return fmt.Errorf("put snapshot of %s: %w", id, err)
			}
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("put snapshot of %s: %w", id, err)
	}
	return nil
}

// snapshotSeq returns the seq of a snapshot key of id.
func snapshotSeq(id string, key []byte) (uint64, bool) {
	if len(key) != 2+len(id)+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[len(key)-8:]), true
}

// upperOf returns the exclusive upper bound of the keys that start with a
// prefix ending in sep.
func upperOf(prefix []byte) []byte {
	u := bytes.Clone(prefix)
	u[len(u)-1] = sep + 1
	return u
}

// LatestSnapshot returns the thread's newest snapshot; see Snapshots.
func (s *PebbleStore) LatestSnapshot(ctx context.Context, id string) (Snapshot, error) {
	if err := s.begin(ctx, "snapshot of", id); err != nil {
		return Snapshot{}, err
	}
	defer s.leave()
	prefix := snapshotPrefix(id)
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefix, UpperBound: upperOf(prefix)})
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot of %s: %w", id, err)
	}
	defer it.Close()
	if !it.Last() {
		if err := it.Error(); err != nil {
			return Snapshot{}, fmt.Errorf("snapshot of %s: %w", id, err)
		}
		return Snapshot{}, fmt.Errorf("snapshot of %s: %w", id, ErrNoSnapshot)
	}
	seq, ok := snapshotSeq(id, it.Key())
	if !ok {
		return Snapshot{}, &SnapshotError{Thread: id, Err: fmt.Errorf("malformed key %x", it.Key())}
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot of %s: %w", id, err)
	}
	return decodeSnapshot(id, seq, v)
}

// ListSnapshots yields the thread's snapshots in seq order; see Snapshots.
func (s *PebbleStore) ListSnapshots(ctx context.Context, id string) iter.Seq2[Snapshot, error] {
	return func(yield func(Snapshot, error) bool) {
		if err := s.begin(ctx, "snapshots of", id); err != nil {
			yield(Snapshot{}, err)
			return
		}
		defer s.leave()
		prefix := snapshotPrefix(id)
		it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefix, UpperBound: upperOf(prefix)})
		if err != nil {
			yield(Snapshot{}, fmt.Errorf("snapshots of %s: %w", id, err))
			return
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			seq, valid := snapshotSeq(id, it.Key())
			if !valid {
				if !yield(Snapshot{}, &SnapshotError{Thread: id, Err: fmt.Errorf("malformed key %x", it.Key())}) {
					return
				}
				continue
			}
			v, err := it.ValueAndErr()
			if err != nil {
				yield(Snapshot{}, fmt.Errorf("snapshots of %s: %w", id, err))
				return
			}
			if !yield(decodeSnapshot(id, seq, v)) {
				return
			}
		}
		if err := it.Error(); err != nil {
			yield(Snapshot{}, fmt.Errorf("snapshots of %s: %w", id, err))
		}
	}
}

// CauseSeq returns the seq of the thread's first fact with cause; see
// Snapshots.
func (s *PebbleStore) CauseSeq(ctx context.Context, id, cause string) (uint64, bool, error) {
	if err := s.begin(ctx, "cause in", id); err != nil {
		return 0, false, err
	}
	defer s.leave()
	if err := facts.ValidateCause(cause); err != nil {
		return 0, false, fmt.Errorf("cause in %s: %w", id, err)
	}
	seq, ok, err := causeSeq(s.db, id, cause)
	if err != nil {
		return 0, false, fmt.Errorf("cause in %s: %w", id, err)
	}
	return seq, ok, nil
}
