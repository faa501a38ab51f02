package worker

import (
	"context"
	"time"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// Queue is where a worker learns which threads to look at: a job per
// append, shared by every worker on the store (each job goes to one of
// them), given out again if the worker that took it stops answering for
// it. natsstore's Work is one (FromWork).
type Queue interface {
	// Take waits up to wait for at most n jobs, passing each to fn as it
	// arrives; fn does not block.
	Take(ctx context.Context, n int, wait time.Duration, fn func(Job)) error
	// KeepEvery is how often a worker says it is still working on a job
	// (Job.Working), so that the queue does not give it to another.
	KeepEvery() time.Duration
}

// Job is one append to a thread, for a worker to look at.
type Job interface {
	// Thread is the thread appended to.
	Thread() string
	// Ingress reports whether the append was posted from outside the
	// runtime (a start, an answer, a reconciliation), or cannot be told:
	// the thread may be runnable. Any other append was made by a runtime
	// that holds the thread and goes on by itself.
	Ingress() bool
	// Delivered counts the times the job was given out, this one included.
	Delivered() uint64
	// Followed reports whether the thread has an append after the job's.
	Followed(ctx context.Context) (bool, error)
	// Done finishes the job: it is given out no more.
	Done() error
	// Later gives the job back, to be given out again after delay.
	Later(delay time.Duration) error
	// Working says the job is still being worked on.
	Working() error
}

// FromWork is the Queue of a NATS store's work (natsstore.Store.Work): a
// worker says it is working on a job every third of the ack wait.
func FromWork(w *natsstore.Work) Queue { return workQueue{w} }

type workQueue struct{ w *natsstore.Work }

func (q workQueue) Take(ctx context.Context, n int, wait time.Duration, fn func(Job)) error {
	return q.w.Take(ctx, n, wait, func(j *natsstore.Job) { fn(workJob{j}) })
}

func (q workQueue) KeepEvery() time.Duration { return q.w.AckWait() / 3 }

type workJob struct{ j *natsstore.Job }

func (j workJob) Thread() string    { return j.j.Thread }
func (j workJob) Ingress() bool     { return j.j.Ingress }
func (j workJob) Delivered() uint64 { return j.j.Delivered }
func (j workJob) Followed(ctx context.Context) (bool, error) {
	return j.j.Followed(ctx)
}
func (j workJob) Done() error                     { return j.j.Done() }
func (j workJob) Later(delay time.Duration) error { return j.j.Later(delay) }
func (j workJob) Working() error                  { return j.j.Working() }
