package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// Defaults of the Options.
const (
	DefaultConcurrency = 8
	DefaultLeaseWait   = 250 * time.Millisecond
	DefaultRetry       = 5 * time.Second
	DefaultDrain       = 30 * time.Second
	DefaultPoll        = 2 * time.Second
)

// Options say what a Worker drives threads with.
type Options struct {
	// Store keeps the threads: a store the workers share (a thread.Leaser,
	// such as natsstore's), so that each thread is held by one of them.
	Store thread.Store
	// Queue is where the worker learns of threads to look at.
	Queue Queue
	// Actor folds and drives every thread.
	Actor harness.Actor
	// Runtime builds the runtime to drive the thread id with, on Store,
	// and the function that frees it (closes its observer), once per
	// drive: each drive has a runtime of its own. harness worker gives
	// stock.Session.Runtime, as every front end builds its runtimes. The
	// runtime's Model is replaced (see LoadModel).
	Runtime func(id string) (*harness.Runtime, func(), error)
	// LoadModel loads the model for a thread's turn, given the model the
	// thread recorded ("" before one was); it is called only when a turn
	// is due (see drive.Options.LoadModel).
	LoadModel func(recorded string) (model.Model, error)
	// Approval answers the confirmations it decides, on a thread that
	// records no policy of its own; every other request leaves the thread
	// parked until a person answers it. A thread that records one (its
	// latest policy.set: what it was started or submitted with, a
	// person's "always for this thread") is decided by that policy, read
	// at each look, as AmendPolicy changes it; Approval's Root and Resolve
	// are kept. So a worker decides as a resume with the same flags would.
	Approval drive.Approval
	// Policy, when set, decides instead of Approval on a thread that
	// records no policy of its own (see drive.Policy).
	Policy drive.Policy
	// AmendPolicy, when set, is what the worker's own flags add to a
	// thread's policy before it decides (see drive.Options.AmendPolicy),
	// without recording it: harness worker gives stock.Amend of its
	// --approve (which replaces the mode when given), --allow and --deny
	// (which add patterns), as harness resume records them.
	AmendPolicy func(facts.PolicySet) facts.PolicySet
	// Workspace, when set, is the only workspace whose threads the worker
	// drives: a thread that records another (the first system.configured
	// of its root, see harness.Own.Workspace) is put off, for a worker or
	// a command there, never driven here — its commands would act in this
	// directory, under this workspace's settings. A thread that records
	// none (submitted, never driven) is driven here. A store in a
	// directory can be shared by several workspaces (--store); harness
	// serve and harness worker on one give their own.
	Workspace string
	// Concurrency is how many threads the worker drives at once (default
	// DefaultConcurrency).
	Concurrency int
	// LeaseWait is how long the worker waits for the lease of a thread
	// another holds before it puts the job off (default DefaultLeaseWait).
	LeaseWait time.Duration
	// Retry is how long a job is put off when another holds its thread or
	// its drive failed (default DefaultRetry); a job put off again and
	// again waits longer each time, up to 16 times as long.
	Retry time.Duration
	// Drain is how long Run waits, once its context is done, for the
	// drives in progress to reach a point where they can stop (see Run)
	// before it interrupts them (default DefaultDrain).
	Drain time.Duration
	// Poll is the longest one request for jobs waits (default
	// DefaultPoll); Run notices that its context is done between two.
	Poll time.Duration
	// Progress, when set, gives where a drive's progress goes (see
	// drive.Options.Progress: a running command's output, the model's
	// text as it streams): it is called at each look at thread root, with
	// the context that holds root's lease, and may return nil. OnSession
	// gives stock.PublishProgress, so that a server following the
	// store shows what the worker's threads do. It must never wait.
	Progress func(held context.Context, root string) drive.Progress
	// Log, when set, is told what the worker does with each thread. It is
	// called from the worker's goroutines, one event at a time.
	Log func(Event)
}

// EventKind says what a worker did with a thread.
type EventKind string

// The kinds of Event.
const (
	// EventTook: the worker holds the thread and drives it.
	EventTook EventKind = "took"
	// EventInDoubt: the thread's actions in State.InDoubt started and
	// never ended (their holder died): they are recorded as interrupted,
	// never run again, and the thread parks on reconcile.
	EventInDoubt EventKind = "in_doubt"
	// EventStopped: a drive ended with the thread done, parked, failed or
	// stopped (State says which, and what it waits for); its jobs are
	// finished. A look again, while the worker still holds the thread,
	// that finds it as it was says nothing: one end, one event.
	EventStopped EventKind = "stopped"
	// EventPutOff: another holds the thread; the job is given back, to be
	// given out again after Later.
	EventPutOff EventKind = "put_off"
	// EventError: the drive failed (Err); the job is given back, to be
	// given out again after Later.
	EventError EventKind = "error"
	// EventElsewhere: the thread works in another workspace than the
	// worker's (Options.Workspace); the job is given back, to be given out
	// again after Later, to a worker there.
	EventElsewhere EventKind = "elsewhere"
	// EventHandedOver: the worker is draining and stopped the drive
	// before its next step; the job is given back at once, for another
	// worker.
	EventHandedOver EventKind = "handed_over"
)

// Event is what a worker did with a thread.
type Event struct {
	Kind   EventKind
	Thread string
	// State is how the thread stands, for EventInDoubt and EventStopped.
	State drive.State
	// Err is why the drive failed, for EventError.
	Err error
	// Later is when the job is given out again, for EventPutOff and
	// EventError.
	Later time.Duration
}

// EventRecord is an Event as one JSON object, for machines (harness
// worker -o json prints one a line).
type EventRecord struct {
	Time    time.Time      `json:"time"`
	Event   string         `json:"event"`
	Thread  string         `json:"thread,omitempty"`
	Status  harness.Status `json:"status,omitempty"`
	Seq     uint64         `json:"seq,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Waits   []string       `json:"waits,omitempty"`
	InDoubt []string       `json:"in_doubt,omitempty"`
	Error   string         `json:"error,omitempty"`
	AgainIn string         `json:"again_in,omitempty"`
}

// Record is the event as it happened at at: a stopped thread's status,
// seq, reason and waits (each "kind request_id"); the actions in doubt;
// the error; when the job is given out again.
func (e Event) Record(at time.Time) EventRecord {
	r := EventRecord{Time: at, Event: string(e.Kind), Thread: e.Thread, InDoubt: e.State.InDoubt}
	if e.Kind == EventStopped {
		r.Status, r.Seq, r.Reason = e.State.Status, e.State.Head.Seq, e.State.Reason
		for _, w := range e.State.Waits {
			r.Waits = append(r.Waits, string(w.Kind)+" "+w.RequestID)
		}
	}
	if e.Err != nil {
		r.Error = e.Err.Error()
	}
	if e.Later > 0 {
		r.AgainIn = e.Later.String()
	}
	return r
}

// Worker drives the runnable threads of a shared store, with others
// like it, in this process and in others (see the package comment).
type Worker struct {
	o Options

	mu     sync.Mutex       // guards active and the jobs of every slot in it
	active map[string]*slot // thread → its drive here
	freed  chan struct{}    // a slot freed (buffered, 1)
	logMu  sync.Mutex       // serializes the calls of Options.Log: one event at a time

	draining  atomic.Bool
	hard      context.Context // ended when the drain runs out: drives are interrupted
	stop      context.CancelFunc
	wg        sync.WaitGroup
	ran       atomic.Bool
	interrupt chan struct{} // closed by Interrupt
	once      sync.Once
}

// slot is a thread driven here, with the jobs the drive answers for.
type slot struct {
	jobs []Job // guarded by Worker.mu
}

// New returns a worker with the options o.
func New(o Options) (*Worker, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("worker: no store")
	case o.Queue == nil:
		return nil, errors.New("worker: no queue of work")
	case o.Actor.New == nil:
		return nil, errors.New("worker: no actor")
	case o.Runtime == nil:
		return nil, errors.New("worker: no way to build a runtime")
	case o.LoadModel == nil:
		return nil, errors.New("worker: no way to load a model")
	case o.Concurrency < 0:
		return nil, fmt.Errorf("worker: concurrency %d: want 1 or more", o.Concurrency)
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"lease wait", &o.LeaseWait, DefaultLeaseWait}, {"retry", &o.Retry, DefaultRetry}, {"drain", &o.Drain, DefaultDrain}, {"poll", &o.Poll, DefaultPoll}} {
		switch {
		case *d.v < 0:
			return nil, fmt.Errorf("worker: %s %v: want a duration ≥ 0", d.name, *d.v)
		case *d.v == 0:
			*d.v = d.def
		}
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	return &Worker{o: o, active: map[string]*slot{}, freed: make(chan struct{}, 1), interrupt: make(chan struct{})}, nil
}

// Interrupt stops Run at once, draining or not: it takes no more jobs and
// interrupts the drives in progress as if Options.Drain had run out (a
// tool then running is stopped and its action recorded as interrupted,
// or, if even that record cannot be appended, left in doubt for the next
// holder). It may be called from any goroutine, any number of times.
func (w *Worker) Interrupt() {
	w.once.Do(func() { close(w.interrupt) })
}

// ErrRunning: Run of a worker that has run already.
var ErrRunning = errors.New("worker: Run is called once")

// ErrNotShared: OnSession of a session whose store is not one the
// workers share.
var ErrNotShared = errors.New("not a store the workers share (a NATS store, or a directory a harness server holds)")

// Run takes jobs and drives their threads, up to Options.Concurrency at
// once, until ctx is done; then it drains and returns. Draining, the
// worker takes no more jobs (those on their way are given back at once),
// and each drive in progress stops before its next step — before its next
// Resume or model turn, never in the middle of a tool — and its thread is
// handed over: the lease is released and the job given back, for another
// worker to go on at once. A drive that has not stopped within
// Options.Drain is interrupted (its context is cancelled): a tool then
// running is stopped and its action recorded as interrupted with what the
// runtime observed (see harness.Runtime.Resume), or, if even that record
// cannot be appended, left in doubt for the next holder.
//
// Run returns nil after a drain, or the error that kept it from taking
// jobs at all.
func (w *Worker) Run(ctx context.Context) error {
	if !w.ran.CompareAndSwap(false, true) {
		return ErrRunning
	}
	w.hard, w.stop = context.WithCancel(context.WithoutCancel(ctx))
	defer w.stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopDrain := context.AfterFunc(ctx, func() { w.draining.Store(true) })
	defer stopDrain()
	go func() {
		select {
		case <-w.interrupt:
			cancel()
		case <-ctx.Done():
		}
	}()

	pause := time.Duration(0)
	for ctx.Err() == nil {
		n := w.o.Concurrency - w.running()
		if n <= 0 {
			select {
			case <-w.freed:
			case <-ctx.Done():
			}
			continue
		}
		err := w.o.Queue.Take(ctx, n, w.o.Poll, w.dispatch)
		switch {
		case err == nil:
			pause = 0
			continue
		case ctx.Err() != nil:
			continue
		}
		// The queue cannot be asked (a server gone, a leader being
		// elected): ask again after a pause that grows.
		pause = min(max(2*pause, 50*time.Millisecond), 2*time.Second)
		w.log(Event{Kind: EventError, Err: fmt.Errorf("take work: %w", err), Later: pause})
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
	w.draining.Store(true)
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	t := time.NewTimer(w.o.Drain)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		w.stop()
		<-done
	case <-w.interrupt:
		w.stop()
		<-done
	}
	return nil
}

// running is the number of threads driven here now.
func (w *Worker) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.active)
}

// dispatch deals with a job as it arrives: an append of a runtime that
// holds its thread is finished at once; one for a thread driven here
// already joins that drive, which looks once more before it finishes it;
// any other starts a drive.
func (w *Worker) dispatch(j Job) {
	if !j.Ingress() {
		_ = j.Done()
		return
	}
	if w.draining.Load() {
		_ = j.Later(0)
		return
	}
	id := j.Thread()
	w.mu.Lock()
	if s := w.active[id]; s != nil {
		s.jobs = append(s.jobs, j)
		w.mu.Unlock()
		return
	}
	s := &slot{jobs: []Job{j}}
	w.active[id] = s
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.work(id, s)
	}()
}

// log tells Options.Log, one event at a time.
func (w *Worker) log(e Event) {
	if w.o.Log == nil {
		return
	}
	w.logMu.Lock()
	defer w.logMu.Unlock()
	w.o.Log(e)
}

// giveBack removes the thread's slot and gives back its jobs, and those
// taken from it already, after delay.
func (w *Worker) giveBack(id string, s *slot, taken []Job, delay time.Duration) {
	w.mu.Lock()
	jobs := append(taken, s.jobs...)
	s.jobs = nil
	delete(w.active, id)
	select {
	case w.freed <- struct{}{}:
	default:
	}
	w.mu.Unlock()
	for _, j := range jobs {
		_ = j.Later(delay)
	}
}

// later is how long a job is put off: Options.Retry, doubled for each
// time it was given out before, up to 16 times.
func (w *Worker) later(jobs []Job) time.Duration {
	n := uint64(1)
	for _, j := range jobs {
		n = max(n, j.Delivered())
	}
	return w.o.Retry * time.Duration(1<<min(n-1, 4))
}
