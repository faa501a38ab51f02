package stock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/thread"
)

// Driver takes a session's threads on for a front end that drives them
// here (the command line; harness as an MCP server): it builds the
// runtime on the session's store once — again on the same runtime when
// the store is reopened, so that a drive in progress goes on with it —
// loads the model only when a turn is due, and gives the drive.Options
// that the front end adds its asking and telling to.
type Driver struct {
	s *Session
	o DriverOptions
	// Runtime is the runtime on the session's store. Reacquire keeps the
	// pointer and gives it the reopened store.
	Runtime *harness.Runtime
	// Approval decides the confirmations it can; its Resolve is the
	// workspace's (tools' symlink resolution) unless one was given.
	Approval drive.Approval
	// tail reports the facts of the threads driven to Show (nil: no Show).
	tail *thread.Tail
}

// TailPoll is how often a Driver's Tail looks for facts other processes
// appended to the threads it drives, while it waits.
const TailPoll = 300 * time.Millisecond

// DriverOptions are how a Driver loads the model and tells what happens.
type DriverOptions struct {
	// Model is the model loaded already (a flag's, checked before
	// anything ran), nil to load one when a turn is due: Spec, else the
	// one the thread recorded, else the settings'.
	Model model.Model
	Spec  string
	// Show is given each fact of the threads driven as the store has
	// it: the facts the driver appends, and those other processes append
	// to the same threads meanwhile (see thread.Tail, and Driver.Tail),
	// each once, in order; or the error of a read. nil shows nothing.
	Show func(facts.Fact, error)
	// ModelWait is told that a model turn waits before it is tried again.
	ModelWait func(attempt int, wait time.Duration, err error)
	// OwnFiles are the front end's own output files, which the workspace
	// observer leaves out should they be redirected into the workspace.
	OwnFiles []*os.File
	// Progress is where the thread's progress goes (drive.Progress), also
	// to the other processes that share the session's store.
	Progress drive.Progress
}

// NewDriver builds the runtime of the session's open store to drive its
// threads with approval (see Driver).
func (s *Session) NewDriver(approval drive.Approval, o DriverOptions) (*Driver, error) {
	if approval.Resolve == nil {
		// Path rules match where a path leads, through the workspace's
		// symlinks, as the tools would write it.
		approval.Resolve = s.Stock.Tools.Resolve
	}
	o.Progress = s.ShareProgress(o.Progress)
	d := &Driver{s: s, o: o, Approval: approval}
	if o.Show != nil {
		d.tail = thread.NewTail(o.Show)
	}
	if err := d.build(); err != nil {
		return nil, err
	}
	return d, nil
}

// Follow has Show given the facts of thread id after seq after, the
// thread's head when the front end came to it: those appended from now
// on, by this driver or elsewhere. A thread the driver appends to is
// followed from its first append without it.
func (d *Driver) Follow(id string, after uint64) {
	if d.tail != nil {
		d.tail.Follow(id, after)
	}
}

// Tail has Show given, every TailPoll until stop is called, what other
// processes appended meanwhile to the threads followed (a message, a
// raised budget, a stop from another terminal), while the driver waits
// on a command or a model turn. stop gives Show what is left, and then
// returns: call it before telling how the thread ends.
func (d *Driver) Tail(ctx context.Context) (stop func()) {
	if d.tail == nil {
		return func() {}
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(TailPoll)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				d.tail.Poll(pctx) // an error is told by the last poll, in stop
			}
		}
	}()
	return func() {
		cancel()
		<-done
		if err := d.tail.Poll(context.WithoutCancel(ctx)); err != nil {
			d.o.Show(facts.Fact{}, err)
		}
	}
}

// Progress is where the driven threads' progress goes (drive.Progress).
func (d *Driver) Progress() drive.Progress { return d.o.Progress }

// build makes the runtime on the session's open store; built again (the
// store was reopened), the runtime is the same one on the new store.
func (d *Driver) build() error {
	var m model.Model
	if d.Runtime != nil {
		m = d.Runtime.Services.Model // a drive in progress keeps its model
	} else {
		m = drive.Live(d.o.Model)
	}
	// The observer watches the workspace through a change feed where the
	// system has one.
	opts := []action.WorkspaceOption{action.WithChangeFeed(true)}
	for _, f := range d.o.OwnFiles {
		opts = append(opts, action.WithOwnFiles(f))
	}
	rt, _, err := d.s.Runtime(WithModel(m), WithObserver(opts...), Tailing(d.tail), WithModelWait(d.o.ModelWait))
	if err != nil {
		return err
	}
	// The observer's first reading of the tree (a stat of every entry)
	// is taken meanwhile: the first action then waits only for what
	// changed since. Releasing the session closes the observer, which
	// stops it.
	if ws, ok := rt.Services.Observer.(*action.Workspace); ok {
		ws.Warm()
	}
	if d.Runtime != nil {
		d.Runtime.Store, d.Runtime.Services = rt.Store, rt.Services
		return nil
	}
	d.Runtime = rt
	return nil
}

// Release closes the store while a person thinks at a prompt, so that
// other processes are not locked out meanwhile (Session.Release).
func (d *Driver) Release() error { return d.s.Release() }

// Reacquire opens the store again, waiting while another process has it
// (up to an hour), and gives the runtime the reopened store.
func (d *Driver) Reacquire(ctx context.Context) error {
	if err := d.s.Reopen(ctx, time.Hour); err != nil {
		return err
	}
	return d.build()
}

// LoadModel loads the model for a turn that is due: the one loaded
// already, else Spec, else the one the thread recorded, else the
// settings'. None of them is ErrNoModel.
func (d *Driver) LoadModel(recorded string) (model.Model, error) {
	if d.o.Model != nil {
		return d.o.Model, nil
	}
	spec := cmp.Or(d.o.Spec, recorded, d.s.Settings().Model)
	if spec == "" {
		return nil, ErrNoModel
	}
	return LoadModel(spec, d.s.ModelOptions()...)
}

// Options are the drive.Options of a thread driven here: the approval,
// the thread's own policy followed, the model loaded when a turn is due,
// and the progress told. A front end whose command is a person's word to
// go on sets Retry.
func (d *Driver) Options() drive.Options {
	return drive.Options{Approval: d.Approval, FollowPolicy: true, LoadModel: d.LoadModel, Progress: d.o.Progress}
}

// Thread is the thread id of the session's actor on the driver's runtime.
func (d *Driver) Thread(id string) *harness.Thread { return d.Runtime.Thread(d.s.Stock.Actor, id) }

// OpenTree is the thread id as its tree's actor folds it, its tree
// opened (harness.Runtime.Open): a child thread is folded by the actor
// its parent's delegation composes, which Thread's actor is not.
func (d *Driver) OpenTree(ctx context.Context, id string) (*harness.Thread, error) {
	return d.Runtime.Open(ctx, d.s.Stock.Actor, id)
}

// Start starts a thread with the message m, and the ingress also, under
// the progress ctx: thread id, or with id "" the next free one (picked
// is told it, and the one taken meanwhile by another process, if any).
// The policy the thread starts with is recorded in it as its own
// (RecordStartingPolicy) once it started, also when the start was
// interrupted. A thread id that exists is harness.ErrThreadExists.
func (d *Driver) Start(ctx context.Context, id string, m facts.UserMessage, by string, policyGiven bool, picked func(id, taken string), also ...harness.Ingress) (*harness.Thread, harness.Outcome, error) {
	var th *harness.Thread
	var out harness.Outcome
	var err error
	ctx = drive.WithProgress(ctx, d.o.Progress)
	if id != "" {
		if _, herr := d.s.Store.Head(ctx, id); herr == nil {
			return nil, out, fmt.Errorf("thread %s: %w", id, harness.ErrThreadExists)
		}
		if picked != nil {
			picked(id, "")
		}
		th = d.Thread(id)
		out, err = th.StartMessage(ctx, m, also...)
		if errors.Is(err, harness.ErrThreadExists) {
			return nil, out, err // another process (on a shared store) started it first
		}
	} else {
		th, out, err = drive.StartNextMessage(ctx, d.Runtime, d.s.Stock.Actor, m, picked, also...)
	}
	if th != nil && (err == nil || errors.Is(err, harness.ErrDefect) || ctx.Err() != nil) {
		// The policy the thread starts with is its own, recorded.
		if perr := d.s.RecordStartingPolicy(context.WithoutCancel(ctx), th, by, policyGiven); perr != nil {
			return th, out, perr
		}
	}
	return th, out, err
}

// Finish drives th with o (drive.Drive) until it is done or waits for a
// person, and indexes it for search: an index that cannot be brought up
// to date is given to warn, as a search brings it up to date. A thread
// that ran the runtime's most steps in one go says so in its Reason.
func (d *Driver) Finish(ctx context.Context, th *harness.Thread, o drive.Options, warn func(error)) (drive.State, error) {
	st, err := drive.Drive(ctx, th, o)
	if err != nil {
		return st, err
	}
	if ctx.Err() == nil {
		if err := d.s.IndexThread(ctx, th.ID()); err != nil && warn != nil {
			warn(err)
		}
	}
	return d.StepLimit(st), nil
}

// StepLimit says, of a thread whose Resume ran Config.MaxSteps
// transitions, how the driver stopped it: resumed, it goes on.
func (d *Driver) StepLimit(st drive.State) drive.State {
	if st.Status == harness.StatusStepLimit {
		st.Reason = fmt.Sprintf("ran %s in one go, the most a command runs (is something looping?); resume to go on", present.Plural(d.Runtime.Config.MaxSteps, "step", "steps"))
	}
	return st
}

// RecordContextBounds records on th, as by's word, the context bounds
// the driver's runtime is configured with (a flag given now), over those
// the thread recorded when it started.
func (d *Driver) RecordContextBounds(ctx context.Context, th *harness.Thread, by string) error {
	cfg := th.Runtime().Config
	b := facts.ContextBounds{Window: cfg.ContextWindow, Fraction: cfg.CompactFraction, CompactAt: cfg.CompactAt}
	_, err := drive.SetContextBounds(ctx, th, b, by)
	return err
}

// Said is what a person said to one request at a prompt: the reply (nil:
// skipped); Act, with a plan's reply: act on the plan shown, no other;
// Stop: nothing else is asked after it (a denial that stops the thread,
// a raise of the tree's budget, which answers every budget wait of it).
type Said struct {
	Reply *drive.Reply
	Act   bool
	Stop  bool
}

// Asked is what became of a request asked at a prompt (Driver.Ask).
type Asked struct {
	// Elsewhere: the log moved on while it was asked — answered on the
	// page, through the API, from another terminal, or the thread
	// stopped: the request is not asked any more, and nothing was posted.
	Elsewhere *drive.Elsewhere
	// Differs is an answer posted elsewhere in the moment between the
	// last look and this post: that answer stands, this one is not
	// recorded (it wraps drive.ErrAnswerDiffers).
	Differs error
	// Posted is the answer posted (Duplicate: it was posted already).
	Posted harness.Posted
}

// Ask asks a person the request w of th with ask, watching the log
// meanwhile (drive.WatchAnswer): a request answered elsewhere, or a
// thread stopped, ends the ask (ask's context is done). The store is
// released while the person thinks, and reacquired after. What the
// person said is posted as the answer (a child's request to the child;
// an always-rule as the thread's policy first, and kept for the project
// when Project says so): see Session.AnswerPending. An interrupt (ctx
// done) and ask's error are returned as they are, nothing posted.
func (d *Driver) Ask(ctx context.Context, th *harness.Thread, w drive.Pending, ask func(ctx context.Context) (Said, error)) (Asked, Said, error) {
	peek, unpeek := d.s.Peeker()
	asked, done, err := drive.WatchAnswer(ctx, th, w, peek)
	if err != nil {
		unpeek()
		return Asked{}, Said{}, err
	}
	if err := d.Release(); err != nil {
		done()
		unpeek()
		return Asked{}, Said{}, err
	}
	said, err := ask(asked)
	gone := done()
	unpeek()
	if ctx.Err() != nil {
		return Asked{}, said, ctx.Err()
	}
	if rerr := d.Reacquire(ctx); rerr != nil {
		return Asked{}, said, rerr
	}
	switch {
	case gone != nil:
		return Asked{Elsewhere: gone}, said, nil
	case err != nil:
		return Asked{}, said, err
	case said.Reply == nil:
		return Asked{}, said, nil
	case said.Act:
		p, err := drive.AnswerPending(ctx, th, w, *said.Reply)
		return Asked{Posted: p}, said, err
	}
	p, err := d.s.AnswerPending(ctx, th, w, *said.Reply)
	if errors.Is(err, drive.ErrAnswerDiffers) {
		return Asked{Differs: err}, said, nil
	}
	return Asked{Posted: p}, said, err
}
