package scheduler

import (
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// The scheduler's snapshot (fold.Snapshotter) keeps what says what is
// enabled now — the facts from the latest own model turn on, and the
// first system.configured when it came before — and three things more,
// each a function of the log alone:
//
//   - odd: whether any action.requested the scheduler folded names an
//     idempotency key other than its own action's ("tool/execute/<id>").
//     The runtime never writes one; a hand-made log may. Without one, no
//     attempt's key can have been completed by another attempt, so an
//     execute needs no look at the whole log's completions;
//   - where the conversation starts: the latest own model turn at or
//     before the latest compaction's reach (its UpTo), so that the
//     conversation the next model turn needs is read from there — the
//     compacted context — rather than from the first fact;
//   - the seqs that decide it: the latest two own model turns, and the
//     furthest reach of a compaction so far.
//
// A restored scheduler reads the facts before its snapshot again through
// the prefix only when the whole log is asked for: a reading of the whole
// thread, a verifier's check, an answer to a request of an earlier turn,
// an execute when odd, or the conversation of a thread never compacted.
// Everything else it answers from what it holds, and the answers are the
// whole log's:
//
//   - what is enabled: the scheduler always folds only the latest turn on
//     for that (see Scheduler);
//   - an answer to a request of the latest turn: the latest turn's fold
//     knows that request as the whole fold does (its call was made by the
//     latest model turn, and every fact about it came after);
//   - the conversation: a fold from the model turn where the conversation
//     starts gives the same messages after the compaction's reach as the
//     whole fold, unless a fact after it names a call, request or action
//     it does not know (state.missed) — then the whole log is folded.
//
// It also keeps the thread's last observation of the workspace (see
// action.ObservedIn) when no fact it holds records one, so that the next
// action compares its reading with it without reading the log again.
//
// Its encoding, version 2:
//
//	system      bool; when true, the first system.configured (a fact)
//	held        count, then the facts from the latest own model turn on
//	odd         bool
//	convFrom, lastTurnSeq, prevTurnSeq, upTo   uvarints
//	observed    uvarint seq (0: none), then, when not 0, the hash and the
//	            manifest digest (strings)
const snapshotVersion = 2

// SnapshotVersion is the version of the scheduler's snapshots.
func (s *Scheduler[S]) SnapshotVersion() uint32 { return snapshotVersion }

// Snapshot encodes the scheduler's state (see above). A fact that could
// not be folded keeps no snapshot.
func (s *Scheduler[S]) Snapshot() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	odd, err := s.anyOdd()
	if err != nil {
		return nil, err
	}
	var e fold.Encoder
	sys := s.system >= 0 && s.system < s.turnStart
	e.Bool(sys)
	if sys {
		if err := e.Fact(s.log.at(s.system)); err != nil {
			return nil, err
		}
	}
	e.Uint(uint64(s.log.len() - s.turnStart))
	for i := s.turnStart; i < s.log.len(); i++ {
		if err := e.Fact(s.log.at(i)); err != nil {
			return nil, err
		}
	}
	e.Bool(odd)
	e.Uint(s.convFrom)
	e.Uint(s.lastTurnSeq)
	e.Uint(s.prevTurnSeq)
	e.Uint(s.upTo)
	obs, err := s.lastObserved()
	if err != nil {
		return nil, err
	}
	e.Uint(obs.Seq)
	if obs.Seq != 0 {
		e.String(obs.Hash)
		e.String(obs.Manifest)
	}
	return e.Data(), nil
}

// Restore sets a fresh scheduler to the state a snapshot encodes, after
// the facts up to prefix.Seq(), which it reads again only when it needs
// the whole log (see above).
func (s *Scheduler[S]) Restore(data []byte, prefix fold.Prefix) error {
	if s.log.len() != 0 || s.prefix != nil {
		return errors.New("scheduler: restore of a scheduler that folded facts")
	}
	d := fold.NewDecoder(prefix.Thread(), data)
	var held []facts.Fact
	sys := d.Bool()
	if sys {
		held = append(held, d.Fact())
	}
	n := d.Count()
	for i := 0; i < n && d.Err() == nil; i++ {
		held = append(held, d.Fact())
	}
	odd := d.Bool()
	convFrom, lastTurn, prevTurn, upTo := d.Uint(), d.Uint(), d.Uint(), d.Uint()
	obs := action.Observed{Seq: d.Uint()}
	if obs.Seq != 0 {
		obs.Hash, obs.Manifest = d.String(), d.String()
	}
	if err := d.Finish(); err != nil {
		return err
	}
	var last uint64
	for _, f := range held {
		switch {
		case f.Seq <= last || f.Seq > prefix.Seq():
			return fmt.Errorf("scheduler: fact seq %d of the snapshot out of order (after %d, snapshot at %d)", f.Seq, last, prefix.Seq())
		case !folded(f.Kind):
			return fmt.Errorf("scheduler: fact seq %d of the snapshot is a %s, which it does not fold", f.Seq, f.Kind)
		}
		last = f.Seq
	}
	stretch := held
	if sys {
		stretch = held[1:]
		if len(stretch) == 0 || stretch[0].Kind != facts.KindModelTurn || held[0].Kind != facts.KindSystemConfigured {
			return errors.New("scheduler: a snapshot's system.configured comes before a model turn")
		}
	}
	if lastTurn != 0 && (len(stretch) == 0 || stretch[0].Seq != lastTurn) {
		return errors.New("scheduler: a snapshot's facts do not start at its latest model turn")
	}
	for _, f := range held {
		if err := s.Step(f); err != nil {
			return err
		}
	}
	// Stepping the held facts set the turn seqs and the compaction's
	// reach as far as they know; the snapshot's say what came before.
	s.odd, s.convFrom, s.lastTurnSeq, s.prevTurnSeq, s.upTo = odd, convFrom, lastTurn, prevTurn, upTo
	s.prefix, s.held, s.oddScanned = prefix, s.log.len(), s.log.len()
	if obs.Seq > prefix.Seq() {
		return fmt.Errorf("scheduler: a snapshot's last observation is at seq %d, after the snapshot's seq %d", obs.Seq, prefix.Seq())
	}
	s.heldObs = obs
	return nil
}

// compacted notes where the conversation starts after a compaction: the
// latest own model turn at or before its reach, so that a fold from there
// knows every call whose results the compaction keeps. A compaction that
// reaches less far than an earlier one (only a hand-made log has one), or
// that cannot be read, starts the conversation at the first fact.
func (s *Scheduler[S]) compacted(f facts.Fact) {
	p, err := facts.Decode[facts.ContextCompacted](f)
	from := uint64(0)
	if err == nil && p.UpTo >= s.upTo {
		switch {
		case s.lastTurnSeq != 0 && s.lastTurnSeq <= p.UpTo:
			from = s.lastTurnSeq
		case s.prevTurnSeq != 0 && s.prevTurnSeq <= p.UpTo:
			from = s.prevTurnSeq
		}
	}
	if err == nil {
		s.upTo = max(s.upTo, p.UpTo)
	}
	s.convFrom = from
}

// foldPrefix folds the facts of the prefix from seq from into st.
func (s *Scheduler[S]) foldPrefix(st *state[S], from uint64) {
	for f, err := range s.prefix.Read(from) {
		if err != nil {
			if s.err == nil {
				s.err = fmt.Errorf("scheduler: read the log before seq %d: %w", s.prefix.Seq()+1, err)
			}
			return
		}
		if folded(f.Kind) {
			s.fold(st, f)
		}
		if s.err != nil {
			return
		}
	}
}

// anyOdd reports whether an action.requested of this scheduler's names
// an idempotency key other than its action's own.
func (s *Scheduler[S]) anyOdd() (bool, error) {
	for ; s.oddScanned < s.log.len() && !s.odd; s.oddScanned++ {
		f := s.log.at(s.oddScanned)
		if f.Kind != facts.KindActionRequested || !owns(f.Cause) {
			continue
		}
		p, err := facts.Decode[facts.ActionRequested](f)
		if err != nil {
			return false, fmt.Errorf("scheduler: seq %d: %w", f.Seq, err)
		}
		s.odd = p.IdempotencyKey != executeKey(p.ActionID)
	}
	return s.odd, nil
}

// prior is the attempt that completed key before the attempt id, as the
// whole log's fold has it — without folding the whole log when no
// request of the thread names another's key.
func (s *Scheduler[S]) prior(key, id string) *Action {
	if odd, err := s.anyOdd(); err == nil && !odd && key == executeKey(id) {
		return nil
	}
	return s.whole().done[key]
}

// convFold is the fold of the conversation from where it starts.
type convFold[S any] struct {
	st      *state[S]
	from    uint64
	applied int // log[:applied] are folded into st, or older than from
}

// talk is the conversation the whole log gives, folded from where it
// starts (see above); the whole log's when it starts at the first fact, or
// when the fold from its start met a fact it could not place.
func (s *Scheduler[S]) talk() []msg {
	if s.convFrom == 0 || s.full != nil {
		return s.whole().lend()
	}
	c := s.conv
	if c == nil || c.from != s.convFrom {
		c = &convFold[S]{st: newState(s.env), from: s.convFrom, applied: s.held}
		if c.from <= s.prefix.Seq() {
			s.foldPrefix(c.st, c.from)
		} else {
			for c.applied < s.log.len() && s.log.at(c.applied).Seq < c.from {
				c.applied++
			}
		}
		s.conv = c
	}
	for ; c.applied < s.log.len() && s.err == nil && !c.st.missed; c.applied++ {
		s.fold(c.st, s.log.at(c.applied))
	}
	if c.st.missed || s.err != nil {
		return s.whole().lend()
	}
	return c.st.lend()
}
