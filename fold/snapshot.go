package fold

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
)

// A snapshot is a fold's state after one fact, encoded so that a later
// fold of the same thread can start there and step only the facts after
// it (see Restore). It is made of the fold's own state — its seq, a
// defect that stopped the thread, the failures counted per key — and of
// each component's, which a component that opts in encodes itself
// (Snapshotter).
//
// The causes of the facts a snapshot stands for are not in it: a restored
// fold asks a CauseIndex (the store's cause index) about them. Nor need
// the facts themselves be: a component that may need them again later
// (the coding scheduler, for the whole conversation of a thread never
// compacted) reads them through the Prefix it is restored with, when it
// needs them — never on restore.
//
// The encoding is deterministic: the same log folded by the same
// components, in this process or another, from the first fact or from
// an earlier snapshot, gives the same bytes. That is what lets a verifier
// check a kept snapshot: it folds the log from the first fact and
// compares.

// SnapshotFormat is the version of the envelope Snapshot writes:
//
//	format      1 byte (1)
//	seq         uvarint
//	defect      bool byte; when 1, status, reason and retry (strings)
//	failures    uvarint count; per key, in key order: the key (string),
//	            the number of failures (uvarint), the last message (string)
//	components  uvarint count; per component, in projection order: its
//	            name (string), its SnapshotVersion (uvarint), its bytes
//
// A string or bytes is a uvarint length, then the bytes.
const SnapshotFormat = 1

// Snapshotter is implemented by a component that can keep its view as a
// snapshot. A fold is snapshotted only when every component is one.
type Snapshotter interface {
	// SnapshotVersion names the encoding of Snapshot's bytes. A component
	// changes it whenever what it keeps, or how, changes: a snapshot of
	// another version is never restored.
	SnapshotVersion() uint32
	// Snapshot encodes the component's state after the facts stepped so
	// far, deterministically (see above). It reads only what it folded:
	// never a clock, randomness or map order. An error keeps no snapshot.
	Snapshot() ([]byte, error)
	// Restore sets a fresh component (stepped through no facts) to the
	// state data encodes, as if it had stepped through every fact up to
	// prefix.Seq(). It must not read the prefix now; it may keep it, and
	// read it when it needs the facts again.
	Restore(data []byte, prefix Prefix) error
}

// Prefix is the stretch of a thread's log a snapshot stands for: the
// facts from the first to the snapshot's.
type Prefix interface {
	// Thread is the thread's id.
	Thread() string
	// Seq is the snapshot's seq: the prefix's last fact.
	Seq() uint64
	// Read yields the facts with seqs from from to Seq(), in order, as
	// thread.Store.Read does: an error is yielded once, and ends it.
	Read(from uint64) iter.Seq2[facts.Fact, error]
}

// CauseIndex answers which causes the facts of a snapshot's prefix used.
type CauseIndex interface {
	// Cause returns the seq of the thread's first fact with the cause,
	// and whether there is one.
	Cause(key string) (seq uint64, ok bool, err error)
}

// Errors of Snapshot and Restore. A runtime that meets one folds the log
// from its first fact instead; a verifier reports it.
var (
	// ErrNoSnapshot: a component of the fold does not keep snapshots, or
	// refused to make one now.
	ErrNoSnapshot = errors.New("the fold keeps no snapshot")
	// ErrSnapshotVersion: the snapshot was made by another version of the
	// fold or of one of its components.
	ErrSnapshotVersion = errors.New("snapshot of another version")
	// ErrBadSnapshot: the snapshot cannot be read, or is not one of this
	// fold's components at this seq.
	ErrBadSnapshot = errors.New("snapshot does not fit")
)

// Snapshot returns the fold's state after the last fact stepped (see
// SnapshotFormat). It fails with ErrNoSnapshot when a component is not a
// Snapshotter, or a component's Snapshot fails.
func (f *Fold[S]) Snapshot() ([]byte, error) {
	if f.seq == 0 {
		return nil, fmt.Errorf("%w: nothing folded yet", ErrNoSnapshot)
	}
	var e Encoder
	e.b = append(e.b, SnapshotFormat)
	e.Uint(f.seq)
	e.Bool(f.defect != nil)
	if f.defect != nil {
		e.String(f.defect.Status)
		e.String(f.defect.Reason)
		e.String(f.defect.Retry)
	}
	keys := make([]string, 0, len(f.failures))
	for k := range f.failures {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.Uint(uint64(len(keys)))
	for _, k := range keys {
		e.String(k)
		e.Uint(uint64(f.failures[k].n))
		e.String(f.failures[k].last)
	}
	e.Uint(uint64(len(f.components)))
	for _, c := range f.components {
		s, ok := c.(Snapshotter)
		if !ok {
			return nil, fmt.Errorf("%w: component %s keeps none", ErrNoSnapshot, c.Name())
		}
		b, err := s.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("%w: component %s: %w", ErrNoSnapshot, c.Name(), err)
		}
		e.String(c.Name())
		e.Uint(uint64(s.SnapshotVersion()))
		e.Bytes(b)
	}
	return e.Data(), nil
}

// Restore returns a fold over fresh components in the state a snapshot
// of them recorded, after the fact last (the prefix's last fact: its seq
// is the snapshot's). Stepping the facts after last then folds exactly as
// a fold of the whole log would. The causes of the prefix are asked of
// index; the components may read the prefix's facts through prefix.
//
// A snapshot of another format or component version is ErrSnapshotVersion;
// one that cannot be read, or of other components or another seq, is
// ErrBadSnapshot.
func Restore[S any](components []Component[S], data []byte, last facts.Fact, prefix Prefix, index CauseIndex) (*Fold[S], error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadSnapshot)
	}
	if data[0] != SnapshotFormat {
		return nil, fmt.Errorf("%w: format %d, this program reads format %d", ErrSnapshotVersion, data[0], SnapshotFormat)
	}
	switch {
	case last.Seq == 0 || prefix == nil || prefix.Seq() != last.Seq:
		return nil, fmt.Errorf("%w: the prefix does not end at the last fact", ErrBadSnapshot)
	case index == nil:
		return nil, fmt.Errorf("%w: no cause index", ErrBadSnapshot)
	}
	d := NewDecoder(last.Thread, data[1:])
	f := New(components...)
	f.seq, f.last, f.index, f.prefixSeq = d.Uint(), last, index, last.Seq
	if d.Bool() {
		f.defect = &Stop{Status: d.String(), Reason: d.String(), Retry: d.String()}
	}
	n := d.Count()
	prev := ""
	for i := 0; i < n && d.Err() == nil; i++ {
		k, count, msg := d.String(), int(d.Uint()), d.String()
		if d.Err() != nil {
			break
		}
		if i > 0 && k <= prev {
			return nil, fmt.Errorf("%w: failures out of order", ErrBadSnapshot)
		}
		f.failures[k], prev = failure{n: count, last: msg}, k
	}
	if n := d.Count(); d.Err() == nil && n != len(components) {
		return nil, fmt.Errorf("%w: %d components, this fold has %d", ErrBadSnapshot, n, len(components))
	}
	for _, c := range components {
		name, version, b := d.String(), d.Uint(), d.Bytes()
		if err := d.Err(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
		}
		s, ok := c.(Snapshotter)
		switch {
		case name != c.Name():
			return nil, fmt.Errorf("%w: component %s where this fold has %s", ErrBadSnapshot, name, c.Name())
		case !ok:
			return nil, fmt.Errorf("%w: component %s keeps no snapshot", ErrBadSnapshot, name)
		case version != uint64(s.SnapshotVersion()):
			return nil, fmt.Errorf("%w: component %s version %d, this program's is %d", ErrSnapshotVersion, name, version, s.SnapshotVersion())
		}
		if err := s.Restore(b, prefix); err != nil {
			if errors.Is(err, ErrSnapshotVersion) {
				return nil, fmt.Errorf("component %s: %w", name, err)
			}
			return nil, fmt.Errorf("%w: component %s: %w", ErrBadSnapshot, name, err)
		}
	}
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	if f.seq != last.Seq {
		return nil, fmt.Errorf("%w: a snapshot at seq %d restored after seq %d", ErrBadSnapshot, f.seq, last.Seq)
	}
	return f, nil
}

// Encoder writes a snapshot's bytes the one way: unsigned integers as
// uvarints, strings and bytes with their length first, facts in the
// storage encoding. The zero Encoder is ready to use.
type Encoder struct{ b []byte }

// Uint writes v.
func (e *Encoder) Uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

// Int writes v.
func (e *Encoder) Int(v int64) { e.b = binary.AppendVarint(e.b, v) }

// Bool writes v as one byte.
func (e *Encoder) Bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// String writes s.
func (e *Encoder) String(s string) {
	e.Uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// Bytes writes b.
func (e *Encoder) Bytes(b []byte) {
	e.Uint(uint64(len(b)))
	e.b = append(e.b, b...)
}

// Fact writes f in the storage encoding (facts.Encode), which keeps
// everything but the thread id.
func (e *Encoder) Fact(f facts.Fact) error {
	b, err := facts.Encode(f)
	if err != nil {
		return err
	}
	e.Bytes(b)
	return nil
}

// Data returns what was written.
func (e *Encoder) Data() []byte { return e.b }

// Decoder reads what an Encoder wrote. Its first error is kept (Err), and
// every read after it returns a zero value, so a caller checks once.
type Decoder struct {
	thread string
	b      []byte
	i      int
	err    error
}

// NewDecoder reads b; facts read are of thread.
func NewDecoder(thread string, b []byte) *Decoder { return &Decoder{thread: thread, b: b} }

func (d *Decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("snapshot truncated or malformed in %s at byte %d", what, d.i)
	}
	d.i = len(d.b)
}

// Uint reads an unsigned integer.
func (d *Decoder) Uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		d.fail("an integer")
		return 0
	}
	d.i += n
	return v
}

// Int reads a signed integer.
func (d *Decoder) Int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.i:])
	if n <= 0 {
		d.fail("an integer")
		return 0
	}
	d.i += n
	return v
}

// Count reads a count of things that follow, each at least a byte long:
// a count larger than the bytes left is an error, not an allocation.
func (d *Decoder) Count() int {
	n := d.Uint()
	if n > uint64(len(d.b)-d.i) {
		d.fail("a count")
		return 0
	}
	return int(n)
}

// Bool reads a bool.
func (d *Decoder) Bool() bool {
	if d.err != nil {
		return false
	}
	if d.i >= len(d.b) || d.b[d.i] > 1 {
		d.fail("a bool")
		return false
	}
	d.i++
	return d.b[d.i-1] == 1
}

// Bytes reads bytes; they alias the decoder's input.
func (d *Decoder) Bytes() []byte {
	n := d.Uint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.i) {
		d.fail("bytes")
		return nil
	}
	out := d.b[d.i : d.i+int(n) : d.i+int(n)]
	d.i += int(n)
	return out
}

// String reads a string.
func (d *Decoder) String() string { return string(d.Bytes()) }

// Fact reads a fact.
func (d *Decoder) Fact() facts.Fact {
	b := d.Bytes()
	if d.err != nil {
		return facts.Fact{}
	}
	f, err := facts.DecodeFact(d.thread, b)
	if err != nil {
		d.err = fmt.Errorf("a fact in the snapshot: %w", err)
		d.i = len(d.b)
		return facts.Fact{}
	}
	return f
}

// Err is the first error met.
func (d *Decoder) Err() error { return d.err }

// Finish returns the first error met, or an error if bytes are left over.
func (d *Decoder) Finish() error {
	if d.err != nil {
		return d.err
	}
	if d.i != len(d.b) {
		return fmt.Errorf("%d bytes after the snapshot", len(d.b)-d.i)
	}
	return nil
}
