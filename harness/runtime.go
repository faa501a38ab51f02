package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// Actor is a composition of components over the Services. Its
// components are stateful folds, so an Actor holds a constructor and every
// Resume folds a fresh set.
type Actor struct {
	// Name identifies the actor in traces.
	Name string
	// New returns fresh components, in projection order.
	New func() []fold.Component[Services]
	// spec is what Compose made the actor of (nil for an actor built by
	// hand): what a delegation checks a child's actor against.
	spec *actorSpec
}

// Status is how a Resume ended.
type Status string

// The statuses of an Outcome.
const (
	// StatusDone: nothing is enabled and nothing is awaited.
	StatusDone Status = "done"
	// StatusParked: nothing is enabled; the thread waits for a person.
	StatusParked Status = "parked"
	// StatusFailed: a transition failed for good, or died.
	StatusFailed Status = "failed"
	// StatusStopped: a limit, such as a budget, ended the thread.
	StatusStopped Status = "stopped"
	// StatusStepLimit: the Resume ran Config.MaxSteps transitions; resume
	// again to go on.
	StatusStepLimit Status = "step_limit"
	// StatusResumable: transitions are enabled (a Resume was interrupted,
	// or has not run yet); resume to go on. Replay reports it.
	StatusResumable Status = "resumable"
)

// Outcome is how a Resume left a thread.
type Outcome struct {
	Thread string
	Status Status
	// Waits are the requests awaited when the thread is parked.
	Waits []fold.Wait
	// Reason says why the thread failed or stopped.
	Reason string
	// Steps is the number of transitions this call ran (in the thread,
	// and in the children it drove).
	Steps int
	// Seq is the thread's head after the call.
	Seq uint64
}

// Runtime runs actors' threads on a store, with the Services.
type Runtime struct {
	Store    thread.Store
	Services Services
	Config   Config
	// Tracer, when set, records a span per Resume; otherwise the
	// services' tracer does (Services.TracerProvider). Transitions are
	// traced through the services.
	Tracer trace.TracerProvider
	// Sealer, when set, seals the head of a thread a Resume leaves
	// parked, done, failed or stopped (not one stopped at the step
	// limit), while the thread is still held: every front end's drive
	// passes through Resume. A seal that cannot be made is not an error
	// of the Resume (its facts are appended): the Sealer reports it.
	Sealer Sealer
	// NoAsk, when set, says why nobody can answer a question an action's
	// server puts (an MCP elicitation) in this runtime — a run that takes
	// no input, on a store no other process shares — and such a question
	// is refused at once with it (ErrNotAsked), not waited on: nothing
	// could ever answer it.
	NoAsk string
}

// Sealer signs a thread's head and keeps the seal where the store's
// writer cannot rewrite it (package seal).
type Sealer interface {
	SealHead(ctx context.Context, store thread.Store, head thread.Head) error
}

// HeadChecker is a Sealer that can also check a thread's log against the
// seals it made before: a Resume is refused, nothing run, when the log
// ends before a seal of it or holds another fact where one was sealed
// (the store lost facts: a damaged write-ahead log, a backup restored),
// since driving the thread from there would do again what the lost
// facts record.
type HeadChecker interface {
	CheckHead(ctx context.Context, store thread.Store, head thread.Head) error
}

// NewRuntime returns a runtime; config must be valid (its zero fields
// are the defaults, and Runtime.Config holds them as they apply).
func NewRuntime(store thread.Store, services Services, config Config) (*Runtime, error) {
	if store == nil {
		return nil, errors.New("harness: nil store")
	}
	if err := config.Validate(); err != nil {
		return nil, err
	}
	return &Runtime{Store: store, Services: services, Config: config.resolved()}, nil
}

// state is a Thread's fold of its log, and what its snapshots need.
type state struct {
	id   string
	fold *fold.Fold[Services]
	// kept is the seq of the snapshot of this fold known to be in the
	// store (restored from, or kept); 0 for none.
	kept uint64
	// ctx is the context of the call using the state now: a restored
	// fold reads the facts before its snapshot, when it needs them, with
	// it. broken is the error of such a read: the fold is then dropped.
	ctx    context.Context
	broken error
	// linked, when not zero, is the hash of the fold's last fact, whose
	// link the next fact read must keep: a state restored from a snapshot
	// checks the chain of the facts after it as it first folds them.
	linked facts.Hash
}

// Thread is one thread of a runtime, with its fold kept between calls:
// View, Post and Resume each bring the fold up to date from the last seq
// it read, rather than reading the whole log again, so a front end that
// drives a thread turn after turn (package drive) folds its log once. A
// Thread is used by one goroutine at a time; any number of Threads (in
// this process or others) may name the same thread: the log decides.
type Thread struct {
	rt    *Runtime
	actor Actor
	id    string
	st    *state // nil until the log is first read, and after a fold failed
	// kids are the children this thread drove (see tend), kept with
	// their folds; never iterated.
	kids map[string]*Thread
	// wt is the thread's own worktree when its spawn made one, or its
	// system.configured records one (own; see enter): its services are
	// rooted there. nil for a thread in the workspace.
	wt *facts.Worktree
	// own: wt is the thread's own, from its configuration (not a
	// child's spawn); entered: the configuration was read for it.
	own, entered bool
	// home is the runtime before enter rooted the thread in its own
	// worktree (see leave); nil otherwise.
	home *Runtime
}

// Thread returns the thread id of the runtime, folded by the actor's
// components. It reads nothing until it is used.
func (rt *Runtime) Thread(actor Actor, id string) *Thread {
	return &Thread{rt: rt, actor: actor, id: id}
}

// ID is the thread's id.
func (t *Thread) ID() string { return t.id }

// Runtime is the runtime the thread runs on; its Store and Services are
// read again at every call, so a caller may replace them between calls
// (a store closed and opened again).
func (t *Thread) Runtime() *Runtime { return t.rt }

// Actor is the actor whose components fold the thread.
func (t *Thread) Actor() Actor { return t.actor }

// Store is the runtime's store.
func (t *Thread) Store() thread.Store { return t.rt.Store }

// load brings the thread's fold up to date with its log. A fold that
// fails is dropped: the next call folds the log anew.
func (t *Thread) load(ctx context.Context) (*state, error) {
	if t.st != nil && t.st.broken != nil {
		t.st = nil // it could not read what it stands for: fold anew
	}
	if t.st == nil {
		st, err := t.restore(ctx)
		if err != nil {
			return nil, err
		}
		t.st = st
	}
	if t.st == nil {
		st := &state{id: t.id, fold: fold.New(t.actor.New()...)}
		// A long log's causes fill a map that would otherwise regrow a
		// dozen times on the way; its length is a good bound (a new
		// thread has none).
		if h, err := t.rt.Store.Head(ctx, t.id); err == nil {
			st.fold.Reserve(int(min(h.Seq, maxReserve)))
		}
		t.st = st
	}
	t.st.ctx = ctx
	if err := t.rt.catchUp(ctx, t.st); err != nil {
		t.st = nil
		return nil, err
	}
	return t.st, nil
}

// maxReserve caps the room a fold reserves up front for a log's causes
// (a log has fewer causes than facts; past the cap the map grows as it
// needs).
const maxReserve = 1 << 17

// catchUp folds the facts appended after the state's head.
func (rt *Runtime) catchUp(ctx context.Context, st *state) error {
	for f, err := range rt.Store.Read(ctx, st.id, st.fold.Seq()+1) {
		if err != nil {
			return fmt.Errorf("read %s: %w", st.id, err)
		}
		if !st.linked.IsZero() {
			if f.Prev != st.linked {
				return &thread.CorruptError{Thread: st.id, Seq: f.Seq, Err: fmt.Errorf("%w: its prev is not the hash of seq %d, after the snapshot at seq %d", ErrNotItsSnapshot, f.Seq-1, st.kept)}
			}
			st.linked = f.Hash()
		}
		if err := st.fold.Step(f); err != nil {
			return err
		}
	}
	st.linked = facts.Hash{}
	return nil
}

// Start begins the thread id with the user's message, appended as an
// ingress fact under StartKey, and resumes it. The thread must be new: if
// it already has facts — it was started before, or another process
// started it first — Start returns ErrThreadExists and appends nothing (a
// caller choosing ids, t1, t2, …, tries the next one; a start retried
// after a crash resumes the thread instead, and the message is not
// appended twice).
func (rt *Runtime) Start(ctx context.Context, actor Actor, id, message string) (Outcome, error) {
	return rt.Thread(actor, id).Start(ctx, message)
}

// Start is Runtime.Start of this thread; also are ingress facts appended
// with the message, in the same append, as Submit appends them (plan mode
// switched on, say, so that the first turn already plans).
func (t *Thread) Start(ctx context.Context, message string, also ...Ingress) (Outcome, error) {
	return t.StartMessage(ctx, facts.UserMessage{Text: message}, also...)
}

// StartMessage is Start with the whole user message: one made from an MCP
// server's prompt records which (facts.UserMessage.Prompt).
func (t *Thread) StartMessage(ctx context.Context, m facts.UserMessage, also ...Ingress) (Outcome, error) {
	d, err := facts.NewDraft(facts.KindUserMessage, "", m)
	if err != nil {
		return Outcome{}, err
	}
	if _, err := t.post(ctx, d, StartKey, postNew, also...); err != nil {
		return Outcome{}, err
	}
	return t.Resume(ctx)
}

// Submit is Start without the Resume: it begins the thread with the
// user's message, appended under StartKey, and runs nothing, leaving the
// thread for a worker (package worker) to run. A thread that already has
// facts is ErrThreadExists, and nothing is appended.
//
// also are ingress facts appended with the message, in the same atomic
// append, each under its own key: the policy the thread starts with, say,
// so that no worker ever reads the thread without it. Each is checked as
// Post checks it; a refused one appends nothing at all.
func (t *Thread) Submit(ctx context.Context, message string, also ...Ingress) (Posted, error) {
	d, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: message})
	if err != nil {
		return Posted{}, err
	}
	return t.post(ctx, d, StartKey, postNew, also...)
}

// Ingress is a fact to post, with its idempotency key (see Post).
type Ingress struct {
	Draft facts.Draft
	Key   string
}

// Posted says what a Post did.
type Posted struct {
	// Seq is the seq of the posted fact, or of the fact that an earlier
	// post with the same key appended.
	Seq uint64
	// Duplicate is true when the key was already posted: nothing was
	// appended.
	Duplicate bool
}

// Post appends d to an existing thread as an ingress fact under the
// idempotency key: its cause is "ingress/"+key. The same key twice appends
// once; the second Post reports Duplicate. The actor's components check the
// fact first (an answer must name an open request): a refused fact is an
// error wrapping fold.ErrRefused, and nothing is appended.
func (rt *Runtime) Post(ctx context.Context, actor Actor, id string, d facts.Draft, key string) (Posted, error) {
	return rt.Thread(actor, id).Post(ctx, d, key)
}

// Post is Runtime.Post to this thread. also are ingress facts appended
// with d in the same atomic append, each under its own key, so that a
// crash leaves all of them or none (acting on a plan switches plan mode
// off and tells the model to carry it out). Each is checked as d is; a
// refused one appends nothing at all. When d's key was posted already,
// Post reports Duplicate and appends nothing; when only a key of also
// was, it is an error wrapping ErrPartialPost.
func (t *Thread) Post(ctx context.Context, d facts.Draft, key string, also ...Ingress) (Posted, error) {
	return t.post(ctx, d, key, postExisting, also...)
}

// ingress checks that d is a kind Post accepts and gives it the cause of
// key.
func ingress(id string, d facts.Draft, key string) (facts.Draft, error) {
	if key == "" {
		return d, errors.New("post: an idempotency key is required")
	}
	if !slices.Contains(facts.IngressKinds, d.Kind) {
		return d, fmt.Errorf("post %s to %s: %w (post one of %v)", d.Kind, id, ErrNotIngress, facts.IngressKinds)
	}
	d.Cause = facts.IngressCause(key)
	if err := facts.ValidateCause(d.Cause); err != nil {
		return d, fmt.Errorf("post: key %q: %w", key, err)
	}
	return d, nil
}

// What a post may do about the thread: post to an existing one, or only
// create it (Start, Submit).
const (
	postExisting = iota
	postNew
)

func (t *Thread) post(ctx context.Context, d facts.Draft, key string, mode int, also ...Ingress) (Posted, error) {
	rt, id := t.rt, t.id
	d, err := ingress(id, d, key)
	if err != nil {
		return Posted{}, err
	}
	batch := []facts.Draft{d}
	for _, in := range also {
		x, err := ingress(id, in.Draft, in.Key)
		if err != nil {
			return Posted{}, err
		}
		if slices.ContainsFunc(batch, func(b facts.Draft) bool { return b.Cause == x.Cause }) {
			return Posted{}, fmt.Errorf("post to %s: key %q given twice", id, in.Key)
		}
		batch = append(batch, x)
	}
	st, err := t.load(ctx)
	if err != nil {
		return Posted{}, err
	}
	switch {
	case st.fold.Seq() == 0 && mode == postExisting:
		return Posted{}, fmt.Errorf("post %s to %s: %w", d.Kind, id, ErrUnknownThread)
	case st.fold.Seq() != 0 && mode == postNew:
		return Posted{}, fmt.Errorf("start %s: %w", id, ErrThreadExists)
	}
	for {
		if seq, ok, err := st.fold.Cause(d.Cause); err != nil {
			t.st = nil
			return Posted{}, fmt.Errorf("post to %s: %w", id, err)
		} else if ok {
			return Posted{Seq: seq, Duplicate: true}, nil
		}
		for _, b := range batch[1:] {
			// The store refuses the whole batch for any cause it has: were
			// one of also's keys posted without d's, retrying would never
			// end.
			if seq, ok, err := st.fold.Cause(b.Cause); err != nil {
				t.st = nil
				return Posted{}, fmt.Errorf("post to %s: %w", id, err)
			} else if ok {
				return Posted{}, fmt.Errorf("post to %s: %w: %s is at seq %d without %s", id, ErrPartialPost, b.Cause, seq, d.Cause)
			}
		}
		for _, b := range batch {
			if err := st.fold.Accept(b); err != nil {
				return Posted{}, fmt.Errorf("post to %s: %w", id, err)
			}
		}
		head, err := rt.Store.Append(ctx, id, st.fold.Seq(), batch...)
		switch {
		case err == nil:
			return Posted{Seq: head.Seq - uint64(len(batch)-1)}, nil
		case mode == postNew && (errors.Is(err, thread.ErrConflict) || errors.Is(err, thread.ErrDuplicateCause)):
			return Posted{}, fmt.Errorf("start %s: another process started it first: %w", id, ErrThreadExists)
		case errors.Is(err, thread.ErrConflict), errors.Is(err, thread.ErrDuplicateCause):
			// Another writer went first: fold what it wrote and decide again.
			if st, err = t.load(ctx); err != nil {
				return Posted{}, err
			}
		default:
			return Posted{}, fmt.Errorf("post to %s: %w", id, err)
		}
	}
}

// Resume runs the thread's enabled transitions until it is done, parked,
// failed or stopped, or Config.MaxSteps transitions have run. A cancelled
// context interrupts the transition running, appends nothing for it, and
// returns the context's error (errors.Is(err, context.Canceled)); the
// thread stays resumable.
//
// One fact is appended after the cancellation: when the transition
// running had started an action (action.started is in the log) and its
// adapter was stopped by the cancellation — a command gets SIGTERM, then
// SIGKILL 500 ms later — the runtime observes the workspace and appends
// action.interrupted with what it saw, under a context of its own bounded
// by a few seconds. The act was claimed, so something must say how it
// ended; a failed report would blame the action for the caller's cancel,
// and no record at all would leave it in doubt as after a crash. The next
// Resume tells the model the call was interrupted and what was observed;
// where the effect is not known (something changed, or nobody could
// look) the thread parks on reconcile, as after a crash.
func (rt *Runtime) Resume(ctx context.Context, actor Actor, id string) (out Outcome, err error) {
	return rt.Thread(actor, id).Resume(ctx)
}

// CheckSealed checks the thread's log as its store has it against the
// runtime's Sealer's seals of it, when the Sealer can (HeadChecker): an
// error when the log is behind one, or holds another fact where one was
// sealed. Resume checks it before it runs anything; a front end calls it
// first, before it answers or posts anything to the thread (drive.Drive).
func (t *Thread) CheckSealed(ctx context.Context) error {
	hc, ok := t.rt.Sealer.(HeadChecker)
	if !ok {
		return nil
	}
	head, err := t.rt.Store.Head(ctx, t.id)
	if errors.Is(err, thread.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check %s against its seals: %w", t.id, err)
	}
	if err := hc.CheckHead(ctx, t.rt.Store, head); err != nil {
		return fmt.Errorf("%s: %w", t.id, err)
	}
	return nil
}

// Resume is Runtime.Resume of this thread.
func (t *Thread) Resume(ctx context.Context) (out Outcome, err error) {
	rt, actor, id := t.rt, t.actor, t.id
	defer func() {
		if err != nil {
			t.st = nil // fold the log anew next time: a failure may have cut a fold short
		}
	}()
	tp := rt.Tracer
	if tp == nil {
		tp = rt.Services.TracerProvider()
	}
	ctx, span := tp.Tracer(instrumentation).Start(ctx, "resume",
		trace.WithAttributes(attribute.String("harness.thread", id), attribute.String("harness.actor", actor.Name)))
	defer func() {
		span.SetAttributes(attribute.String("harness.outcome", string(out.Status)), attribute.Int("harness.steps", out.Steps))
		if err != nil {
			span.RecordError(err)
		}
		span.End()
	}()
	held, release, err := Hold(ctx, rt.Store, id)
	if err != nil {
		return Outcome{Thread: id}, fmt.Errorf("resume %s: %w", id, err)
	}
	defer release()
	defer func() {
		// Where the Resume left the thread, its views are kept, while it
		// is still held: the next reader folds only what comes after.
		if err == nil && t.st != nil {
			if kerr := t.keep(held, t.st); kerr != nil {
				span.AddEvent("snapshot not kept", trace.WithAttributes(attribute.String("harness.error", kerr.Error())))
			}
			if serr := t.seal(held, out); serr != nil {
				span.AddEvent("head not sealed", trace.WithAttributes(attribute.String("harness.error", serr.Error())))
			}
		}
	}()
	outer := ctx
	defer func() {
		// A lost lease cancelled held: say so, not just "canceled".
		if cause := context.Cause(held); err != nil && outer.Err() == nil && errors.Is(cause, thread.ErrLeaseLost) && !errors.Is(err, thread.ErrLeaseLost) {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
	}()
	ctx = held
	st, err := t.load(ctx)
	if err != nil {
		return Outcome{Thread: id}, err
	}
	if st.fold.Seq() == 0 {
		return Outcome{Thread: id}, fmt.Errorf("resume %s: %w", id, ErrUnknownThread)
	}
	if hc, ok := rt.Sealer.(HeadChecker); ok {
		last := st.fold.Last()
		if err := hc.CheckHead(ctx, rt.Store, thread.Head{Thread: id, Seq: last.Seq, Hash: last.Hash(), Kind: last.Kind, At: last.At}); err != nil {
			return Outcome{Thread: id}, fmt.Errorf("resume %s: %w", id, err)
		}
	}
	if err := checkableOutput(id, st.fold); err != nil {
		return Outcome{Thread: id}, err
	}
	out = Outcome{Thread: id}
	retried := false
	failedHere := map[string]bool{} // keys that failed in this call; membership only
	for {
		// A thread that works in a worktree of its own runs there from
		// the moment its configuration records it.
		if err := t.enter(ctx, st); err != nil {
			return out, err
		}
		rt = t.rt
		out.Seq = st.fold.Seq()
		p, err := st.fold.Project()
		if err != nil {
			return out, fmt.Errorf("resume %s at seq %d: %w", id, out.Seq, err)
		}
		retry := p.Stop != nil && p.Retry != nil && out.Steps == 0 && !retried
		switch {
		case retry:
			// A transition failed for a reason that can go away, and a
			// person resumed: run it once more, first of all.
			retried = true
			p.Enabled = []fold.Enabled[Services]{*p.Retry}
		case p.Stop != nil || len(p.Enabled) == 0:
			// A stop asked for while the thread ran is recorded by its
			// holder, now that nothing runs (see Thread.Stop).
			if moved, err := t.carryOutStop(ctx, st); err != nil || moved {
				if err != nil {
					return out, err
				}
				continue
			}
			// A thread that waits on its children drives them first
			// (see tend); their reports move it on.
			if moved, err := t.tend(ctx, st, p, &out); err != nil || moved {
				if err != nil {
					return out, err
				}
				continue
			}
			if out.Status != "" {
				return out, nil // a child stopped the tree (see tend)
			}
			out.Status = statusOf(p)
			// A thread in a worktree of its own that ends leaves its
			// work on its branch (see finishOwn).
			if offered, err := t.finishOwn(ctx, st, out.Status); err != nil {
				return out, err
			} else if offered {
				// Its end offers the merge of its branch: that call is
				// requested and put to a person (see scheduler's offer.go).
				out.Status = ""
				continue
			}
			out.Seq = st.fold.Seq()
			switch {
			case p.Stop != nil:
				out.Reason = p.Stop.Reason
			case out.Status == StatusParked:
				out.Waits = append(answerable(p.Waits, out.Waits), out.Waits...)
			}
			return out, nil
		case rt.Config.stepLimit(out.Steps):
			out.Status = StatusStepLimit
			return out, nil
		}
		t := p.Enabled[0]
		if failedHere[t.Key] {
			// It failed in this call and a component enables it again:
			// running it again at once would fail again, and again. A
			// new Resume — a person's word — may try it once more.
			_, last := st.fold.Failures(t.Key)
			out.Status, out.Reason = StatusFailed, fmt.Sprintf("%s failed and is still enabled: %s", t.Key, last)
			return out, nil
		}
		j := &journal{store: rt.Store, id: id, key: t.ClaimKey, seq: st.fold.Seq()}
		watched, unwatch := rt.watchStop(ctx, id, st.fold.Seq())
		drafts, died, err := rt.run(watched, st, t, j)
		if unwatch() && ctx.Err() == nil && !j.recorded {
			// A stop was asked for while it ran, and it had claimed no
			// act: nothing of it is recorded. Fold the stop and decide
			// again (the thread is stopped). An act it claimed is
			// recorded as it ended, interrupted or not, below.
			if err := rt.catchUp(ctx, st); err != nil {
				return out, err
			}
			continue
		}
		if errors.Is(err, fold.ErrClaimLost) {
			// Another writer moved the thread before this transition could
			// claim its act: fold what they wrote and decide again.
			if err := rt.catchUp(ctx, st); err != nil {
				return out, err
			}
			continue
		}
		if err != nil {
			return out, err
		}
		appended, err := rt.append(ctx, st, j, drafts)
		if err != nil {
			return out, err
		}
		if appended {
			out.Steps++
			if len(drafts) == 1 && drafts[0].Kind == facts.KindTransitionFailed {
				failedHere[t.Key] = true
			}
			if slices.ContainsFunc(drafts, func(d facts.Draft) bool { return d.Kind == facts.KindContextCompacted }) {
				// A compaction changes what a model turn is sent: a
				// turn refused as too long may run again (the compactor
				// compacts for a refusal once).
				clear(failedHere)
			}
		}
		if died != nil && appended {
			out.Seq = st.fold.Seq()
			out.Status, out.Reason = StatusFailed, died.Error()
			return out, fmt.Errorf("resume %s: %s: %w: %w", id, t.Key, ErrDefect, died)
		}
		if cerr := ctx.Err(); cerr != nil {
			// Cancelled while the transition ran, which still ended (an
			// action interrupted, a turn that answered): its facts are
			// in, and nothing more runs.
			out.Seq = st.fold.Seq()
			return out, fmt.Errorf("resume %s: after %s: %w", id, t.Key, cerr)
		}
	}
}

// run runs one transition and returns the drafts to append: its own facts,
// or the record of its failure. died is set when it died.
func (rt *Runtime) run(ctx context.Context, st *state, t fold.Enabled[Services], j *journal) (drafts []facts.Draft, died error, err error) {
	e := t.Effect
	if t.Staged != nil {
		e = t.Staged(j)
	}
	e = effect.WithSpan(e, "transition "+t.Key,
		attribute.String("harness.thread", st.id), attribute.String("harness.transition", t.Key))
	svc := rt.Services
	svc.thread = st.id
	svc.sampling = rt.sampling(st, t.Key)
	// An action's live output says whose it is (a child's, in a tree).
	ex := effect.Run(action.WithElicit(action.WithThread(ctx, st.id), rt.asker(st.id, t.Key)), e, svc)
	tf := facts.TransitionFailed{Key: t.Key, Attempt: effect.Attempts(ex.Err())}
	var attempts []facts.ModelAttempt // a model turn's failed calls
	switch ex.Kind() {
	case effect.ExitSuccess:
		drafts, _ = ex.Value()
		if len(drafts) > 0 {
			for i := range drafts {
				drafts[i].Cause = t.Key
			}
			return drafts, nil, nil
		}
		died = fmt.Errorf("transition %s (%s) returned no facts: it would be enabled forever", t.Key, t.Component)
	case effect.ExitInterrupt:
		return nil, nil, fmt.Errorf("resume %s: %s: %w", st.id, t.Key, ex.Err())
	case effect.ExitFail:
		if errors.Is(ex.Err(), fold.ErrClaimLost) || errors.Is(ex.Err(), action.ErrStillRunning) {
			// Not the transition's failure: nothing is recorded, and a
			// later resume tries it again (once the action's process is
			// gone, it records the action as interrupted).
			return nil, nil, ex.Err()
		}
		tf.Class, tf.Message = classOf(ex.Err()), ex.Err().Error()
		var ma interface{ ModelAttempts() []facts.ModelAttempt }
		if errors.As(ex.Err(), &ma) {
			attempts = ma.ModelAttempts()
		}
	case effect.ExitDie:
		died = ex.Err()
	}
	if died != nil {
		tf.Defect, tf.Message = true, died.Error()
	}
	failures, _ := st.fold.Failures(t.Key)
	cause := fmt.Sprintf("%s/failed/%d", t.Key, failures+1)
	// A model turn's failed calls are facts of their own, in order,
	// before the failure they ended in.
	for _, a := range attempts {
		d, err := facts.NewDraft(facts.KindModelCallFailed, cause, a)
		if err != nil {
			return nil, nil, err
		}
		drafts = append(drafts, d)
	}
	d, err := facts.NewDraft(facts.KindTransitionFailed, cause, tf)
	if err != nil {
		return nil, nil, err
	}
	return append(drafts, d), died, nil
}

// classOf is the class recorded for an expected failure.
func classOf(err error) facts.ErrorClass {
	if c, ok := model.Classify(err); ok {
		return c
	}
	switch {
	case errors.Is(err, effect.ErrTimeout):
		return facts.ClassTimeout
	case errors.Is(err, context.Canceled):
		return facts.ClassCancelled
	}
	// Nothing says otherwise: the other side said no. Escalate.
	return facts.ClassBusiness
}

// append appends a transition's drafts after the head it ran at (the
// folded head, or the journal's when the transition recorded a claim) and
// folds them.
//
// When another writer appended first: a transition that claimed an act has
// acted, so its record must land — it folds the other facts and appends
// again at the new head; any other transition is dropped (reported as not
// appended), the other facts are folded, and the caller projects again, so
// a key that became a cause meanwhile never runs. A cancelled context does
// not stop the record of an act that was claimed.
//
// Except when the thread's lease was lost (thread.ErrLeaseLost): another
// process may hold the thread now and may already have found the act in
// doubt. The record is then appended only where nothing was appended since
// the act began; otherwise it is dropped, with an error, and the act is
// the new holder's to reconcile.
//
// The record of a claimed act is appended under a context that the
// caller's cancel does not end; when ctx is already done, it is bounded
// by recordAfterCancel, so that a cancelled Resume returns soon even when
// the store does not answer. A record that is not appended leaves the act
// in doubt: the next Resume observes it and parks on reconcile.
func (rt *Runtime) append(ctx context.Context, st *state, j *journal, drafts []facts.Draft) (bool, error) {
	after := st.fold.Seq()
	held := ctx
	if j.recorded {
		ctx, after = context.WithoutCancel(ctx), j.seq
		if held.Err() != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, recordAfterCancel)
			defer cancel()
		}
	}
	for {
		_, err := rt.Store.Append(ctx, st.id, after, drafts...)
		switch {
		case err == nil:
			return true, rt.catchUp(ctx, st)
		case errors.Is(err, thread.ErrDuplicateCause):
			return false, rt.catchUp(ctx, st)
		case !errors.Is(err, thread.ErrConflict):
			return false, fmt.Errorf("append to %s after seq %d: %w", st.id, after, err)
		}
		if err := rt.catchUp(ctx, st); err != nil {
			return false, err
		}
		if !j.recorded {
			return false, nil
		}
		if cause := context.Cause(held); errors.Is(cause, thread.ErrLeaseLost) {
			return false, fmt.Errorf("append to %s: the record of %s was not appended: another process appended since it began, and this one no longer holds the thread: %w", st.id, j.key, cause)
		}
		after = st.fold.Seq()
	}
}

// recordAfterCancel bounds the append of a claimed act's record once the
// Resume was cancelled (see append).
const recordAfterCancel = 5 * time.Second

// journal is the fold.Journal of one transition's run: it appends claims at
// the head the transition was projected at.
type journal struct {
	store    thread.Store
	id       string
	key      string
	seq      uint64
	recorded bool
}

// Record appends drafts under the claim key at the journal's head.
func (j *journal) Record(ctx context.Context, drafts ...facts.Draft) error {
	key := j.key
	switch {
	case len(drafts) == 0:
		return nil
	case j.recorded:
		return effect.Defect(fmt.Errorf("record %s in %s: a transition records its claim once", key, j.id))
	}
	for i := range drafts {
		drafts[i].Cause = key
	}
	head, err := j.store.Append(ctx, j.id, j.seq, drafts...)
	switch {
	case errors.Is(err, thread.ErrConflict), errors.Is(err, thread.ErrDuplicateCause):
		return fmt.Errorf("record %s in %s: %w: %w", key, j.id, fold.ErrClaimLost, err)
	case err != nil:
		return fmt.Errorf("record %s in %s: %w", key, j.id, err)
	}
	j.seq, j.recorded = head.Seq, true
	return nil
}

const instrumentation = "github.com/seed-7cc7a084/harness/harness"
