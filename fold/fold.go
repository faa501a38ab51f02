package fold

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
)

// Transition is a step a view enables: a stable key derived from the log
// (such as "infer/turn/3") and the effect that, when run, returns the drafts
// of the facts to append. The runtime appends them with Key as their cause,
// after which the key is used and never runs again.
//
// A transition that acts on the world must record a claim before it acts —
// action.started, immediately before an adapter is invoked — so that a
// process dying mid-act leaves the action visibly in doubt instead of
// silently undone. Such a transition sets Staged instead of Effect: the
// runtime gives it a Journal through which it appends its claim, with
// optimistic concurrency, in the middle of its run.
type Transition[S any] struct {
	Key    string
	Effect effect.Effect[S, []facts.Draft]
	// Staged, when set, is used instead of Effect.
	Staged func(j Journal) effect.Effect[S, []facts.Draft]
	// ClaimKey is the cause under which a staged transition records its
	// claim (such as "tool/start/1-c" for "tool/execute/1-c"); it must be
	// set when Staged is.
	ClaimKey string
}

// Journal appends facts in the middle of a transition's run.
type Journal interface {
	// Record appends drafts under the transition's ClaimKey at the head the
	// transition was projected at. It may be called once. If another writer
	// appended first, or the key is already a cause, nothing is appended
	// and the error wraps ErrClaimLost: the transition must not act.
	Record(ctx context.Context, drafts ...facts.Draft) error
}

// ErrClaimLost: a Journal.Record was refused because the thread moved on;
// a transition that gets it must stop without acting. The runtime then
// folds what the other writer appended and projects again.
var ErrClaimLost = errors.New("claim lost: the thread moved on")

// WaitKind names what a parked thread waits for.
type WaitKind string

// What a thread can wait for: each ends when a person appends an answer,
// or — a child — when the child thread it delegated to reports.
const (
	WaitConfirmation WaitKind = "confirmation"
	WaitQuestion     WaitKind = "question"
	WaitReconcile    WaitKind = "reconcile"
	// WaitChild: a child thread's outcome; RequestID is the child's id.
	WaitChild WaitKind = "child"
	// WaitPlan: a person's word on a plan the thread made in plan mode:
	// act on it, or ask for another.
	WaitPlan WaitKind = "plan"
	// WaitBudget: the tree's budget in money or tokens cannot cover the
	// next model turn; a person raises it (or stops the thread).
	// RequestID is "budget".
	WaitBudget WaitKind = "budget"
)

// Wait is one request a view waits on a person to answer.
type Wait struct {
	Kind WaitKind `json:"kind"`
	// RequestID is the id an answer must name.
	RequestID string `json:"request_id"`
	// Summary says in one line what is asked, for a person.
	Summary string `json:"summary,omitempty"`
	// Thread, when set, is the thread whose request it is, when that is
	// not the waiting thread itself: a child's, waited on through its
	// parent. An answer goes to that thread.
	Thread string `json:"thread,omitempty"`
}

// Stop is a view's word that the thread has ended without being done.
type Stop struct {
	// Status is "failed" (a transition failed for good) or "stopped" (a
	// limit was reached, such as a budget).
	Status string
	// Reason says why, for a person.
	Reason string
	// Retry, when set, names a failed transition whose cause can go away
	// (credentials fixed, a service back up): the component still enables
	// it, and a new Resume — a person's word to go on — runs it once more.
	Retry string
}

// The statuses of a Stop.
const (
	StatusFailed  = "failed"
	StatusStopped = "stopped"
)

// Output is what a component's view enables.
type Output[S any] struct {
	// View is the component's folded state, for inspection; the runtime
	// does not read it.
	View any
	// Transitions are the steps the view enables, in the order to run them.
	Transitions []Transition[S]
	// Waits are the requests the view waits on a person to answer.
	Waits []Wait
	// Stop, when set, ends the thread: nothing more runs.
	Stop *Stop
}

// Component folds a thread's facts into a view. Step is called once per
// fact, in log order, from the first; Output may be called between any two
// Steps and must not change the view. A component sees every fact of the
// thread, its own and others', and ignores what it does not need.
//
// Step must be deterministic: it may read only the fact (never a clock,
// randomness or map iteration order). An error from Step means the log is
// not one this component can fold — a payload of the wrong shape — and
// stops the runtime.
type Component[S any] interface {
	// Name identifies the component in errors and traces.
	Name() string
	Step(f facts.Fact) error
	Output() Output[S]
}

// Accepter is implemented by components that check facts posted from
// outside before they are appended: an answer must name a request the view
// is waiting for, and not one already answered.
type Accepter interface {
	// Accept returns nil if the view can take d, or an error saying what is
	// wrong with it.
	Accept(d facts.Draft) error
}

// Checker is implemented by components that know which facts their view
// allows next. A verifier asks it about each fact of a log before the fact
// is stepped, and once more at the end; a runtime never appends a fact
// that a Checker would refuse, so a refusal names damage or tampering.
type Checker interface {
	// Check returns why f cannot come next, or nil.
	Check(f facts.Fact) error
	// CheckEnd returns why the log cannot end here (a record that must
	// come with another is missing), or nil.
	CheckEnd() error
}

// ErrDuplicateTransition: two components enabled the same key. The error
// is a *DuplicateTransitionError naming both.
var ErrDuplicateTransition = errors.New("two components enabled the same transition")

// DuplicateTransitionError names a key enabled by two components.
type DuplicateTransitionError struct {
	Key           string
	First, Second string
}

func (e *DuplicateTransitionError) Error() string {
	return fmt.Sprintf("transition %q is enabled by both %s and %s: %v", e.Key, e.First, e.Second, ErrDuplicateTransition)
}

// Is reports whether target is ErrDuplicateTransition.
func (e *DuplicateTransitionError) Is(target error) bool { return target == ErrDuplicateTransition }

// ErrOutOfOrder: a fact was stepped that does not follow the last one.
var ErrOutOfOrder = errors.New("fact out of order")

// Enabled is a transition with the component that enabled it.
type Enabled[S any] struct {
	Transition[S]
	Component string
}

// Projection is the union of the components' outputs at one head.
type Projection[S any] struct {
	// Enabled are the transitions to run, the first first.
	Enabled []Enabled[S]
	// Waits are what the thread waits for when nothing is enabled.
	Waits []Wait
	// Stop, when set, ends the thread; Enabled and Waits are then empty.
	Stop *Stop
	// Retry is the transition Stop.Retry names, when a component enables
	// it: the runtime runs it at the start of a Resume, never in a loop.
	Retry *Enabled[S]
}

// Fold steps an actor's components through one thread's log. It keeps the
// head (seq and hash of the last fact) and the causes used so far. A Fold
// is used by one goroutine.
type Fold[S any] struct {
	components []Component[S]
	causes     map[string]uint64 // cause → first seq; membership only, never iterated
	seq        uint64
	last       facts.Fact // the last fact stepped; its hash is computed when asked for
	defect     *Stop
	failures   map[string]failure // key → its transition.failed facts; iterated only sorted

	// A fold restored from a snapshot (Restore) asks index about the
	// causes of the facts up to prefixSeq; absent caches its noes.
	index     CauseIndex
	prefixSeq uint64
	absent    map[string]bool // membership only
}

// failure counts the transition.failed facts of one key.
type failure struct {
	n    int
	last string // the message of the last
}

// New returns a Fold over the components, which must be fresh (stepped
// through no facts).
func New[S any](components ...Component[S]) *Fold[S] {
	return &Fold[S]{components: components, causes: make(map[string]uint64), failures: map[string]failure{}}
}

// Reserve makes room for the causes of n facts before any is stepped, so
// that folding a long log does not regrow what keeps them. n is a hint: a
// log of any length folds the same. After the first Step it does nothing.
func (f *Fold[S]) Reserve(n int) {
	if f.seq == 0 && n > 0 {
		f.causes = make(map[string]uint64, n)
	}
}

// Seq is the seq of the last fact stepped, 0 before any.
func (f *Fold[S]) Seq() uint64 { return f.seq }

// Hash is the hash of the last fact stepped (zero before any).
func (f *Fold[S]) Hash() facts.Hash {
	if f.seq == 0 {
		return facts.Hash{}
	}
	return f.last.Hash()
}

// Last is the last fact stepped (the zero Fact before any).
func (f *Fold[S]) Last() facts.Fact { return f.last }

// Used reports whether key is already the cause of a fact, and where. On
// a restored fold, whose cause index can fail, an error reads as not used:
// such a fold's callers ask Cause.
func (f *Fold[S]) Used(key string) (seq uint64, ok bool) {
	seq, ok, _ = f.Cause(key)
	return seq, ok
}

// Cause reports whether key is already the cause of a fact, and where. A
// fold restored from a snapshot asks its cause index about the facts
// before the snapshot, and may fail doing so.
func (f *Fold[S]) Cause(key string) (seq uint64, ok bool, err error) {
	if seq, ok := f.causes[key]; ok {
		return seq, true, nil
	}
	if f.index == nil || f.absent[key] {
		return 0, false, nil
	}
	seq, ok, err = f.index.Cause(key)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("fold: cause %q before seq %d: %w", key, f.prefixSeq+1, err)
	case ok && seq <= f.prefixSeq:
		f.causes[key] = seq
		return seq, true, nil
	}
	// Not in the prefix. A fact after it that has the cause is folded
	// (and in causes) or not read yet: then, as far as this fold knows,
	// the key is not used.
	if f.absent == nil {
		f.absent = map[string]bool{}
	}
	f.absent[key] = true
	return 0, false, nil
}

// Failures returns how many transition.failed facts name key, and the
// message of the last: what a runtime needs to name the next failure
// record and say why it stopped.
func (f *Fold[S]) Failures(key string) (n int, last string) {
	fl := f.failures[key]
	return fl.n, fl.last
}

// Components returns the components, in projection order.
func (f *Fold[S]) Components() []Component[S] { return f.components }

// Step folds the next fact of the log into every component. The fact must
// follow the last one: its seq one more. (The hash chain is the store's to
// check, in Verify; hashing every fact again on every resume would cost a
// fold more than reading the log does.)
func (f *Fold[S]) Step(fact facts.Fact) error {
	if fact.Seq != f.seq+1 {
		return fmt.Errorf("fold %s: seq %d after seq %d: %w", fact.Thread, fact.Seq, f.seq, ErrOutOfOrder)
	}
	for _, c := range f.components {
		if err := c.Step(fact); err != nil {
			return fmt.Errorf("fold %s seq %d (%s) in %s: %w", fact.Thread, fact.Seq, fact.Kind, c.Name(), err)
		}
	}
	// The facts of one append share its cause: only the first of them
	// can be the cause's first use.
	if fact.Seq == 1 || fact.Cause != f.last.Cause {
		if _, ok := f.causes[fact.Cause]; !ok {
			f.causes[fact.Cause] = fact.Seq
		}
	}
	if fact.Kind == facts.KindTransitionFailed {
		tf, err := facts.Decode[facts.TransitionFailed](fact)
		if err != nil {
			return fmt.Errorf("fold: %w", err)
		}
		fl := f.failures[tf.Key]
		f.failures[tf.Key] = failure{n: fl.n + 1, last: tf.Message}
		if tf.Defect && f.defect == nil {
			// A defect is a bug, not an expected failure: no component may
			// carry on past it, so the fold itself stops the thread.
			f.defect = &Stop{Status: StatusFailed, Reason: fmt.Sprintf("transition %s died: %s", tf.Key, tf.Message)}
		}
	}
	f.seq, f.last = fact.Seq, fact
	return nil
}

// Project returns what the folded log enables now. It calls Output on every
// component, drops transitions whose key is already a cause, and refuses a
// key enabled twice.
func (f *Fold[S]) Project() (Projection[S], error) {
	var p Projection[S]
	if f.defect != nil {
		p.Stop = f.defect
		return p, nil
	}
	owner := make(map[string]string) // key → component; membership only
	for _, c := range f.components {
		out := c.Output()
		for _, t := range out.Transitions {
			if t.Key == "" {
				return Projection[S]{}, fmt.Errorf("fold: %s enabled a transition with no key", c.Name())
			}
			if (t.Staged == nil) != (t.ClaimKey == "") {
				return Projection[S]{}, fmt.Errorf("fold: %s enabled %s: a staged transition needs a claim key, and only it", c.Name(), t.Key)
			}

			if first, dup := owner[t.Key]; dup {
				return Projection[S]{}, &DuplicateTransitionError{Key: t.Key, First: first, Second: c.Name()}
			}
			owner[t.Key] = c.Name()
			_, used, err := f.Cause(t.Key)
			if err != nil {
				return Projection[S]{}, err
			}
			if used {
				continue
			}
			p.Enabled = append(p.Enabled, Enabled[S]{Transition: t, Component: c.Name()})
		}
		p.Waits = append(p.Waits, out.Waits...)
		if out.Stop != nil && p.Stop == nil {
			p.Stop = out.Stop
			for _, t := range out.Transitions {
				if t.Key == out.Stop.Retry && out.Stop.Retry != "" {
					p.Retry = &Enabled[S]{Transition: t, Component: c.Name()}
				}
			}
		}
	}
	if p.Stop != nil {
		// Nothing more runs, and nobody is waited for: an answer could
		// move nothing.
		p.Enabled, p.Waits = nil, nil
	}
	return p, nil
}

// ErrRefused: a component refused a posted fact. The error wraps each
// component's reason.
var ErrRefused = errors.New("refused")

// ErrNotAddressed is what an Accepter returns (wrapped) for a fact that
// names nothing of its own — an answer to a request it never made. A fact
// that every Accepter finds not addressed to it is refused; one that some
// Accepter takes is accepted.
var ErrNotAddressed = errors.New("not addressed to this component")

// Accept asks every component that checks posted facts whether it takes d.
func (f *Fold[S]) Accept(d facts.Draft) error {
	var refused, elsewhere []error
	taken := false
	for _, c := range f.components {
		a, ok := c.(Accepter)
		if !ok {
			continue
		}
		switch err := a.Accept(d); {
		case err == nil:
			taken = true
		case errors.Is(err, ErrNotAddressed):
			elsewhere = append(elsewhere, err)
		default:
			refused = append(refused, err)
		}
	}
	switch {
	case len(refused) > 0:
		return fmt.Errorf("%w: %s: %w", ErrRefused, d.Kind, errors.Join(refused...))
	case !taken && len(elsewhere) > 0:
		return fmt.Errorf("%w: %s: %w", ErrRefused, d.Kind, errors.Join(elsewhere...))
	}
	return nil
}
