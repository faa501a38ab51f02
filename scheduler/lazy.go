package scheduler

import (
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// Scheduler is the coding scheduler component. Make one per fold with New.
//
// Stepping a fact decodes nothing: the scheduler keeps the facts and folds
// them when it is asked. What is enabled now depends only on the latest
// model turn and what followed it (and on the system configuration), so
// Output folds just that stretch; the conversation and the answers to
// earlier requests need the whole log, which is folded — once, and then
// fact by fact — only when a model turn is due or an answer is checked.
// Resuming a long parked thread therefore decodes a few facts, not all.
type Scheduler[S any] struct {
	env Env[S]

	log       factLog
	system    int // index in log of system.configured, or -1
	turnStart int // index in log of the latest own model.turn (0 when none)

	current        *state[S] // the fold of log[turnStart:], after the system
	currentFrom    int
	currentApplied int
	full           *state[S] // the fold of log[:fullApplied]
	fullApplied    int
	err            error // the first fact that could not be folded

	// Where the conversation starts, for a scheduler restored from a
	// snapshot (see snapshot.go): the latest two own model turns, and the
	// latest compaction's reach.
	lastTurnSeq, prevTurnSeq uint64
	upTo, convFrom           uint64

	// A scheduler restored from a snapshot holds only the facts it needs
	// to say what is enabled: log[:held] are the snapshot's, from its
	// latest model turn on (and the first system.configured); the facts
	// before are read again from prefix when the whole log is needed.
	prefix fold.Prefix // nil for a scheduler that stepped every fact
	held   int
	// heldObs is the last observation of the workspace in the facts
	// before the held ones (see lastObserved).
	heldObs action.Observed
	// releasedObs is the last observation of the workspace in the facts
	// the log has released (see release), if any of them records one.
	releasedObs action.Observed
	odd         bool // an action.requested folded names another action's idempotency key
	oddScanned  int  // log[:oddScanned] are scanned for odd
	conv        *convFold[S]
	// src, when set, makes the scheduler lean: its fold of the whole log
	// reads facts again from src instead of keeping what they say (see
	// lean.go).
	src fold.Source
}

// New returns a scheduler with the environment env.
func New[S any](env Env[S]) *Scheduler[S] {
	return &Scheduler[S]{env: env, system: -1}
}

// Name is "scheduler".
func (s *Scheduler[S]) Name() string { return "scheduler" }

// Step keeps one fact of a kind the scheduler folds, to be folded when
// needed; it ignores the rest.
func (s *Scheduler[S]) Step(f facts.Fact) error {
	if !folded(f.Kind) {
		return nil
	}
	switch {
	case f.Kind == facts.KindSystemConfigured && s.system < 0:
		s.system = s.log.len()
	case f.Kind == facts.KindModelTurn && owns(f.Cause):
		s.turnStart = s.log.len()
		s.prevTurnSeq, s.lastTurnSeq = s.lastTurnSeq, f.Seq
	case f.Kind == facts.KindContextCompacted:
		s.compacted(f)
	}
	s.log.add(f)
	return nil
}

// lastObserved is the thread's last observation of the workspace: the
// latest fact that records one (see action.ObservedIn), whichever
// scheduler's, looked for from the end of the log; for a scheduler
// restored from a snapshot, the snapshot's when none of the facts it holds
// records one.
func (s *Scheduler[S]) lastObserved() (action.Observed, error) {
	o, ok, err := s.observedIn(s.log.held(), s.log.len())
	switch {
	case err != nil || ok:
		return o, err
	case s.log.held() > 0:
		return s.releasedObs, nil
	}
	return s.heldObs, nil
}

// observedIn is the last observation of the workspace that log[from:to]
// records, looked for from the end.
func (s *Scheduler[S]) observedIn(from, to int) (action.Observed, bool, error) {
	for i := to - 1; i >= from; i-- {
		o, ok, err := action.ObservedIn(s.log.at(i))
		if err != nil {
			return action.Observed{}, false, fmt.Errorf("scheduler: seq %d: %w", s.log.at(i).Seq, err)
		}
		if ok {
			return o, true, nil
		}
	}
	return action.Observed{}, false, nil
}

// release lets go of the facts that no fold of the scheduler reads again,
// once the whole log's fold has folded them: those before the latest
// model turn (where the fold of the current turn starts), in whole chunks,
// keeping the chunk of system.configured (which that fold folds first).
// What else reads them is kept aside first: the last observation among
// them (lastObserved), and whether any names an odd idempotency key
// (anyOdd). Without this, a fold that is asked for the whole log (a
// verifier's, a long session's) would hold every fact twice: as it was
// stored and as it is folded.
func (s *Scheduler[S]) release() {
	if s.prefix != nil || s.full == nil || s.err != nil {
		return // a restored scheduler reads its prefix again instead
	}
	upTo := min(s.fullApplied, s.turnStart) / chunkSize * chunkSize
	if upTo-s.log.held() < 2*chunkSize {
		return // not worth a scan yet
	}
	if _, err := s.anyOdd(); err != nil {
		return
	}
	if !s.odd && s.oddScanned < upTo {
		return
	}
	o, ok, err := s.observedIn(s.log.held(), upTo)
	if err != nil {
		return
	}
	if ok {
		s.releasedObs = o
	}
	keep := -1
	if s.system >= 0 {
		keep = s.system / chunkSize
	}
	s.log.release(upTo, keep)
}

// whole returns the fold of the whole log, brought up to date.
func (s *Scheduler[S]) whole() *state[S] {
	if s.full == nil {
		s.full = newState(s.env)
		switch {
		case s.prefix != nil:
			s.foldPrefix(s.full, 1)
			s.fullApplied = s.held
		case s.src != nil:
			s.full.lean = &leanFold{}
		}
	}
	for ; s.fullApplied < s.log.len() && s.err == nil; s.fullApplied++ {
		s.fold(s.full, s.log.at(s.fullApplied))
		if s.full.touched() {
			s.unlean()
		}
	}
	s.release()
	return s.full
}

// now returns the fold of the latest model turn on, brought up to date.
func (s *Scheduler[S]) now() *state[S] {
	if s.current == nil || s.currentFrom != s.turnStart {
		s.current = newState(s.env)
		s.current.whole = s.whole
		s.current.observed = s.lastObserved
		s.current.leanNow = func() bool { return s.src != nil }
		if s.prefix != nil {
			s.current.talk, s.current.prior = s.talk, s.prior
		}
		s.currentFrom, s.currentApplied = s.turnStart, s.turnStart
		if s.system >= 0 && s.system < s.turnStart {
			s.fold(s.current, s.log.at(s.system))
		}
	}
	for ; s.currentApplied < s.log.len() && s.err == nil; s.currentApplied++ {
		s.fold(s.current, s.log.at(s.currentApplied))
	}
	return s.current
}

func (s *Scheduler[S]) fold(st *state[S], f facts.Fact) {
	if err := st.apply(f); err != nil && s.err == nil {
		s.err = fmt.Errorf("scheduler: seq %d: %w", f.Seq, err)
	}
}

// Output reports the phase and the transitions it enables. A fact that
// cannot be folded (a payload that is not its kind's: the store refuses
// those, so only damage makes one) stops the thread, naming it.
func (s *Scheduler[S]) Output() fold.Output[S] {
	st := s.now()
	var out fold.Output[S]
	if s.err == nil {
		out = st.output() // may fold the whole log, for a model turn's conversation
	}
	if s.err != nil {
		return fold.Output[S]{Stop: &fold.Stop{Status: fold.StatusFailed, Reason: s.err.Error()}}
	}
	return out
}

// Reading returns the scheduler's reading of the whole thread so far:
// every call with its actions, every question, the configuration (see
// Reading). A fact that could not be folded is its error.
func (s *Scheduler[S]) Reading() (Reading, error) {
	st := s.wholeKept()
	if s.err != nil {
		return Reading{}, s.err
	}
	return st.reading(), nil
}

// Current returns the reading of the thread's latest model turn: the
// configuration, the turns so far, the calls of the latest turn with their
// actions, and its question. It is what says what waits and what runs — a
// call of an earlier turn is settled — and it costs what the turn holds,
// not the log.
func (s *Scheduler[S]) Current() (Reading, error) {
	st := s.now()
	if s.err != nil {
		return Reading{}, s.err
	}
	return st.current(), nil
}

// Check returns why f cannot be the next fact of the thread as far as the
// lifecycle of calls and actions goes (see Stage), or nil. It is asked
// before f is stepped: a verifier's question (fold.Checker); a runtime
// never appends such a fact.
func (s *Scheduler[S]) Check(f facts.Fact) error {
	st := s.whole()
	if s.err != nil {
		return s.err
	}
	err := st.check(f)
	if st.touched() {
		// It names a call a lean fold let go of (see lean.go).
		if st = s.unlean(); s.err != nil {
			return s.err
		}
		err = st.check(f)
	}
	return err
}

// CheckEnd returns why the thread's log cannot end where it is, or nil:
// a record that must come with another is missing.
func (s *Scheduler[S]) CheckEnd() error {
	st := s.whole()
	if s.err != nil {
		return s.err
	}
	return st.checkEnd()
}

// Messages returns the conversation the next model turn would see: the
// caller's own copy.
func (s *Scheduler[S]) Messages() []facts.Message {
	if s.prefix != nil {
		return said(s.talk())
	}
	return s.wholeKept().conversation()
}

// Accept checks an answer against the requests of the whole log.
func (s *Scheduler[S]) Accept(d facts.Draft) error {
	if s.prefix != nil {
		// Restored from a snapshot: an answer to a request of the latest
		// turn is checked as the whole log would check it (see
		// snapshot.go); only one naming a request it does not know needs
		// the whole log.
		st := s.now()
		if s.err != nil {
			return s.err
		}
		if err := st.accept(d); !errors.Is(err, ErrUnknownRequest) {
			return err
		}
	}
	st := s.whole()
	if s.err != nil {
		return s.err
	}
	err := st.accept(d)
	if st.touched() {
		// It names a call a lean fold let go of (see lean.go).
		if st = s.unlean(); s.err != nil {
			return s.err
		}
		err = st.accept(d)
	}
	return err
}

// factLog keeps facts in fixed-size chunks, so that a long log grows
// without copying what it holds, and lets go of the chunks at its start
// that its reader has done with (release).
type factLog struct {
	chunks [][]facts.Fact
	n      int
	// from is the first index of the facts still held in order:
	// log[:from] are released, but for the chunk release was told to keep.
	from int
}

// held is the index of the first fact the log holds in order: at(i) is
// valid for held() <= i < len() (and in a chunk kept by release).
func (l *factLog) held() int { return l.from }

// release lets go of log[:upTo], a multiple of chunkSize, except the
// chunk numbered keep.
func (l *factLog) release(upTo, keep int) {
	for c := l.from / chunkSize; c < upTo/chunkSize; c++ {
		if c != keep {
			l.chunks[c] = nil
		}
	}
	l.from = max(l.from, upTo)
}

const chunkSize = 1024

func (l *factLog) add(f facts.Fact) {
	if l.n%chunkSize == 0 {
		// The first chunk grows as the log does (most threads are short,
		// and a server keeps the folds of thousands); the next ones, of a
		// log known to be long, are made whole.
		var c []facts.Fact
		if l.n > 0 {
			c = make([]facts.Fact, 0, chunkSize)
		}
		l.chunks = append(l.chunks, c)
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, f)
	l.n++
}

func (l *factLog) len() int { return l.n }

func (l *factLog) at(i int) facts.Fact { return l.chunks[i/chunkSize][i%chunkSize] }
