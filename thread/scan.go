package thread

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/seed-7cc7a084/harness/facts"
)

// Scanner is implemented by a store that can lend each fact's payload to a
// callback instead of copying it out, so that a reader that looks at a
// payload only while it reads (a fold deciding what to keep, a verifier
// hashing) pays nothing for it. Call it through Scan, which falls back to
// Read for a store that does not implement it.
type Scanner interface {
	// Scan is Read with a callback: it calls fn with each fact of thread
	// in order, from seq from to the head as it was when scanning began.
	// The fact's Data is lent: valid only until fn returns (the store may
	// reuse the bytes after). Its other fields are the fact's own.
	//
	// It checks every record as Read does, and returns what Read would
	// yield as an error (a *CorruptError, ErrNotFound never: a thread
	// with no facts calls fn never). If fn returns an error, Scan stops
	// and returns that error as it is.
	Scan(ctx context.Context, thread string, from uint64, fn func(facts.Fact) error) error
}

// Scan calls fn with each fact of thread id in s, from seq from, as
// Scanner.Scan does: natively when s is a Scanner, else through s.Read. In
// both cases fn must treat f.Data as lent — valid only until it returns —
// and copy what it keeps (bytes.Clone), since which store lies behind s
// can change. A store error is returned as Read yields it; an error from
// fn is returned as it is.
func Scan(ctx context.Context, s Store, id string, from uint64, fn func(facts.Fact) error) error {
	if sc, ok := s.(Scanner); ok {
		return sc.Scan(ctx, id, from, fn)
	}
	for f, err := range s.Read(ctx, id, from) {
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

var _ Scanner = (*PebbleStore)(nil)

// Scan calls fn with thread's facts from seq from, lending each payload;
// see Scanner. It sees one snapshot and checks what Read checks: each
// record's checksum, and seqs without a gap up to the head record.
func (s *PebbleStore) Scan(ctx context.Context, thread string, from uint64, fn func(facts.Fact) error) error {
	if err := s.begin(ctx, "read", thread); err != nil {
		return err
	}
	defer s.leave()
	snap := s.db.NewSnapshot()
	defer snap.Close()
	err := walk(ctx, snap, thread, from, true, fn)
	if fe, ok := err.(fnError); ok {
		return fe.err
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", thread, err)
	}
	return nil
}

// fnError is an error a walk's callback returned, as walk returns it: to
// be told from the store's own.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

func (e fnError) Unwrap() error { return e.err }

// walk calls fn with thread's facts from seq from in snap, decoded with a
// facts.Decoder: with lend set, Data lives only until fn returns;
// without, it is the fact's own copy. It returns an error
// of the store's, an error of fn's as an fnError, or nil when done or
// when fn returned errStopped.
func walk(ctx context.Context, snap *pebble.Snapshot, thread string, from uint64, lend bool, fn func(facts.Fact) error) (err error) {
	head, found, err := readHead(snap, thread)
	if err != nil {
		return err
	}
	if from == 0 {
		from = 1
	}
	it, err := snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: factKey(thread, from), UpperBound: factUpper(thread)})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	var (
		d facts.Decoder
		f facts.Fact // each record is decoded into it in turn
	)
	done := ctx.Done()
	want := from
	for ok := it.First(); ok; ok = it.Next() {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		seq, ok := factSeq(thread, it.Key())
		switch {
		case !ok:
			return corrupt(thread, want, "malformed fact key %x", it.Key())
		case !found:
			return corrupt(thread, seq, "fact without a head record")
		case seq > head.Seq:
			return corrupt(thread, seq, "fact beyond the head record (seq %d)", head.Seq)
		case seq != want:
			return corrupt(thread, want, "fact is missing (the next is seq %d)", seq)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if err := d.DecodeTo(&f, thread, v); err != nil {
			return &CorruptError{Thread: thread, Seq: seq, Err: err}
		}
		if !lend && f.Data != nil {
			f.Data = bytes.Clone(f.Data)
		}
		if f.Seq != seq {
			return corrupt(thread, seq, "record under seq %d says seq %d", seq, f.Seq)
		}
		if err := fn(f); err != nil {
			if err == errStopped {
				return nil
			}
			return fnError{err}
		}
		want++
	}
	if err := it.Error(); err != nil {
		return err
	}
	if found && want <= head.Seq {
		return corrupt(thread, want, "fact is missing (the head record is at seq %d)", head.Seq)
	}
	return nil
}
