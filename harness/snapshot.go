package harness

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/thread"
)

// Snapshots. When a Resume leaves a thread — parked, done, failed,
// stopped, or at the step limit — the fold's views are kept beside the
// log (fold.Fold.Snapshot), on a store that keeps snapshots
// (thread.Snapshots). A Thread that reads the thread for the first time
// starts from the latest one, if its hash is the hash of the log's fact at
// its seq and every component restores it (the same version of each), and
// folds only the facts after it; otherwise it folds the log from the
// first fact, as it always could. A snapshot is a cache: losing one, or
// finding one damaged or of another version, costs a fold.
//
// The causes of the facts a snapshot stands for are asked of the store's
// cause index; the facts themselves are read again only when a component
// needs them — the coding scheduler, for the whole thread's reading, or
// for the conversation of a thread never compacted (a compacted one is
// read from the compaction on).

// restore returns the thread's state restored from its latest snapshot,
// or nil when there is none that fits.
func (t *Thread) restore(ctx context.Context) *state {
	snaps := thread.SnapshotsOf(t.rt.Store)
	if snaps == nil {
		return nil
	}
	snap, err := snaps.LatestSnapshot(ctx, t.id)
	if err != nil {
		return nil
	}
	var last facts.Fact
	for f, err := range t.rt.Store.Read(ctx, t.id, snap.Seq) {
		if err == nil {
			last = f
		}
		break
	}
	if last.Seq != snap.Seq || last.Hash() != snap.Hash {
		return nil // a log that is not the one the snapshot was made of
	}
	st := &state{id: t.id, ctx: ctx}
	p := &prefix{t: t, st: st, seq: snap.Seq}
	f, err := fold.Restore(t.actor.New(), snap.Data, last, p, p)
	if err != nil {
		return nil
	}
	st.fold, st.kept = f, snap.Seq
	return st
}

// keep keeps the state's fold as the thread's snapshot, unless one at its
// seq is kept already. A snapshot that cannot be made or kept is not an
// error of the Resume: the next reader folds more.
func (t *Thread) keep(ctx context.Context, st *state) error {
	if st.kept == st.fold.Seq() || st.fold.Seq() == 0 {
		return nil
	}
	snaps := thread.SnapshotsOf(t.rt.Store)
	if snaps == nil {
		return nil
	}
	data, err := st.fold.Snapshot()
	if err != nil {
		return err
	}
	if err := snaps.PutSnapshot(ctx, thread.Snapshot{Thread: t.id, Seq: st.fold.Seq(), Hash: st.fold.Hash(), Data: data}); err != nil {
		return err
	}
	st.kept = st.fold.Seq()
	return nil
}

// prefix is the stretch of the log a restored state's snapshot stands
// for, read through the runtime's store as it is at the call that reads
// it, and its cause index. A read that fails is remembered: the next call
// folds the log anew rather than keep a fold that could not read it.
type prefix struct {
	t   *Thread
	st  *state
	seq uint64
}

func (p *prefix) Thread() string { return p.t.id }
func (p *prefix) Seq() uint64    { return p.seq }

func (p *prefix) Read(from uint64) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		for f, err := range p.t.rt.Store.Read(p.st.ctx, p.t.id, from) {
			if err != nil {
				p.st.broken = err
				yield(f, err)
				return
			}
			if f.Seq > p.seq {
				return
			}
			if !yield(f, nil) {
				return
			}
		}
	}
}

// Cause asks the store's cause index.
func (p *prefix) Cause(key string) (uint64, bool, error) {
	snaps := thread.SnapshotsOf(p.t.rt.Store)
	if snaps == nil {
		err := errors.New("the store keeps no cause index of the facts before the snapshot")
		p.st.broken = err
		return 0, false, err
	}
	seq, ok, err := snaps.CauseSeq(p.st.ctx, p.t.id, key)
	if err != nil {
		p.st.broken = err
	}
	return seq, ok, err
}

// The parts' snapshots. Each keeps what it counted, not the facts.

// SnapshotVersion is the version of the system part's snapshots.
func (s *system) SnapshotVersion() uint32 { return 1 }

// Snapshot keeps whether the thread is configured.
func (s *system) Snapshot() ([]byte, error) {
	var e fold.Encoder
	e.Bool(s.configured)
	return e.Data(), nil
}

// Restore reads a snapshot.
func (s *system) Restore(data []byte, p fold.Prefix) error {
	d := fold.NewDecoder(p.Thread(), data)
	s.configured = d.Bool()
	return d.Finish()
}

// SnapshotVersion is the version of the budget's snapshots: 2 keeps what
// the children reported, 3 the costs.
func (b *budget) SnapshotVersion() uint32 { return 3 }

// Snapshot keeps the turns, tokens and costs counted, the thread's own
// and its children's; a turn it could not count keeps none.
func (b *budget) Snapshot() ([]byte, error) {
	b.count()
	if b.err != nil {
		return nil, fmt.Errorf("budget: %w", b.err)
	}
	var e fold.Encoder
	e.Uint(uint64(b.turns))
	e.Int(b.tokens)
	e.Uint(uint64(b.childTurns))
	e.Int(b.childTokens)
	e.Uint(math.Float64bits(b.usd))
	e.Uint(math.Float64bits(b.childUSD))
	e.Uint(uint64(b.unpriced))
	e.Uint(uint64(len(b.tables)))
	for _, t := range b.tables {
		e.String(t)
	}
	return e.Data(), nil
}

// Restore reads a snapshot.
func (b *budget) Restore(data []byte, p fold.Prefix) error {
	d := fold.NewDecoder(p.Thread(), data)
	b.turns, b.tokens, b.thread = int(d.Uint()), d.Int(), p.Thread()
	b.childTurns, b.childTokens = int(d.Uint()), d.Int()
	b.usd, b.childUSD = math.Float64frombits(d.Uint()), math.Float64frombits(d.Uint())
	b.unpriced = int(d.Uint())
	b.tables = nil
	for n := d.Count(); n > 0; n-- {
		b.tables = append(b.tables, d.String())
	}
	return d.Finish()
}

// SnapshotVersion is the version of the compactor's snapshots: 2 keeps
// the thread's recorded bounds, 3 the latest turn refused as too long for
// the context and the compactions since the latest turn.
func (c *compactor) SnapshotVersion() uint32 { return 3 }

// Snapshot keeps the latest own model turn's seq and usage, the latest
// compaction's seq, the bounds the thread recorded, the latest refusal of
// a turn as too long and the compactions since the latest turn.
func (c *compactor) Snapshot() ([]byte, error) {
	var e fold.Encoder
	u, ok := c.lastUsage()
	e.Uint(c.turnSeq)
	e.Bool(ok)
	e.Int(u.InputTokens)
	e.Int(u.OutputTokens)
	e.Uint(c.compactSeq)
	e.Bool(c.recorded)
	e.Int(int64(c.bounds.Window))
	e.Int(int64(c.bounds.CompactAt))
	e.Uint(math.Float64bits(c.bounds.Fraction))
	e.Uint(c.overflowSeq)
	e.Uint(uint64(c.compacted))
	return e.Data(), nil
}

// Restore reads a snapshot.
func (c *compactor) Restore(data []byte, p fold.Prefix) error {
	d := fold.NewDecoder(p.Thread(), data)
	c.turnSeq = d.Uint()
	c.decoded = d.Bool()
	c.usage = facts.Usage{InputTokens: d.Int(), OutputTokens: d.Int()}
	c.compactSeq = d.Uint()
	c.recorded = d.Bool()
	c.bounds.Window = int(d.Int())
	c.bounds.CompactAt = int(d.Int())
	c.bounds.Fraction = math.Float64frombits(d.Uint())
	c.overflowSeq = d.Uint()
	c.compacted = int(d.Uint())
	// A turn that could not be read when the snapshot was made still
	// cannot.
	c.unreadable = c.turnSeq != 0 && !c.decoded
	return d.Finish()
}
