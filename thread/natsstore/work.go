package natsstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// WorkConsumer is the name of the durable consumer of the stream that Work
// reads: one per stream, shared by every process that takes work from it.
const WorkConsumer = "workers"

// DefaultAckWait is how long a job stays with a process that neither
// finishes it nor says it is still working on it (Job.Working) before the
// stream gives it to another process.
const DefaultAckWait = 30 * time.Second

// maxAckPending bounds the jobs taken and not finished, across all the
// processes taking work: the jobs being worked on and those put off (see
// Job.Later).
const maxAckPending = 1 << 16

// WorkOption configures Work.
type WorkOption func(*workOptions)

type workOptions struct {
	ackWait time.Duration
}

// WithAckWait sets how long a job stays with a process that stops
// answering for it (default DefaultAckWait): after that, the stream gives
// it to another. A process working on a job says so (Job.Working) more
// often than that. The consumer keeps the setting of the last Work that
// opened it.
func WithAckWait(d time.Duration) WorkOption {
	return func(o *workOptions) { o.ackWait = d }
}

// Work is the store's queue of work for workers: every append to every
// thread, in the order the stream stored them, each given to one of the
// processes that take work from the stream, and given again to another if
// that process does not finish it in time. It is a durable consumer of the
// stream's thread subjects (WorkConsumer, with the stream's replicas),
// delivering each record's headers and not its facts: a job costs the
// server a few hundred bytes, however large the append.
//
// The queue is the log itself, read once by the workers together: it
// cannot miss an append, nor hold one the log lacks. A job is one append,
// named by its thread and told apart as Ingress — posted from outside the
// runtime (a thread started, a request answered, an effect reconciled):
// the appends that can make a parked thread runnable — or not: an append
// of a runtime holding the thread, which goes on by itself. A thread that
// waits for a person has no job until someone answers it.
//
// A consumer made for a stream that already holds threads starts at the
// stream's first record, so the first worker looks at every thread once.
type Work struct {
	s       *Store
	c       jetstream.Consumer
	ackWait time.Duration
}

// Work opens the stream's queue of work (see Work), creating its consumer
// the first time. While the cluster elects a leader (a node died), it
// waits as Open does, up to WithOpenWait; Close ends the wait.
func (s *Store) Work(ctx context.Context, opts ...WorkOption) (*Work, error) {
	o := workOptions{ackWait: DefaultAckWait}
	for _, opt := range opts {
		opt(&o)
	}
	if o.ackWait <= 0 {
		return nil, fmt.Errorf("work of %s: ack wait %v: want a duration > 0", s.name, o.ackWait)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("work of %s: %w", s.name, err)
	}
	defer s.leave()
	cfg := jetstream.ConsumerConfig{
		Durable:       WorkConsumer,
		Description:   "harness workers: every append to every thread, for the workers to look at",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       o.ackWait,
		MaxDeliver:    -1,
		MaxAckPending: maxAckPending,
		FilterSubject: s.l.prefix + ".t.>",
		HeadersOnly:   true,
	}
	// Made through the cluster's meta leader: right after a node died, an
	// election may be under way. Close ends the wait.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.closing, cancel)()
	c, err := untilLeader(ctx, time.Now(), s.openWait, "consumer "+WorkConsumer, func(ctx context.Context) (jetstream.Consumer, error) {
		return s.stream.CreateOrUpdateConsumer(ctx, cfg)
	})
	if err != nil {
		return nil, fmt.Errorf("work of %s: consumer %s: %w", s.name, WorkConsumer, err)
	}
	return &Work{s: s, c: c, ackWait: o.ackWait}, nil
}

// AckWait is how long a job stays with a process that stops answering for
// it (see WithAckWait).
func (w *Work) AckWait() time.Duration { return w.ackWait }

// Job is one append for a worker to look at.
type Job struct {
	// Thread is the thread appended to.
	Thread string
	// Ingress is true when the append was posted from outside the runtime
	// (its first fact's cause is an ingress cause), or when its cause
	// cannot be told: the thread may be runnable now.
	Ingress bool
	// Cause is the cause of the append's first fact ("" if it cannot be
	// told).
	Cause string
	// Seq is the record's seq in the stream.
	Seq uint64
	// Delivered counts the times the job was given out, this one included.
	Delivered uint64

	msg jetstream.Msg
	w   *Work
}

// Take waits up to wait for jobs, and returns at most n of them, each
// passed to fn as soon as it arrives (fn must not block for long: it may
// hand the job over and return). It returns when n jobs came, wait
// passed, or the stream could not be asked. ctx is looked at before the
// stream is asked, not while Take waits: the jobs of a request given up
// on would be given out again only after the ack wait, so a caller that
// stops taking work lets the last Take run out (and gives back with Later
// what it will not do). A job the store cannot read (not one of its
// records) is finished at once and not passed on.
func (w *Work) Take(ctx context.Context, n int, wait time.Duration, fn func(*Job)) error {
	if err := w.s.enter(); err != nil {
		return fmt.Errorf("take work of %s: %w", w.s.name, err)
	}
	defer w.s.leave()
	if n <= 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("take work of %s: %w", w.s.name, err)
	}
	batch, err := w.c.Fetch(n, jetstream.FetchMaxWait(max(wait, time.Millisecond)))
	if err != nil {
		return fmt.Errorf("take work of %s: %w", w.s.name, err)
	}
	for m := range batch.Messages() {
		j, err := w.job(m)
		if err != nil {
			_ = m.Term() // not a record: no worker can do anything with it
			continue
		}
		fn(j)
	}
	if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
		return fmt.Errorf("take work of %s: %w", w.s.name, err)
	}
	return nil
}

// job reads the job of a message of the consumer.
func (w *Work) job(m jetstream.Msg) (*Job, error) {
	meta, err := m.Metadata()
	if err != nil {
		return nil, err
	}
	hexID, ok := strings.CutPrefix(m.Subject(), w.s.l.prefix+".t.")
	if !ok {
		return nil, fmt.Errorf("subject %s is no thread's", m.Subject())
	}
	raw, err := hex.DecodeString(hexID)
	if err != nil {
		return nil, fmt.Errorf("subject %s: %w", m.Subject(), err)
	}
	id := string(raw)
	if err := thread.ValidateID(id); err != nil {
		return nil, fmt.Errorf("subject %s: %w", m.Subject(), err)
	}
	j := &Job{Thread: id, Seq: meta.Sequence.Stream, Delivered: meta.NumDelivered, msg: m, w: w, Ingress: true}
	// The message id is <thread>/<first cause>/<expected seq> (see
	// Append); a thread id has no '/', a cause may.
	if rest, ok := strings.CutPrefix(m.Headers().Get(jetstream.MsgIDHeader), id+"/"); ok {
		if i := strings.LastIndexByte(rest, '/'); i >= 0 && facts.ValidateCause(rest[:i]) == nil {
			j.Cause = rest[:i]
			j.Ingress = facts.IsIngress(j.Cause)
		}
	}
	return j, nil
}

// Followed reports whether the thread has a record after the job's: an
// append made after the job's by a runtime, which had read the job's
// append (it appends only after the head it has folded), or by someone
// posting again, whose own job comes later. It is one get of the thread's
// last record, answered by the stream's leader.
func (j *Job) Followed(ctx context.Context) (bool, error) {
	if err := j.w.s.enter(); err != nil {
		return false, fmt.Errorf("look at %s: %w", j.Thread, err)
	}
	defer j.w.s.leave()
	m, err := j.w.s.getMsg(ctx, j.w.s.l.threadSubject(j.Thread), 0, true)
	if err != nil {
		return false, fmt.Errorf("look at %s: %w", j.Thread, err)
	}
	return m != nil && m.Sequence > j.Seq, nil
}

// Done finishes the job: no process is given it again.
func (j *Job) Done() error {
	if err := j.msg.Ack(); err != nil {
		return fmt.Errorf("finish the job of %s (stream seq %d): %w", j.Thread, j.Seq, err)
	}
	return nil
}

// Later gives the job back, to be given out again (to any process) after
// delay; 0 gives it out again at once.
func (j *Job) Later(delay time.Duration) error {
	var err error
	if delay <= 0 {
		err = j.msg.Nak()
	} else {
		err = j.msg.NakWithDelay(delay)
	}
	if err != nil {
		return fmt.Errorf("give back the job of %s (stream seq %d): %w", j.Thread, j.Seq, err)
	}
	return nil
}

// Working says the job is still being worked on: the stream keeps it with
// this process for another ack wait (WithAckWait).
func (j *Job) Working() error {
	if err := j.msg.InProgress(); err != nil {
		return fmt.Errorf("keep the job of %s (stream seq %d): %w", j.Thread, j.Seq, err)
	}
	return nil
}
