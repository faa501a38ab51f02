package natsstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/thread"
)

// # Progress of the threads a process drives
//
// A process that drives a thread of the store (a worker: it holds the
// thread's lease) publishes what the thread does between two facts — a
// running command's output, the model's text as it streams — so that
// another process that follows the store (a harness server, whose page
// and API show threads as they run) shows it too. These are opaque,
// ephemeral records (the caller's encoding), sent with core NATS on
// <prefix>.p.<hex id>, a subject the stream does not bind: nothing of
// them is stored, and a follower that is not listening misses them.
//
// The publisher never waits: Progress's function puts a record in the
// store's bounded queue (progressQueued records, progressQueuedBytes
// bytes) that one goroutine publishes; what does not fit is counted, by
// thread, and the count goes with the thread's next record that is sent.
// A record is sent only while the lease it was given under is held.
//
// Each record names the lease it is sent under (the thread held and the
// lease's id, headers progressHeld and progressLease). A follower
// (FollowProgress) takes a record only if that lease is the one the
// leases bucket holds now for the thread, or for a thread it is below (a
// child in its tree, "t1.2" below "t1"), as it watches the bucket: a
// process that does not hold the thread, or no longer does, is not
// shown. The follower's watch of the bucket may lag the records (a
// worker takes a lease and at once publishes its first lines): a record
// of a lease the follower has not seen held is kept, in order, for a
// short while (followWaitFor; at most followWait records and
// followWaitBytes bytes, by all threads), and handed over as soon as the
// watch shows that lease held; dropped if it does not in that time. The lease's id is no secret from those who may read the
// bucket: whoever may publish on the store's subjects may append to its
// threads too, so this keeps out the mistaken (a holder whose lease ran
// out, a thread another took), not the store's own users.

const (
	// progressQueued and progressQueuedBytes bound what a store holds
	// that it has not published yet.
	progressQueued      = 1024
	progressQueuedBytes = 1 << 20
	// maxProgressRecord bounds one record; a larger one is dropped (and
	// counted) by the publisher, ignored by a follower.
	maxProgressRecord = 256 << 10
	// maxProgressDropped bounds the count a follower believes.
	maxProgressDropped = 1 << 30
	// followPending and followPendingBytes bound what a follower's
	// subscription holds that it has not handed over: NATS drops the
	// rest (a slow consumer).
	followPending      = 4096
	followPendingBytes = 8 << 20
	// followWait, followWaitBytes and followWaitFor bound the records a
	// follower keeps of leases its watch has not shown yet.
	followWait      = 256
	followWaitBytes = 1 << 20
	followWaitFor   = 5 * time.Second
)

// The headers of a progress record.
const (
	progressHeld    = "Harness-Held"    // the thread whose lease the record is sent under
	progressLease   = "Harness-Lease"   // that lease's id
	progressDropped = "Harness-Dropped" // the thread's records dropped before this one
)

// progressSubject returns <prefix>.p.<hex id>: thread id's progress
// records, never stored.
func (l layout) progressSubject(id string) string { return l.prefix + ".p." + l.encodeID(id) }

// progressSubjects is <prefix>.p.*: every thread's progress records.
func (l layout) progressSubjects() string { return l.prefix + ".p.*" }

// heldLease is the key of a lease's id in the context a Lease returns.
type heldLease struct {
	s  *Store
	id string
}

// progressOut is a store's records not published yet.
type progressOut struct {
	mu      sync.Mutex // guards items, size, dropped and started
	items   []progressRecord
	size    int
	dropped map[string]int
	started bool
	wake    chan struct{}
}

// progressRecord is one record to publish, under the lease of held.
type progressRecord struct {
	held    context.Context
	id      string
	root    string
	lease   string
	data    []byte
	dropped int
}

// Progress returns the function that publishes a progress record of
// thread root, or of a thread below it, while held — the context root's
// Lease of this store returned, or one made from it — is live (see the
// package comment's "Progress"): data is opaque to the store, and the
// function never waits; a record that does not fit in the queue, or
// comes after the lease ended, is dropped. The caller may reuse data.
// It returns nil when held holds no lease of root from this store.
func (s *Store) Progress(held context.Context, root string) func(id string, data []byte) {
	lease, _ := held.Value(heldLease{s, root}).(string)
	if lease == "" {
		return nil
	}
	return func(id string, data []byte) {
		if held.Err() != nil || (id != root && !strings.HasPrefix(id, root+".")) {
			return
		}
		s.queueProgress(progressRecord{held: held, id: id, root: root, lease: lease, data: data})
	}
}

// queueProgress puts r in the store's queue, or counts it dropped.
func (s *Store) queueProgress(r progressRecord) {
	q := &s.progress
	q.mu.Lock()
	defer q.mu.Unlock()
	if s.closing.Err() != nil {
		return
	}
	if !q.started {
		q.started = true
		q.wake = make(chan struct{}, 1)
		q.dropped = map[string]int{}
		go s.publishProgress()
	}
	if len(r.data) > maxProgressRecord || len(q.items) >= progressQueued || q.size+len(r.data) > progressQueuedBytes {
		q.dropped[r.id]++
		return
	}
	r.data = append([]byte(nil), r.data...)
	r.dropped = q.dropped[r.id]
	delete(q.dropped, r.id)
	q.items = append(q.items, r)
	q.size += len(r.data)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// publishProgress publishes the queued records until the store closes.
func (s *Store) publishProgress() {
	q := &s.progress
	for {
		select {
		case <-s.closing.Done():
			q.mu.Lock()
			q.items, q.size = nil, 0
			q.mu.Unlock()
			return
		case <-q.wake:
		}
		for {
			q.mu.Lock()
			items := q.items
			q.items, q.size = nil, 0
			q.mu.Unlock()
			if len(items) == 0 {
				break
			}
			for _, r := range items {
				if r.held.Err() != nil {
					continue // the lease ended: the record is not the holder's any more
				}
				m := nats.NewMsg(s.l.progressSubject(r.id))
				m.Data = r.data
				m.Header.Set(progressHeld, r.root)
				m.Header.Set(progressLease, r.lease)
				if r.dropped > 0 {
					m.Header.Set(progressDropped, strconv.Itoa(r.dropped))
				}
				// Ephemeral: a record NATS does not take (reconnecting,
				// its buffer full) is lost, and nothing of the record.
				_ = s.nc.PublishMsg(m)
			}
		}
	}
}

// ProgressSink receives the progress records a follower takes (see
// FollowProgress). Its methods are called one at a time, so they must
// return quickly.
type ProgressSink interface {
	// Progress is a record of thread id, as its publisher encoded it,
	// and how many of the thread's records the publisher dropped before
	// it.
	Progress(id string, data []byte, dropped int)
	// Ended says that the lease a thread's records were taken under
	// ended (released, run out, or taken by another).
	Ended(id string)
}

// follower is one FollowProgress: the leases the bucket holds now.
type follower struct {
	s    *Store
	sink ProgressSink
	// waitFor is how long a record of a lease not seen yet is kept.
	waitFor time.Duration
	mu      sync.Mutex        // guards held, waiting and waitingBytes, and orders the sink's calls
	held    map[string]string // thread → the id of its lease now
	// waiting is the records of leases not seen held yet, oldest first;
	// waitingBytes is the size of their data.
	waiting      []waitingRecord
	waitingBytes int
	// lost counts, by thread and lease, the records of a lease not seen
	// held yet that were dropped (beyond the bound of what is kept, or
	// kept too long), and the records too large to take: a count is
	// handed over with the thread's next record taken under that lease,
	// so that the streams say how many they missed; the count of a lease
	// never seen held (a forged one) is never told. At most followWait
	// entries, each let go once it is older than lostFor.
	lost map[lostKey]*lostCount
}

// lostKey names the records of thread id sent under a lease of root.
type lostKey struct{ id, root, lease string }

// lostCount is how many records of a lostKey were dropped, and until
// when the count is kept.
type lostCount struct {
	n     int
	until time.Time
}

// lostFor is how long a follower keeps a count of dropped records for a
// lease it has not seen held, in waitFors.
const lostFor = 4

// drop counts a record of thread id under root's lease as dropped.
// f.mu is held.
func (f *follower) drop(id, root, lease string, now time.Time) {
	k := lostKey{id, root, lease}
	c := f.lost[k]
	if c == nil {
		if len(f.lost) >= followWait {
			return
		}
		if f.lost == nil {
			f.lost = map[lostKey]*lostCount{}
		}
		c = &lostCount{}
		f.lost[k] = c
	}
	c.n = min(c.n+1, maxProgressDropped)
	c.until = now.Add(lostFor * f.waitFor)
}

// lostBefore is how many records of thread id under root's lease were
// dropped before the one now handed over, with the publisher's own
// count, and forgets them. f.mu is held.
func (f *follower) lostBefore(id, root, lease string, dropped int) int {
	k := lostKey{id, root, lease}
	if c := f.lost[k]; c != nil {
		delete(f.lost, k)
		dropped = min(dropped+c.n, maxProgressDropped)
	}
	return dropped
}

// waitingRecord is a record kept until its lease is seen held.
type waitingRecord struct {
	id, root, lease string
	data            []byte
	dropped         int
	until           time.Time
}

// FollowProgress hands sink the progress records that the holders of
// the store's threads publish (see Progress), taking only those sent
// under the lease the leases bucket holds now for the record's thread or
// a thread it is below, until stop is called or ctx ends. It returns
// once it follows the leases bucket and the records' subjects.
func (s *Store) FollowProgress(ctx context.Context, sink ProgressSink) (stop func(), err error) {
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("follow progress: %w", err)
	}
	defer s.leave()
	f := &follower{s: s, sink: sink, held: map[string]string{}, waitFor: followWaitFor}
	if s.progressWait > 0 {
		f.waitFor = s.progressWait
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := s.leases.WatchAll(wctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("follow progress: watch the leases: %w", err)
	}
	// The leases held now, before any record is looked at.
	for e := range w.Updates() {
		if e == nil {
			break
		}
		f.lease(e)
	}
	sub, err := s.nc.Subscribe(s.l.progressSubjects(), f.take)
	if err != nil {
		cancel()
		_ = w.Stop()
		return nil, fmt.Errorf("follow progress: subscribe: %w", err)
	}
	_ = sub.SetPendingLimits(followPending, followPendingBytes)
	// The subscription is the server's once it answers a ping sent after
	// it: a record published after FollowProgress returns is taken.
	fctx, fcancel := s.requestContext(wctx)
	err = s.nc.FlushWithContext(fctx)
	fcancel()
	if err != nil {
		_ = sub.Unsubscribe()
		cancel()
		_ = w.Stop()
		return nil, fmt.Errorf("follow progress: subscribe: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-wctx.Done():
				return
			case <-s.closing.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e != nil {
					f.lease(e)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = sub.Unsubscribe()
			cancel()
			_ = w.Stop()
			<-done
			f.mu.Lock()
			f.waiting, f.waitingBytes = nil, 0
			f.mu.Unlock()
		})
	}, nil
}

// lease notes a change of the leases bucket: a thread's lease taken,
// renewed, or ended; an ended or replaced lease is told to the sink.
func (f *follower) lease(e jetstream.KeyValueEntry) {
	raw, err := hex.DecodeString(e.Key())
	if err != nil {
		return
	}
	id := string(raw)
	var h holder
	if e.Operation() == jetstream.KeyValuePut && json.Unmarshal(e.Value(), &h) == nil && h.ID != "" {
		f.mu.Lock()
		defer f.mu.Unlock()
		if was, ok := f.held[id]; ok && was != h.ID {
			f.sink.Ended(id)
		}
		f.held[id] = h.ID
		f.release(id, h.ID, time.Now())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.held[id]; ok {
		delete(f.held, id)
		f.sink.Ended(id)
	}
}

// take hands the sink a record if it is sent under the lease held now
// of its thread or a thread above it; it ignores any other.
func (f *follower) take(m *nats.Msg) {
	i := strings.LastIndexByte(m.Subject, '.')
	raw, err := hex.DecodeString(m.Subject[i+1:])
	if err != nil {
		return
	}
	id := string(raw)
	root, lease := m.Header.Get(progressHeld), m.Header.Get(progressLease)
	dropped := 0
	if d := m.Header.Get(progressDropped); d != "" {
		if dropped, err = strconv.Atoi(d); err != nil || dropped < 0 || dropped > maxProgressDropped {
			return
		}
	}
	if thread.ValidateID(id) != nil || lease == "" || (id != root && !strings.HasPrefix(id, root+".")) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	f.expire(now)
	if len(m.Data) > maxProgressRecord {
		f.drop(id, root, lease, now) // told only if the lease is seen held
		return
	}
	if f.held[root] != lease {
		f.wait(waitingRecord{id: id, root: root, lease: lease, data: m.Data, dropped: dropped, until: now.Add(f.waitFor)})
		return
	}
	f.sink.Progress(id, m.Data, f.lostBefore(id, root, lease, dropped))
}

// wait keeps r until its lease is seen held, unless the records kept
// are at their bound: then r is dropped. f.mu is held.
func (f *follower) wait(r waitingRecord) {
	if len(f.waiting) >= followWait || f.waitingBytes+len(r.data) > followWaitBytes {
		f.drop(r.id, r.root, r.lease, time.Now())
		return
	}
	f.waiting = append(f.waiting, r)
	f.waitingBytes += len(r.data)
}

// release hands the sink, in the order they came, the records kept of
// root's lease, now seen held, and drops those whose time ran out.
// f.mu is held.
func (f *follower) release(root, lease string, now time.Time) {
	if len(f.waiting) == 0 {
		return
	}
	kept := f.waiting[:0]
	size := 0
	for _, r := range f.waiting {
		switch {
		case now.After(r.until):
			f.drop(r.id, r.root, r.lease, now)
		case r.root == root && r.lease == lease:
			f.sink.Progress(r.id, r.data, f.lostBefore(r.id, root, lease, r.dropped))
		default:
			kept = append(kept, r)
			size += len(r.data)
		}
	}
	clear(f.waiting[len(kept):])
	f.waiting, f.waitingBytes = kept, size
}

// expire drops the kept records whose time ran out. f.mu is held.
func (f *follower) expire(now time.Time) {
	n := 0
	for n < len(f.waiting) && now.After(f.waiting[n].until) {
		r := f.waiting[n]
		f.waitingBytes -= len(r.data)
		f.drop(r.id, r.root, r.lease, now)
		n++
	}
	for k, c := range f.lost {
		if now.After(c.until) {
			delete(f.lost, k)
		}
	}
	if n > 0 {
		clear(f.waiting[:n])
		f.waiting = f.waiting[n:]
	}
}
