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
// starts from the latest one, if every component restores it (the same
// version of each), and folds only the facts after it, checking that each
// links to the one before; otherwise it folds the log from the first
// fact, as it always could. A snapshot is a cache: losing one, or finding
// one damaged or of another version, costs a fold. One whose hash is not
// the hash of the log's fact at its seq is not of this log — the store
// refuses to keep such a one — and is refused, with the store (see
// restore).
//
// The causes of the facts a snapshot stands for are asked of the store's
// cause index; the facts themselves are read again only when a component
// needs them — the coding scheduler, for the whole thread's reading, or
// for the conversation of a thread never compacted (a compacted one is
// read from the compaction on).

// restore returns the thread's state restored from its latest snapshot,
// or nil when there is none that fits (none kept, a damaged record, one
// of another version). A snapshot whose hash is not the hash of the log's
// fact at its seq, or whose seq is past the log's end, is one the store
// could not have kept of this log (PutSnapshot refuses it): the log, or
// the snapshot, was changed since. That is an error naming the seq
// (thread.ErrCorrupt), not a fold from the first fact that would carry on
// over it. The facts after the snapshot have their links checked as they
// are first folded (see catchUp); the facts before it are not read, so a
// resume costs what the log grew by: they are replay's verifier's to
// check, and a seal's.
func (t *Thread) restore(ctx context.Context) (*state, error) {
	snaps := thread.SnapshotsOf(t.rt.Store)
	if snaps == nil {
		return nil, nil
	}
	snap, err := snaps.LatestSnapshot(ctx, t.id)
	if err != nil {
		return nil, nil
	}
	var last facts.Fact
	for f, err := range t.rt.Store.Read(ctx, t.id, snap.Seq) {
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", t.id, err)
		}
		last = f
		break
	}
	switch {
	case last.Seq != snap.Seq:
		return nil, &thread.CorruptError{Thread: t.id, Seq: snap.Seq, Err: fmt.Errorf("%w: the log has no fact at seq %d, where its snapshot was kept: its tail was cut", ErrNotItsSnapshot, snap.Seq)}
	case last.Hash() != snap.Hash:
		return nil, &thread.CorruptError{Thread: t.id, Seq: snap.Seq, Err: fmt.Errorf("%w: the fact at seq %d hashes to %s, but the snapshot kept there was made of a fact hashing to %s: the log, or the snapshot, was changed since", ErrNotItsSnapshot, snap.Seq, last.Hash(), snap.Hash)}
	}
	st := &state{id: t.id, ctx: ctx, linked: snap.Hash}
	p := &prefix{t: t, st: st, seq: snap.Seq}
	f, err := fold.Restore(t.actor.New(), snap.Data, last, p, p)
	if err != nil {
		return nil, nil
	}
	st.fold, st.kept = f, snap.Seq
	return st, nil
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

// SnapshotVersion is the version of the system part's snapshots: 2 keeps
// the instructions recorded last and the paths touched, and plan mode.
func (s *system) SnapshotVersion() uint32 { return 2 }

// Snapshot keeps whether the thread is configured, and what decides its
// next turn's instructions.
func (s *system) Snapshot() ([]byte, error) {
	var e fold.Encoder
	e.Bool(s.configured)
	if err := s.ins.snapshot(&e); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	if err := s.plan.snapshot(&e); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	return e.Data(), nil
}

// Restore reads a snapshot.
func (s *system) Restore(data []byte, p fold.Prefix) error {
	d := fold.NewDecoder(p.Thread(), data)
	s.configured = d.Bool()
	s.ins.restore(d)
	s.plan.restore(d)
	return d.Finish()
}

// SnapshotVersion is the version of the budget's snapshots: 2 keeps what
// the children reported, 3 the costs, 4 the tree's budget, 5 what the
// next turn reserves, 6 the raises in turns and whether the bound in
// turns waits, 7 the sampling turns counted.
func (b *budget) SnapshotVersion() uint32 { return 7 }

// Snapshot keeps the turns, tokens and costs counted, the thread's own
// and its children's; a turn it could not count keeps none.
func (b *budget) Snapshot() ([]byte, error) {
	b.count()
	if b.err != nil {
		return nil, fmt.Errorf("budget: %w", b.err)
	}
	if b.tree.err != nil {
		return nil, fmt.Errorf("budget: %w", b.tree.err)
	}
	if b.next.err != nil {
		return nil, fmt.Errorf("budget: %w", b.next.err)
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
	b.tree.snapshot(&e)
	b.next.snapshot(&e)
	e.Uint(uint64(b.sampled))
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
	b.tree.restore(d)
	b.next.restore(d)
	b.sampled = int(d.Uint())
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

// seal has the runtime's Sealer seal the head a Resume left the thread at,
// when it left it parked or ended.
func (t *Thread) seal(ctx context.Context, out Outcome) error {
	switch {
	case t.rt.Sealer == nil || t.st == nil || t.st.fold.Seq() == 0:
		return nil
	case out.Status != StatusParked && out.Status != StatusDone && out.Status != StatusFailed && out.Status != StatusStopped:
		return nil
	}
	last := t.st.fold.Last()
	return t.rt.Sealer.SealHead(ctx, t.rt.Store, thread.Head{Thread: t.id, Seq: last.Seq, Hash: last.Hash(), Kind: last.Kind, At: last.At})
}
