package socketstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// # Work
//
// A store in a directory has no queue of its own, as a NATS store has
// (natsstore.Work): its server keeps one (Work), fed by every append made
// through the server — its own runtimes' and its clients' — and, when it
// starts, by a look at every thread's last append (Work.Scan). A job is
// one ingress append (a start, an answer, a reconciliation: what may make
// a thread runnable) for a worker to look at; appends a runtime made
// while holding its thread make none, as a worker would finish them at
// once. Ingress appends to one thread that come before its job is given
// out are one job.
//
// A job is given to one taker at a time: a worker in the server's own
// process (Work.Taker), or one in another process, through the socket
// (Client.Work), whose jobs are those of its connection: when the
// connection ends (the worker stopped, or died), they are given out again
// at once, as its leases, which are connections too, are let go. A job
// is given out only once it has settled (Work's settle): a command that
// starts a thread or answers it and then drives it itself (harness run,
// approve --resume) holds the thread or has appended after it by then,
// and the worker leaves it alone (see package worker).

// ErrNoWork: the server gives no work to its clients (it was made
// without WithWork, or is of an older version).
var ErrNoWork = errors.New("the harness server gives out no work")

// Work is the queue of work of a held store (see the section above). It
// is safe for concurrent use.
type Work struct {
	store  thread.Store
	settle time.Duration
	drives int

	mu      sync.Mutex // guards everything below
	pending []*entry   // waiting to be given out
	fresh   map[string]*entry
	next    uint64
	takers  map[*Taker]struct{}
	wake    chan struct{} // closed and replaced when a job may be ready
}

// entry is one job of the queue.
type entry struct {
	id        uint64
	thread    string
	seq       uint64
	ingress   bool
	delivered uint64
	ready     time.Time
	owner     *Taker
}

// NewWork returns the queue of work of store: an ingress append is given
// out settle after it was made. drives is how many threads the server's
// own process drives at once (0 if it drives none), for Info.
func NewWork(store thread.Store, settle time.Duration, drives int) *Work {
	return &Work{store: store, settle: max(settle, 0), drives: drives, fresh: map[string]*entry{}, takers: map[*Taker]struct{}{}, wake: make(chan struct{})}
}

// WithWork gives the clients the jobs of w (see Client.Work).
func WithWork(w *Work) Option { return func(s *Server) { s.work = w } }

// Appended tells the queue of an append to thread id, which moved its
// head to head; drafts are what was appended. An append posted from
// outside the runtime (its first draft's cause is an ingress cause)
// makes a job; another append makes none.
func (w *Work) Appended(id string, head thread.Head, drafts []facts.Draft) {
	if len(drafts) == 0 || !facts.IsIngress(drafts[0].Cause) {
		return
	}
	w.add(id, head.Seq, time.Now().Add(w.settle))
}

// add makes a job of thread id at seq, given out at ready, or, if the
// thread has a job that was never given out, moves that job up to seq.
func (w *Work) add(id string, seq uint64, ready time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.fresh[id]; e != nil {
		// One job, given out once the latest of its appends has settled.
		e.seq = max(e.seq, seq)
		if ready.After(e.ready) {
			e.ready = ready
		}
		return
	}
	w.next++
	e := &entry{id: w.next, thread: id, seq: seq, ingress: true, ready: ready}
	w.fresh[id] = e
	w.pending = append(w.pending, e)
	w.signal()
}

// signal wakes the takers that wait; the caller holds w.mu.
func (w *Work) signal() {
	close(w.wake)
	w.wake = make(chan struct{})
}

// Scan makes a job, to be given out at once, of every thread of the store
// whose last append was posted from outside the runtime: a thread
// submitted, or answered, while no server kept the queue.
func (w *Work) Scan(ctx context.Context) error {
	after := ""
	for {
		hs, err := w.store.Threads(ctx, thread.ThreadsPage{After: after})
		if err != nil {
			return fmt.Errorf("look for work: %w", err)
		}
		if len(hs) == 0 {
			return nil
		}
		for _, h := range hs {
			after = h.Thread
			for f, err := range w.store.Read(ctx, h.Thread, h.Seq) {
				if err != nil {
					return fmt.Errorf("look for work in %s: %w", h.Thread, err)
				}
				if facts.IsIngress(f.Cause) {
					w.add(h.Thread, h.Seq, time.Time{})
				}
				break
			}
		}
	}
}

// Taker is one taker of jobs: a worker. Its jobs are its own until it
// finishes or gives them back; Close gives back those it holds.
type Taker struct {
	w      *Work
	remote bool              // a client's, through the socket
	out    map[uint64]*entry // guarded by w.mu
	closed bool              // guarded by w.mu
}

// Taker returns a new taker of the queue's jobs.
func (w *Work) Taker() *Taker { return w.taker(false) }

func (w *Work) taker(remote bool) *Taker {
	t := &Taker{w: w, remote: remote, out: map[uint64]*entry{}}
	w.mu.Lock()
	w.takers[t] = struct{}{}
	w.mu.Unlock()
	return t
}

// info is what the queue says of itself to a client: how many threads
// the server's process drives at once, and how many takers of other
// processes it has.
func (w *Work) info() (drives, remote int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for t := range w.takers {
		if t.remote {
			remote++
		}
	}
	return w.drives, remote
}

// Close gives back, to be given out again at once, the jobs the taker
// holds, and takes no more.
func (t *Taker) Close() {
	w := t.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	delete(w.takers, t)
	now := time.Now()
	for _, e := range t.out {
		w.giveBack(e, now)
	}
	t.out = nil
	w.signal()
}

// giveBack puts e, a job given back by its taker, to be given out again
// at ready; the caller holds w.mu. A post to its thread made while e was
// out has a job of its own: the two are one job then, as two posts
// before a job is given out are (see add), given out once both are
// ready, and counted as given out before (Delivered), so the next taker
// looks at the thread rather than taking it as followed. Else e is the
// thread's job that later posts join.
func (w *Work) giveBack(e *entry, ready time.Time) {
	e.owner = nil
	if f := w.fresh[e.thread]; f != nil {
		f.seq = max(f.seq, e.seq)
		if ready.After(f.ready) {
			f.ready = ready
		}
		f.delivered = max(f.delivered, e.delivered)
		return
	}
	e.ready = ready
	w.fresh[e.thread] = e
	w.pending = append(w.pending, e)
}

// unsent takes back the count of a delivery (Delivered) of the taker's
// jobs ids, whose take was never told to the taker (its reply could not
// be sent): they were not given out.
func (t *Taker) unsent(ids []uint64) {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	for _, id := range ids {
		if e := t.out[id]; e != nil && e.delivered > 0 {
			e.delivered--
		}
	}
}

// Take waits up to wait for at most n jobs, passing each to fn, and
// returns once it passed one or more, wait passed, or ctx is done (nil
// then too: the caller looks at its ctx).
func (t *Taker) Take(ctx context.Context, n int, wait time.Duration, fn func(*Job)) error {
	deadline := time.Now().Add(wait)
	w := t.w
	for {
		w.mu.Lock()
		if t.closed {
			w.mu.Unlock()
			return fmt.Errorf("take work: %w", thread.ErrClosed)
		}
		now := time.Now()
		var got []*entry
		var next time.Time
		kept := w.pending[:0]
		for _, e := range w.pending {
			switch {
			case len(got) < n && !e.ready.After(now):
				got = append(got, e)
			default:
				if next.IsZero() || e.ready.Before(next) {
					next = e.ready
				}
				kept = append(kept, e)
			}
		}
		clear(w.pending[len(kept):])
		w.pending = kept
		jobs := make([]*Job, len(got))
		for i, e := range got {
			if w.fresh[e.thread] == e {
				delete(w.fresh, e.thread)
			}
			e.owner = t
			e.delivered++
			t.out[e.id] = e
			jobs[i] = t.job(e)
		}
		wake := w.wake
		w.mu.Unlock()
		for _, j := range jobs {
			fn(j)
		}
		left := time.Until(deadline)
		if len(jobs) > 0 || left <= 0 || n <= 0 {
			return nil
		}
		if !next.IsZero() {
			left = min(left, time.Until(next))
		}
		timer := time.NewTimer(max(left, 0))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// job is the Job of e, given to t.
func (t *Taker) job(e *entry) *Job {
	id := e.id
	return &Job{
		Thread: e.thread, Seq: e.seq, Ingress: e.ingress, Delivered: e.delivered, ID: id,
		finish:   func(done bool, later time.Duration) error { return t.finish(id, done, later) },
		followed: func(ctx context.Context) (bool, error) { return followed(ctx, t.w.store, e.thread, e.seq) },
	}
}

// errNoJob: a job the taker does not hold.
var errNoJob = errors.New("no such job of this taker")

// finish ends the job id of the taker: done, or given back to be given
// out again after later.
func (t *Taker) finish(id uint64, done bool, later time.Duration) error {
	w := t.w
	w.mu.Lock()
	defer w.mu.Unlock()
	e := t.out[id]
	if e == nil {
		return fmt.Errorf("finish job %d: %w", id, errNoJob)
	}
	delete(t.out, id)
	e.owner = nil
	if done {
		return nil
	}
	w.giveBack(e, time.Now().Add(max(later, 0)))
	w.signal()
	return nil
}

// followed reports whether thread id of store has an append after seq.
func followed(ctx context.Context, store thread.Store, id string, seq uint64) (bool, error) {
	h, err := store.Head(ctx, id)
	if errors.Is(err, thread.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look at %s: %w", id, err)
	}
	return h.Seq > seq, nil
}

// Job is one ingress append for a worker to look at (see Work): in the
// server's process (Taker.Take) or in a client's (RemoteWork.Take).
type Job struct {
	// Thread is the thread appended to.
	Thread string
	// Seq is the thread's head after the append.
	Seq uint64
	// Ingress is true: the append was posted from outside the runtime.
	Ingress bool
	// Delivered counts the times the job was given out, this one included.
	Delivered uint64
	// ID names the job in its queue.
	ID uint64

	finish   func(done bool, later time.Duration) error
	followed func(ctx context.Context) (bool, error)
}

// Followed reports whether the thread has an append after the job's.
func (j *Job) Followed(ctx context.Context) (bool, error) { return j.followed(ctx) }

// Done finishes the job: it is given out no more.
func (j *Job) Done() error { return j.finish(true, 0) }

// Later gives the job back, to be given out again after delay.
func (j *Job) Later(delay time.Duration) error { return j.finish(false, delay) }

// Working says the job is still being worked on: nothing to do, since a
// job stays with its taker for as long as the taker is there.
func (j *Job) Working() error { return nil }
