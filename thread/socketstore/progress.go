package socketstore

import (
	"context"
	"strings"
	"sync"

	"github.com/seed-7cc7a084/harness/thread"
)

// # Progress of the threads a client drives
//
// A client that drives a thread (it holds the thread's lease) hands the
// server what the thread does between two facts — a running command's
// output, the model's text as it streams — so that the server's process
// (a harness server, whose page and API follow a thread) shows it as it
// shows the threads it drives itself. These are opaque, ephemeral
// records (the caller's encoding): the server hands each to its
// ProgressSink and keeps nothing of them, and no fact is made of them.
//
// The client never waits for the server: Client.Progress puts a record
// in a bounded queue (progressQueued records, progressQueuedBytes bytes)
// that one goroutine sends in batches; what does not fit is counted, by
// thread, and the count goes with the thread's next record that is sent.
// A server that does not take progress (an older one) is not asked again.
//
// The server takes a record only for a thread that a connection of the
// same process (by its peer pid) holds the lease of, or a thread below
// such a thread (a child in its tree, "t1.2" below "t1"); each record is
// at most maxProgressRecord bytes, a batch at most maxProgressBatch
// records. When the last lease of a thread ends, the sink is told
// (ProgressSink.Ended), so that it lets go of what it keeps of it.

const (
	// progressQueued and progressQueuedBytes bound what a client holds
	// that it has not sent yet.
	progressQueued      = 1024
	progressQueuedBytes = 1 << 20
	// maxProgressRecord bounds one record; a larger one is dropped (and
	// counted) by the client, ignored by the server.
	maxProgressRecord = 256 << 10
	// maxProgressBatch bounds the records of one call.
	maxProgressBatch = 256
)

// progressItem is one record on the wire; Dropped counts the thread's
// records the client dropped before this one.
type progressItem struct {
	Thread  string `msgpack:"t"`
	Data    []byte `msgpack:"d"`
	Dropped int    `msgpack:"n,omitempty"`
}

// ProgressSink receives, in a server, the progress records of the threads
// its clients drive. Its methods are called with the server's lease table
// locked, so they must return quickly and must not call the server.
type ProgressSink interface {
	// Progress is a record of thread id, as the client encoded it, and
	// how many of the thread's records the client dropped before it.
	Progress(id string, data []byte, dropped int)
	// Ended says that no client holds thread id any more: its drive (in
	// the client's process) ended.
	Ended(id string)
}

// WithProgress hands the progress records of the threads the clients
// drive to sink (see ProgressSink).
func WithProgress(sink ProgressSink) Option {
	return func(s *Server) { s.sink = sink }
}

// progressQueue is a client's records not sent yet.
type progressQueue struct {
	mu      sync.Mutex // guards items, size, dropped, off and started
	items   []progressItem
	size    int
	dropped map[string]int
	off     bool // the server does not take them, or the client closed
	started bool
	wake    chan struct{}
	ctx     context.Context
	stop    context.CancelFunc
	sender  sync.WaitGroup
}

// Progress hands the server a progress record of thread id, which this
// process drives (holds the lease of, or is below a thread it does):
// data is opaque to the store. It never waits: a record that does not
// fit in the queue is dropped and counted. The caller may reuse data.
func (c *Client) Progress(id string, data []byte) {
	q := &c.progress
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.off {
		return
	}
	if !q.started {
		q.started = true
		q.wake = make(chan struct{}, 1)
		q.ctx, q.stop = context.WithCancel(context.Background())
		q.dropped = map[string]int{}
		q.sender.Go(func() { c.sendProgress() })
	}
	if len(data) > maxProgressRecord || len(q.items) >= progressQueued || q.size+len(data) > progressQueuedBytes {
		q.dropped[id]++
		return
	}
	item := progressItem{Thread: id, Data: append([]byte(nil), data...), Dropped: q.dropped[id]}
	delete(q.dropped, id)
	q.items = append(q.items, item)
	q.size += len(data)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// stopProgress ends the sender (on Close); what is queued is let go.
func (c *Client) stopProgress() {
	q := &c.progress
	q.mu.Lock()
	q.off = true
	started := q.started
	q.mu.Unlock()
	if started {
		q.stop()
		q.sender.Wait()
	}
}

// sendProgress sends the queued records, in batches, until the client
// closes or the server turns them down.
func (c *Client) sendProgress() {
	q := &c.progress
	for {
		select {
		case <-q.ctx.Done():
			return
		case <-q.wake:
		}
		for {
			q.mu.Lock()
			n := min(len(q.items), maxProgressBatch)
			batch := q.items[:n:n]
			q.items = q.items[n:]
			for _, it := range batch {
				q.size -= len(it.Data)
			}
			if len(q.items) == 0 {
				q.items = nil
			}
			q.mu.Unlock()
			if n == 0 {
				break
			}
			err := c.call(q.ctx, "progress", "", request{Op: opProgress, Progress: batch}, one(func(*response) error { return nil }))
			if err != nil {
				// An older server, one going away, or the client
				// closing: progress is ephemeral, nothing is lost of
				// the record. Stop sending.
				q.mu.Lock()
				q.off, q.items, q.size = true, nil, 0
				q.mu.Unlock()
				return
			}
		}
	}
}

// leases is a server's table of the threads its clients hold, by the
// pid of the client's process.
type leases struct {
	mu   sync.Mutex // guards held, and orders the sink's calls
	held map[string]map[int]int
}

// in counts a lease of id by the process pid in.
func (s *Server) leaseIn(id string, pid int) {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	if s.leases.held == nil {
		s.leases.held = map[string]map[int]int{}
	}
	if s.leases.held[id] == nil {
		s.leases.held[id] = map[int]int{}
	}
	s.leases.held[id][pid]++
}

// leaseOut counts a lease of id by the process pid out; when it was the
// thread's last, the sink is told.
func (s *Server) leaseOut(id string, pid int) {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	by := s.leases.held[id]
	if by[pid]--; by[pid] <= 0 {
		delete(by, pid)
	}
	if len(by) > 0 {
		return
	}
	delete(s.leases.held, id)
	if s.sink != nil {
		s.sink.Ended(id)
	}
}

// heldBy reports whether the process pid holds thread id, or a thread id
// is below. The caller holds s.leases.mu.
func (s *Server) heldBy(id string, pid int) bool {
	for {
		if s.leases.held[id][pid] > 0 {
			return true
		}
		i := strings.LastIndexByte(id, '.')
		if i <= 0 {
			return false
		}
		id = id[:i]
	}
}

// takeProgress hands the sink the records of a batch from the process
// pid that it may send (see the package's rules above) and ignores the
// others; it returns how many it took.
func (s *Server) takeProgress(pid int, batch []progressItem) int {
	if s.sink == nil || len(batch) > maxProgressBatch {
		return 0
	}
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	took := 0
	for _, it := range batch {
		if len(it.Data) > maxProgressRecord || it.Dropped < 0 || thread.ValidateID(it.Thread) != nil || !s.heldBy(it.Thread, pid) {
			continue
		}
		s.sink.Progress(it.Thread, it.Data, it.Dropped)
		took++
	}
	return took
}
