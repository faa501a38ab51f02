package scheduler

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// A lean scheduler (fold.Leaner) is a verifier's: it is given the facts it
// steps as a fold.Source, and its fold of the whole log lets go of what
// only a reading of the whole thread needs — the conversation, and the
// calls of earlier turns once settled — instead of holding the decoded
// records of every turn of a long log. Its answers are the same as a
// scheduler's that keeps everything:
//
//   - what is enabled is the fold of the latest turn on, which is not
//     lean (see Scheduler);
//   - a verifier's check, an answer, or a fold of a fact that names a call
//     let go of (its ref, or an action, request or hook of it) finds it
//     missing, and the whole log is then folded again from the source,
//     keeping everything, and asked instead (unlean): a log that names
//     settled calls of earlier turns is one no runtime writes, and it
//     costs what a scheduler that keeps everything costs;
//   - a reading of the whole thread, the conversation: the same;
//   - the loop guard's count of the same call made in a row, which may
//     reach back into calls let go of: the run of equal calls at the end
//     of those let go of is kept (the tool, a digest of the arguments as
//     the guard compares them, how many);
//   - an attempt's idempotency key completed by another: once a request
//     names a key other than its action's own, nothing more is let go of
//     (and the whole log is folded again if anything was).
//
// A call is let go of only when everything after it can go on without it:
// settled, not a delegation or an offered merge or a served call, its
// confirmation (if any) asked under its ref, and every call before it let
// go of too — so the calls kept are the latest of the whole log's, in
// order. A model turn the lean fold enables cannot run: it has no
// conversation to give the model.

// leanFold is what the whole log's fold of a lean scheduler keeps of the
// calls it let go of.
type leanFold struct {
	// evicted are the turns some call of which was let go of, as
	// ascending runs; a lookup that misses a ref of one of them
	// (touched) needs the whole log's fold.
	evicted []turnSpan
	// stop is set when nothing more may be let go of.
	stop    bool
	touched bool
	// tail is the run of equal calls (tool and canonical arguments) at
	// the end of those let go of, for the loop guard (see repeats).
	tail struct {
		name  string
		canon [sha256.Size]byte
		n     int
	}
}

type turnSpan struct{ from, to int }

// maxSpans bounds the runs of turns let go of: a log whose turn numbers
// jump about (no runtime writes one) stops being let go of.
const maxSpans = 64

func (l *leanFold) add(turn int) {
	if k := len(l.evicted); k > 0 {
		last := &l.evicted[k-1]
		switch {
		case turn >= last.from && turn <= last.to:
			return
		case turn == last.to+1:
			last.to = turn
			return
		}
	}
	l.evicted = append(l.evicted, turnSpan{turn, turn})
	if len(l.evicted) >= maxSpans {
		l.stop = true
	}
}

func (l *leanFold) has(turn int) bool {
	for _, sp := range l.evicted {
		if turn >= sp.from && turn <= sp.to {
			return true
		}
	}
	return false
}

// Lean makes the scheduler lean (see above), reading the facts again
// from src when it needs them. It does nothing to a scheduler that has
// stepped facts or was restored from a snapshot.
func (s *Scheduler[S]) Lean(src fold.Source) {
	if s.log.len() == 0 && s.prefix == nil && s.full == nil {
		s.src = src
	}
}

// missedRef notes a lookup that found no call for ref, in the whole log's
// lean fold: when ref may be a call let go of, the fold is touched, and
// what it answered is not the whole log's.
func (s *state[S]) missedRef(ref string) {
	l := s.lean
	if l == nil || len(l.evicted) == 0 {
		return
	}
	rest, ok := strings.CutPrefix(ref, s.scope())
	if !ok {
		return
	}
	n, _, _ := strings.Cut(rest, "-")
	if turn, err := strconv.Atoi(n); err == nil && l.has(turn) {
		l.touched = true
	}
}

// touched reports whether the fold is lean and something it answered
// needs the calls it let go of.
func (s *state[S]) touched() bool { return s.lean != nil && s.lean.touched }

// oddKey notes, in a lean fold, a request naming an idempotency key other
// than its action's own: nothing more is let go of, and what was needs
// the whole log's fold (an earlier completion of the key may be among it).
func (s *state[S]) oddKey(p facts.ActionRequested) {
	if l := s.lean; l != nil && p.IdempotencyKey != executeKey(p.ActionID) {
		l.stop = true
		if len(l.evicted) > 0 {
			l.touched = true
		}
	}
}

// evict lets go of the settled calls at the start of the calls kept, up
// to the first that cannot be let go of (see above). It runs when a new
// model turn is folded.
func (s *state[S]) evict() {
	l := s.lean
	if l == nil || l.stop {
		return
	}
	n := 0
	for n < len(s.all) && s.evictable(s.all[n]) {
		n++
	}
	if n == 0 {
		return
	}
	for _, c := range s.all[:n] {
		delete(s.byRef, c.ref)
		if c.asked != nil {
			delete(s.byRequest, c.ref)
		}
		for _, a := range c.attempts {
			delete(s.byAction, a.ID)
			if s.done[a.Requested.IdempotencyKey] == a {
				delete(s.done, a.Requested.IdempotencyKey)
			}
		}
		l.add(c.turn)
		if s.env.LoopGuard > 0 {
			canon := sha256.Sum256([]byte(c.canonical()))
			if l.tail.n > 0 && l.tail.name == c.call.Name && l.tail.canon == canon {
				l.tail.n++
			} else {
				l.tail.name, l.tail.canon, l.tail.n = c.call.Name, canon, 1
			}
		}
	}
	// A new slice: what is kept is the latest turn's few calls, and the
	// old one's start would hold the calls let go of.
	s.all = append([]*call(nil), s.all[n:]...)
}

// evictable reports whether c may be let go of (see above).
func (s *state[S]) evictable(c *call) bool {
	if !c.settled() || c.child != nil || c.offer != nil || c.served != nil || s.byRef[c.ref] != c ||
		c.ref != s.scope()+strconv.Itoa(c.turn)+"-"+c.call.ID {
		return false
	}
	if c.asked != nil && (c.asked.RequestID != c.ref || s.byRequest[c.ref] != c) {
		return false
	}
	for _, a := range c.attempts {
		if s.byAction[a.ID] != c || a == s.unchecked || a.Requested.IdempotencyKey != executeKey(a.ID) {
			return false
		}
	}
	return true
}

// tailRepeats is how many calls equal to c (see repeatsIn) end the calls
// the lean fold let go of.
func (l *leanFold) tailRepeats(c *call) int {
	if l.tail.n == 0 || l.tail.name != c.call.Name || l.tail.canon != sha256.Sum256([]byte(c.canonical())) {
		return 0
	}
	return l.tail.n
}

// unlean replaces a lean fold of the whole log with one that keeps
// everything, folded again from the source up to the same fact, and
// stops the scheduler being lean. It returns the whole log's fold.
func (s *Scheduler[S]) unlean() *state[S] {
	if s.full == nil || s.full.lean == nil {
		return s.full
	}
	upTo, src := s.full.head, s.src
	st := newState(s.env)
	s.full, s.src = st, nil
	if upTo == 0 {
		return st
	}
	for f, err := range src.Read(1) {
		if err != nil {
			if s.err == nil {
				s.err = fmt.Errorf("scheduler: read the log again up to seq %d: %w", upTo, err)
			}
			break
		}
		if f.Seq > upTo {
			break
		}
		if folded(f.Kind) {
			s.fold(st, f)
		}
		if s.err != nil {
			break
		}
	}
	if s.err == nil && st.head != upTo {
		s.err = fmt.Errorf("scheduler: read the log again up to seq %d: it ends at seq %d", upTo, st.head)
	}
	return st
}

// wholeKept returns the fold of the whole log, brought up to date, that
// keeps everything (for a reading, the conversation).
func (s *Scheduler[S]) wholeKept() *state[S] {
	s.whole()
	return s.unlean()
}
