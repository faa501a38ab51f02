package socketstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/thread"
)

// wireJob is a Job on the wire.
type wireJob struct {
	ID        uint64 `msgpack:"i"`
	Thread    string `msgpack:"t"`
	Seq       uint64 `msgpack:"s"`
	Delivered uint64 `msgpack:"n"`
}

const (
	// maxTakeJobs bounds the jobs of one take.
	maxTakeJobs = 256
	// maxTakeWait bounds how long a take through the socket waits for a
	// job: the finishes of the taker's jobs wait behind it.
	maxTakeWait = 200 * time.Millisecond
	// maxLater bounds how long a client may put a job off: a huge delay
	// (or one that overflows a Duration) is this long.
	maxLater = time.Hour
)

// serveWork serves a client's worker on this connection (see
// Client.Work): a taker of the server's queue whose jobs are the
// connection's, given back when it ends.
func (c *serverConn) serveWork() {
	s := c.s
	if s.work == nil {
		c.send(response{Err: errOut(ErrNoWork)})
		c.w.Flush()
		return
	}
	t := s.work.taker(true)
	defer t.Close()
	stop := context.AfterFunc(s.ctx, func() { c.c.Close() })
	defer stop()
	if c.send(response{Bool: true}) != nil || c.w.Flush() != nil {
		return
	}
	jobs := map[uint64]*Job{}
	for {
		req, err := decodeRequest(c.dec, c.cr, maxSmallCall)
		if err != nil {
			if errors.Is(err, ErrProtocol) {
				c.send(response{Err: errOut(err)})
				c.w.Flush()
			}
			return
		}
		var r response
		switch req.Op {
		case opTake:
			n := min(max(req.Limit, 0), maxTakeJobs)
			wait := time.Duration(min(req.Seq, uint64(maxTakeWait/time.Millisecond))) * time.Millisecond
			err = t.Take(s.ctx, n, wait, func(j *Job) {
				jobs[j.ID] = j
				r.Jobs = append(r.Jobs, wireJob{ID: j.ID, Thread: j.Thread, Seq: j.Seq, Delivered: j.Delivered})
			})
		case opJobDone, opJobLater:
			j := jobs[req.Seq]
			if j == nil {
				err = fmt.Errorf("finish job %d: %w", req.Seq, errNoJob)
				break
			}
			delete(jobs, req.Seq)
			if req.Op == opJobDone {
				err = j.Done()
			} else {
				err = j.Later(time.Duration(min(max(req.Limit, 0), int(maxLater/time.Millisecond))) * time.Millisecond)
			}
			r.Bool = err == nil
		default:
			c.send(response{Err: errOut(fmt.Errorf("%w: call %q while taking work", ErrProtocol, req.Op))})
			c.w.Flush()
			return
		}
		if err != nil {
			r = response{Err: errOut(err)}
		}
		if c.send(r) != nil || c.w.Flush() != nil {
			if req.Op == opTake {
				// The jobs were never told to the worker: given back
				// (t.Close) as not given out.
				ids := make([]uint64, len(r.Jobs))
				for i, j := range r.Jobs {
					ids[i] = j.ID
				}
				t.unsent(ids)
			}
			return
		}
	}
}

// RemoteWork is a worker's taker of the jobs of the server's queue (see
// Work), on a connection of its own: its jobs are given out again when
// it closes, or its process dies. It is safe for concurrent use; its
// calls go one at a time.
type RemoteWork struct {
	c  *Client
	mu sync.Mutex // guards cc: one call at a time
	cc *clientConn
}

// Work takes work from the server's queue: the jobs of the threads that
// may be runnable, shared with the server's own process and every other
// worker (see Work). A server that gives out none is ErrNoWork.
func (c *Client) Work(ctx context.Context) (*RemoteWork, error) {
	if err := c.enter(); err != nil {
		return nil, fmt.Errorf("take work: %w", err)
	}
	defer c.ops.Done()
	if !c.info.Work {
		return nil, fmt.Errorf("take work from the server at %s: %w", c.path, ErrNoWork)
	}
	cc, err := c.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("take work: %w", err)
	}
	err, _ = cc.roundTrip(ctx, request{Op: opWork, Version: Version}, one(func(*response) error { return nil }))
	if err != nil {
		cc.c.Close()
		return nil, fmt.Errorf("take work from the server at %s: %w", c.path, err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cc.c.Close()
		return nil, fmt.Errorf("take work: %w", thread.ErrClosed)
	}
	c.leases[cc] = struct{}{} // closed with the client
	c.mu.Unlock()
	return &RemoteWork{c: c, cc: cc}, nil
}

// call makes one call on the work's connection.
func (w *RemoteWork) call(ctx context.Context, req request, fn func(*response) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cc == nil {
		return fmt.Errorf("take work: %w", thread.ErrClosed)
	}
	req.Version = Version
	err, reusable := w.cc.roundTrip(ctx, req, one(fn))
	if !reusable {
		w.closeLocked()
	}
	var ce *connError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

// Take waits up to wait (at most a moment: the finishes of the taker's
// jobs wait behind a take) for at most n jobs, passing each to fn.
func (w *RemoteWork) Take(ctx context.Context, n int, wait time.Duration, fn func(*Job)) error {
	var got []wireJob
	err := w.call(ctx, request{Op: opTake, Limit: n, Seq: uint64(min(wait, maxTakeWait) / time.Millisecond)}, func(r *response) error {
		got = r.Jobs
		return nil
	})
	if err != nil {
		return fmt.Errorf("take work: %w", err)
	}
	for _, wj := range got {
		if thread.ValidateID(wj.Thread) != nil {
			// Not a thread this worker can drive, now or later: finished,
			// so that it is not held by this connection for good.
			_ = w.call(ctx, request{Op: opJobDone, Seq: wj.ID}, func(*response) error { return nil })
			continue
		}
		id, th, seq := wj.ID, wj.Thread, wj.Seq
		fn(&Job{
			Thread: th, Seq: seq, Ingress: true, Delivered: wj.Delivered, ID: id,
			finish: func(done bool, later time.Duration) error {
				op := opJobLater
				if done {
					op = opJobDone
				}
				return w.call(context.Background(), request{Op: op, Seq: id, Limit: int(later / time.Millisecond)}, func(*response) error { return nil })
			},
			followed: func(ctx context.Context) (bool, error) { return followed(ctx, w.c, th, seq) },
		})
	}
	return nil
}

// Close gives the jobs the worker holds back to the server, to be given
// out again at once.
func (w *RemoteWork) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeLocked()
	return nil
}

func (w *RemoteWork) closeLocked() {
	if w.cc == nil {
		return
	}
	w.cc.c.Close()
	w.c.mu.Lock()
	delete(w.c.leases, w.cc)
	w.c.mu.Unlock()
	w.cc = nil
}
