package audit

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// VerifyLog audits a thread's log against the actor that wrote it:
//
//   - the hash chain: seqs from 1 without gaps, each fact's Prev the hash of
//     the fact before (thread.Store.Verify);
//   - every caused fact was enabled by the fold at its position: its cause
//     is a transition the components enabled there (or the claim of one, or
//     the failure record of one), and every ingress fact was one the
//     components accepted there;
//   - every action record is consistent with itself and with its start: the
//     observation before is the one action.started recorded, the effect
//     state is the one the observation gives, and an unchanged observation
//     lists no changed paths — a report's claim cannot stand in for the
//     runtime's observation;
//   - every snapshot the store keeps of the thread (thread.Snapshots) is
//     the fold of the log at its seq: its hash is that fact's, and its
//     bytes are what the fold of every fact up to it makes. A snapshot of
//     another version is not checked (a resume ignores it too).
//
// It returns nil, a *VerifyError naming the first failing fact, a
// *SnapshotMismatchError naming the first snapshot that is not the fold at its
// seq (when the log itself verifies), or the store's error (a
// *thread.CorruptError names the first broken link).
//
// In a tree of threads (see harness.Delegate) actor is the root's: a
// child is folded by the actor its parent's delegation composes, and the
// links are checked both ways (see VerifyTree).
func VerifyLog(ctx context.Context, store thread.Store, actor harness.Actor, id string) error {
	return verifyTree(ctx, store, actor, id, map[string]bool{})
}

// VerifyFacts is VerifyLog over facts from anywhere — a JSON Lines export
// read with facts.ScanJSON, say: it checks the chain itself (seqs from 1
// without gaps, each Prev the hash of the fact before, every fact of the
// thread id) and then what VerifyLog checks of each fact. An empty log is
// an error.
func VerifyFacts(actor harness.Actor, id string, log iter.Seq2[facts.Fact, error]) error {
	_, err := verifyFacts(actor, id, log, nil, nil)
	return err
}

// verifyFacts verifies the log, and returns its verifier, whose fold has
// folded all of it, when it verifies. src, when set, reads the log again
// (from a store): the fold is then lean (fold.Leaner), holding less of a
// long log and reading facts again from src when it needs them.
func verifyFacts(actor harness.Actor, id string, log iter.Seq2[facts.Fact, error], snaps *snapshotCheck, src fold.Source) (*Verifier, error) {
	v := NewVerifier(actor, id)
	v.snaps = snaps
	if src != nil {
		v.Lean(src)
	}
	for f, err := range log {
		if err != nil {
			return nil, err
		}
		if err := v.Add(f); err != nil {
			return nil, err
		}
	}
	if v.seq == 0 {
		return nil, fmt.Errorf("verify %s: %w", id, harness.ErrUnknownThread)
	}
	if err := v.End(); err != nil {
		return nil, err
	}
	return v, snaps.result(v.seq)
}

// Verifier checks a thread's log fact by fact as VerifyFacts does, and
// is kept: a reader that follows a thread as it grows (a page) verifies
// each new fact once instead of the whole log again. Make one with
// NewVerifier; it is not safe for concurrent use.
type Verifier struct {
	actor harness.Actor
	v     verifier
	seq   uint64
	prev  facts.Hash
	// anchors are, when the fold is lean, the hashes of the facts
	// verified whose seq is a multiple of anchorEvery (anchors[i] that of
	// seq (i+1)·anchorEvery): what the fold reads again must chain to one
	// of them, or to prev (see Lean).
	anchors []facts.Hash
	lean    bool
	// reread is why the lean fold could not read the log again (a read
	// failed, or found another log): an error of the reading, not a
	// failure of the log.
	reread error
	err    error          // the first failure; Add adds nothing after it
	snaps  *snapshotCheck // the kept snapshots to check on the way, if any
	// tree is set once a fact of a tree of threads was added (a spawn,
	// a child's record): its links are checked by VerifyLog alone.
	tree bool
	// forked is the thread.forked that makes the log a fork (posted
	// right after the facts copied), at forkedSeq; its link to the
	// thread it was forked from is checked by VerifyLog alone.
	forked    *facts.ThreadForked
	forkedSeq uint64
}

// NewVerifier returns a verifier of the log of thread id, written by
// actor (in a tree, the actor that folds this thread: see VerifyLog).
func NewVerifier(actor harness.Actor, id string) *Verifier {
	return &Verifier{actor: actor, v: verifier{id: id, fold: fold.New(actor.New()...), pending: map[string]bool{}}}
}

// Lean makes the verifier's fold lean (see fold.Leaner): src reads the
// log again — from its store — and the fold reads from it what only a
// reading of the whole thread needs instead of holding every turn of a
// long log. Call it before the first Add; after, it does nothing.
//
// What the fold reads again is checked against what was verified: it
// must be the facts verified, in order, each one's prev the hash of the
// one before it, up to a fact whose hash the verifier kept — one every
// anchorEvery seqs, and the last verified — and have that hash; else
// ErrRereadDiffers. A fact is given to the fold only once the run it is
// in has reached such a hash, so the fold answers for the log it
// verified, for 32 bytes kept per anchorEvery facts instead of per fact
// (a hash chained to a known one is that fact's, as the log's own chain
// is). A reading that fails is returned by Add as an error of its own,
// not as a *VerifyError: the log was not found wanting.
func (v *Verifier) Lean(src fold.Source) {
	if v.seq != 0 {
		return
	}
	v.lean = true
	v.v.fold.Lean(fold.SourceFunc(func(from uint64) iter.Seq2[facts.Fact, error] {
		return func(yield func(facts.Fact, error) bool) {
			fail := func(err error) {
				if v.reread == nil {
					v.reread = err
				}
				yield(facts.Fact{}, err)
			}
			// run are the facts read since the last one checked against
			// a kept hash, held until one is; last is the hash of the
			// last of them.
			var run []facts.Fact
			var last facts.Hash
			for f, err := range src.Read(from) {
				if err != nil {
					fail(err)
					return
				}
				if f.Seq > v.seq {
					// A fact past those verified is not folded (the fold
					// reads up to the fact it had): given as it is, once
					// those before it were checked.
					if len(run) > 0 {
						fail(fmt.Errorf("seq %d: %w", run[0].Seq, ErrRereadDiffers))
						return
					}
					if !yield(f, nil) {
						return
					}
					continue
				}
				if len(run) > 0 && (f.Seq != run[len(run)-1].Seq+1 || f.Prev != last) {
					fail(fmt.Errorf("seq %d: %w", f.Seq, ErrRereadDiffers))
					return
				}
				run, last = append(run, f), f.Hash()
				want, kept := v.keptHash(f.Seq)
				if !kept {
					continue
				}
				if last != want {
					fail(fmt.Errorf("seq %d: %w", f.Seq, ErrRereadDiffers))
					return
				}
				for _, g := range run {
					if !yield(g, nil) {
						return
					}
				}
				run = run[:0]
			}
			if len(run) > 0 {
				// The reading ended before a kept hash: the log read
				// again is shorter than the log verified.
				fail(fmt.Errorf("seq %d: %w", run[0].Seq, ErrRereadDiffers))
			}
		}
	}))
}

// anchorEvery is how many facts apart a lean verifier keeps a fact's
// hash (see Lean): what the fold reads again is held back at most this
// many facts before it is given.
const anchorEvery = 64

// keptHash returns the hash the verifier kept of the fact at seq, if it
// kept one: an anchor, or the last fact verified.
func (v *Verifier) keptHash(seq uint64) (facts.Hash, bool) {
	if seq == v.seq {
		return v.prev, true
	}
	if seq > 0 && seq%anchorEvery == 0 && seq/anchorEvery <= uint64(len(v.anchors)) {
		return v.anchors[seq/anchorEvery-1], true
	}
	return facts.Hash{}, false
}

// Seq is the seq of the last fact added (0 for none).
func (v *Verifier) Seq() uint64 { return v.seq }

// Add checks f as the next fact of the log: its place in the chain, that
// the fold enabled or accepted it there, that its records hold together.
// It returns a *VerifyError naming f if not; after a failure, Add returns
// that failure again and checks nothing more.
func (v *Verifier) Add(f facts.Fact) error {
	if v.err != nil {
		return v.err
	}
	id := v.v.id
	bad := func(reason string) error {
		if v.reread != nil {
			v.err = fmt.Errorf("verify %s at seq %d: read the log again: %w", id, f.Seq, v.reread)
			return v.err
		}
		v.err = &VerifyError{Thread: id, Seq: f.Seq, Kind: f.Kind, Cause: f.Cause, Reason: reason}
		return v.err
	}
	switch {
	case f.Thread != id:
		return bad(fmt.Sprintf("a fact of thread %q", f.Thread))
	case f.Seq != v.seq+1:
		return bad(fmt.Sprintf("seq %d follows seq %d: a fact is missing or out of order", f.Seq, v.seq))
	case f.Prev != v.prev:
		return bad("its prev is not the hash of the fact before: the chain is broken here")
	}
	v.seq, v.prev = f.Seq, f.Hash()
	if v.lean && v.seq%anchorEvery == 0 {
		v.anchors = append(v.anchors, v.prev)
	}
	if reason := firstFacts(f, v.v.last); reason != "" {
		return bad(reason)
	}
	if reason := v.v.check(f); reason != "" {
		return bad(reason)
	}
	if err := v.v.lifecycle(f); err != nil {
		return bad(err.Error())
	}
	if err := v.v.fold.Step(f); err != nil {
		return bad(err.Error())
	}
	v.v.prevCause, v.v.last = f.Cause, f
	switch f.Kind {
	case facts.KindThreadSpawned, facts.KindChildSpawned, facts.KindChildReported, facts.KindThreadEnded, facts.KindThreadForked:
		v.tree = true
	}
	if f.Kind == facts.KindThreadForked && v.forked == nil && facts.IsIngress(f.Cause) {
		if p, err := facts.Decode[facts.ThreadForked](f); err == nil && f.Seq == p.At+1 {
			v.forked, v.forkedSeq = &p, f.Seq
		}
	}
	v.snaps.check(v.actor, v.v.fold, f)
	return nil
}

// End returns why the log cannot end where it is, or the first failure
// of Add, or nil: the log so far verifies. It changes nothing, so more
// facts may be added after.
func (v *Verifier) End() error {
	if v.err != nil {
		return v.err
	}
	last := v.v.last
	if v.v.held != "" {
		return &VerifyError{Thread: v.v.id, Seq: last.Seq, Kind: last.Kind, Cause: last.Cause,
			Reason: fmt.Sprintf("the log ends here, but action %s's effect state none needs its check to pass with it", v.v.held)}
	}
	for _, c := range v.v.fold.Components() {
		if ch, ok := c.(fold.Checker); ok {
			if err := ch.CheckEnd(); err != nil {
				return &VerifyError{Thread: v.v.id, Seq: last.Seq, Kind: last.Kind, Cause: last.Cause, Reason: "the log ends here, but " + err.Error()}
			}
		}
	}
	return nil
}

// lifecycle asks every component that checks facts (fold.Checker, as the
// coding scheduler does for its calls and actions) whether f may come
// next.
func (v *verifier) lifecycle(f facts.Fact) error {
	for _, c := range v.fold.Components() {
		if ch, ok := c.(fold.Checker); ok {
			if err := ch.Check(f); err != nil {
				return err
			}
		}
	}
	return nil
}

type verifier struct {
	id        string
	fold      *fold.Fold[harness.Services]
	prevCause string
	last      facts.Fact
	// pending are staged transitions whose claim is in the log: their own
	// key may follow, after other facts.
	pending map[string]bool
	// held is the action whose completion says none where its report and
	// observation say unknown: its check, next, must pass. (What an
	// action requested and how it started are read from the thread's
	// view: see action.)
	held string
}

// check returns why f could not have been appended where it is, or "".
func (v *verifier) check(f facts.Fact) string {
	if reason := v.consistent(f); reason != "" {
		return reason
	}
	switch {
	case answerKinds[f.Kind] && !facts.IsIngress(f.Cause) && !offered(f):
		return fmt.Sprintf("a %s comes from outside, but its cause is a transition's", f.Kind)
	case runtimeKinds[f.Kind] && facts.IsIngress(f.Cause):
		return fmt.Sprintf("only the runtime appends %s, but its cause is an ingress key", f.Kind)
	}
	if f.Cause == v.prevCause {
		// The same append as the fact before: a transition's facts share
		// its key.
		return ""
	}
	if facts.IsIngress(f.Cause) {
		if _, used := v.fold.Used(f.Cause); used {
			return "an ingress key used twice"
		}
		if err := v.fold.Accept(facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data}); err != nil {
			return "the fold did not accept it here: " + err.Error()
		}
		return ""
	}
	if _, used := v.fold.Used(f.Cause); used {
		return "its cause is already a cause earlier in the log"
	}
	if v.pending[f.Cause] {
		delete(v.pending, f.Cause)
		return ""
	}
	if key, _, ok := strings.Cut(f.Cause, "/elicit/"); ok && f.Kind == facts.KindQuestionAsked && v.pending[key] {
		// An MCP server's question, asked while the action whose claim
		// is in the log ran (the scheduler checks it names that action).
		return ""
	}
	if key, _, ok := strings.Cut(f.Cause, "/sample/"); ok && f.Kind == facts.KindModelSampled && v.pending[key] {
		// An MCP server's sampling turn, run while the action whose
		// claim is in the log ran (the scheduler checks it is that
		// action's).
		return ""
	}
	key, failed := failedKey(f)
	if failed && v.pending[key] {
		delete(v.pending, key)
		return ""
	}
	p, err := v.fold.Project()
	if err != nil {
		return "the fold could not project here: " + err.Error()
	}
	enabled := p.Enabled
	if p.Retry != nil {
		// A stopped thread's retryable transition runs when a person
		// resumes.
		enabled = append(enabled, *p.Retry)
	}
	for i, t := range enabled {
		match := t.Key == f.Cause || (failed && t.Key == key) || (t.ClaimKey != "" && t.ClaimKey == f.Cause)
		if !match {
			continue
		}
		if i > 0 && (p.Retry == nil || t.Key != p.Retry.Key) {
			// A runtime runs the first transition enabled, always: one
			// further down the list ran before it only in a log put
			// together by hand.
			return fmt.Sprintf("out of order: %s was enabled here, but %s comes first", t.Key, enabled[0].Key)
		}
		if t.ClaimKey != "" && t.ClaimKey == f.Cause {
			v.pending[t.Key] = true
		}
		return ""
	}
	if p.Stop != nil {
		return fmt.Sprintf("the thread had stopped (%s: %s); nothing was enabled", p.Stop.Status, p.Stop.Reason)
	}
	keys := make([]string, len(enabled))
	for i, t := range enabled {
		keys[i] = t.Key
	}
	if len(keys) == 0 {
		return fmt.Sprintf("the fold never enabled %s here (nothing was enabled: the thread waited or was done)", f.Cause)
	}
	return fmt.Sprintf("the fold never enabled %s here (enabled: %s)", f.Cause, strings.Join(keys, ", "))
}

// runtimeKinds are appended only by transitions; answerKinds only from
// outside (Post, fork, undo). A fact of either under the other kind of
// cause was not written by this program.
var (
	runtimeKinds = map[facts.Kind]bool{
		facts.KindSystemConfigured: true, facts.KindModelTurn: true, facts.KindModelCallFailed: true, facts.KindConfirmationRequested: true,
		facts.KindQuestionAsked: true, facts.KindActionRequested: true, facts.KindActionStarted: true,
		facts.KindActionCompleted: true, facts.KindActionInterrupted: true, facts.KindCheckRecorded: true,
		facts.KindContextCompacted: true, facts.KindBudgetExhausted: true, facts.KindTransitionFailed: true,
		facts.KindWorkspaceChanged: true, facts.KindInstructionsRead: true,
		facts.KindPlanRecorded: true, facts.KindHookRan: true, facts.KindOutputChecked: true,
		facts.KindRerunTurn: true, facts.KindModelSampled: true,
	}
	answerKinds = map[facts.Kind]bool{
		facts.KindUserMessage: true, facts.KindConfirmationAnswered: true, facts.KindQuestionAnswered: true,
		facts.KindEffectReconciled: true, facts.KindThreadForked: true, facts.KindWorkspaceRestored: true,
		facts.KindPolicySet: true, facts.KindContextBoundsSet: true, facts.KindPlanModeSet: true,
		facts.KindBudgetSet: true, facts.KindBudgetRaised: true, facts.KindBudgetShared: true,
	}
)

// offered reports whether f is a rerun's copy of its original's message
// or answer (facts.RerunTurn.Offers): a transition appends it, so it is
// checked as a transition's fact — its cause a transition enabled here.
func offered(f facts.Fact) bool {
	switch f.Kind {
	case facts.KindUserMessage:
		p, err := facts.Decode[facts.UserMessage](f)
		return err == nil && p.Served != nil
	case facts.KindQuestionAnswered:
		p, err := facts.Decode[facts.QuestionAnswered](f)
		return err == nil && p.Served != nil
	}
	return false
}

// failedKey returns the key a transition.failed fact names, checking that
// its cause is that key's failure record. A model.call_failed that opens
// a failure record (the model turn's failed calls come before its
// transition.failed) names the key of its cause.
func failedKey(f facts.Fact) (string, bool) {
	if f.Kind == facts.KindModelCallFailed {
		key, _, ok := strings.Cut(f.Cause, "/failed/")
		return key, ok
	}
	if f.Kind != facts.KindTransitionFailed {
		return "", false
	}
	tf, err := facts.Decode[facts.TransitionFailed](f)
	if err != nil || !strings.HasPrefix(f.Cause, tf.Key+"/failed/") {
		return "", false
	}
	return tf.Key, true
}

// consistent checks an action record against itself and its start.
func (v *verifier) consistent(f facts.Fact) string {
	if held := v.held; held != "" {
		// A write that changed nothing is none only with its check passed
		// (action.StateChecked), recorded with it.
		v.held = ""
		c, err := facts.Decode[facts.CheckRecorded](f)
		if f.Kind != facts.KindCheckRecorded || err != nil || c.ActionID != held || c.Verdict != facts.VerdictPass {
			return fmt.Sprintf("action %s's effect state is none though its write changed nothing, but no passing check was recorded with it", held)
		}
	}
	switch f.Kind {
	case facts.KindActionCompleted:
		c, err := facts.Decode[facts.ActionCompleted](f)
		if err != nil {
			return err.Error()
		}
		// The action's request and start as the thread's view has them
		// (one reading: the scheduler's), before this completion.
		a, err := v.action(c.ActionID)
		if err != nil {
			return "the fold could not read its action: " + err.Error()
		}
		o := c.Observation
		if s := a.Started; s != nil && o.Available && s.ObservedBefore != "" && o.Before != s.ObservedBefore {
			return fmt.Sprintf("the observation before (%s) is not the one action.started recorded (%s)", short(o.Before), short(s.ObservedBefore))
		}
		switch want := action.State(action.Capability(a.Requested.Capability), c.Report, o); {
		case c.EffectState == want:
		case want == facts.EffectUnknown && c.EffectState == facts.EffectNone && a.Requested.Check != nil:
			// What the write was to make already held, if its check,
			// which must come next, passed.
			v.held = c.ActionID
		case want == facts.EffectReported && c.EffectState == facts.EffectNone && a.Started == nil && !o.Available && c.Report.Status == facts.StatusFailed:
			// Refused before anyone was asked, never started: no effect
			// (logs before this was recorded say reported, as want).
		default:
			return fmt.Sprintf("effect state %s, but the report and the observation give %s", c.EffectState, want)
		}
		if o.Available && o.Before == o.After && len(o.Changed) > 0 {
			return "changed paths listed for an unchanged observation"
		}
		if o.Available && o.Before != o.After && len(o.Changed) == 0 {
			return "a changed observation with no changed path"
		}
	}
	return ""
}

// action is the action id as the thread's view reads it where the
// verifier stands: of its latest turn, where an action's records come,
// or else of the whole thread. An action it does not know is the zero
// Action (nothing requested, nothing started).
func (v *verifier) action(id string) (scheduler.Action, error) {
	view, err := harness.Folded{ID: v.id, Fold: v.fold}.View()
	if err != nil {
		return scheduler.Action{}, err
	}
	if a, ok := view.Turn.Action(id); ok {
		return a, nil
	}
	r, err := harness.Folded{ID: v.id, Fold: v.fold}.Reading()
	if err != nil {
		return scheduler.Action{}, err
	}
	a, _ := r.Action(id)
	return a, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// Audit is a thread's record told in order: what was asked, what the model
// decided, who confirmed or denied what, and for every action its report,
// observation, effect state and check side by side. A front end renders
// each entry's fact (package present says it in one line for a person).
type Audit struct {
	Thread  string
	Entries []AuditEntry
	// Facts is how many facts the log holds: len(Entries), or, for an
	// audit told as it went (ReplayEach), how many were told.
	Facts int
	// Status is how the thread stands now.
	Status harness.Status
	Waits  []fold.Wait
	Reason string
	// View is the thread's view at its last fact.
	View harness.View
}

// AuditEntry is one fact of the audit.
type AuditEntry struct {
	Fact facts.Fact
	// Action is set on the action.completed entry of each action.
	Action *ActionAudit
}

// ActionAudit puts an action's report, observation, effect state and check
// side by side. As JSON (harness replay -o json, GET
// /api/threads/{id}/replay) its fields are snake_case.
type ActionAudit struct {
	ActionID    string               `json:"action_id"`
	Tool        string               `json:"tool,omitempty"`
	Report      facts.Report         `json:"report"`
	Observation facts.Observation    `json:"observation"`
	EffectState facts.EffectState    `json:"effect_state"`
	Check       *facts.CheckRecorded `json:"check,omitempty"`
	// Flag says what a reader should not miss: a success reported with
	// nothing changed, a failed check, an effect nobody observed.
	Flag string `json:"flag,omitempty"`
}

// Replay folds a thread's log through the actor's components and tells it
// as an Audit: each fact in order, each action's completion with what the
// view says of the action. In a tree of threads actor is the root's: a
// child is folded by the actor its parent's delegation composes
// (ReplayTree tells a thread and its children).
func Replay(ctx context.Context, store thread.Store, actor harness.Actor, id string) (Audit, error) {
	a := Audit{Thread: id}
	// A child is folded by the actor its parent's delegation composes.
	th, err := (&harness.Runtime{Store: store}).Open(ctx, actor, id)
	if err != nil {
		return a, err
	}
	fd := fold.New(th.Actor().New()...)
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return a, err
		}
		if err := fd.Step(f); err != nil {
			return a, err
		}
		a.Entries = append(a.Entries, AuditEntry{Fact: f})
	}
	a.Facts = len(a.Entries)
	if len(a.Entries) == 0 {
		return a, fmt.Errorf("replay %s: %w", id, harness.ErrUnknownThread)
	}
	v, err := harness.Folded{ID: id, Fold: fd}.View()
	if err != nil {
		return a, err
	}
	a.View, a.Status, a.Reason = v, v.Status, v.Reason
	if v.Status == harness.StatusParked {
		a.Waits = v.Waits
	}
	whole, err := harness.Folded{ID: id, Fold: fd}.Reading()
	if err != nil {
		return a, err
	}
	for _, act := range whole.Actions() {
		c := act.Completed
		if c == nil || act.CompletedSeq == 0 || act.CompletedSeq > uint64(len(a.Entries)) {
			continue
		}
		a.Entries[act.CompletedSeq-1].Action = actionAudit(act)
	}
	return a, nil
}

func flag(a *ActionAudit) string {
	switch {
	case a.EffectState == facts.EffectUnknown && a.Report.InDoubt:
		return "in doubt: whether it happened is unknown"
	case a.EffectState == facts.EffectUnknown:
		return "success reported, nothing changed"
	case a.Check != nil && a.Check.Verdict == facts.VerdictFail:
		return "check failed: " + a.Check.Reason
	case a.EffectState == facts.EffectReported && a.Report.Status == facts.StatusSucceeded:
		return "nobody observed: the report is all there is"
	case a.Report.Status == facts.StatusFailed && a.EffectState == facts.EffectObserved:
		return "failed after changing something: a partial write"
	}
	return ""
}
