package natsstore

import (
	"container/list"
	"context"
	"maps"
	"sync"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// The store's cache of threads: for each thread it has read, a view of the
// log derived from the log alone — the last record it folded in, the head
// after it, every cause with its first seq, and where each record is — so
// that an append checks its causes against the whole log without reading
// it, and publishes expecting the subject's last message to be the view's
// last record. The server refuses the publish if the thread has a record
// the view lacks, and the view catches up from the log; so the check is
// always against the log the append is stored after, and the cache cannot
// disagree with the log: it is nothing but a reading of it.

// DefaultCache is how many facts the store's cache of threads holds at
// most by default (see WithCache).
const DefaultCache = 1 << 18

// recPos is where a record is: the seq of its last fact, its stream seq.
type recPos struct{ last, seq uint64 }

// view is a reading of a thread's log up to a record.
type view struct {
	seq    uint64      // the stream seq of the last record read, 0 for none
	head   thread.Head // the head after it
	causes map[string]uint64
	recs   []recPos

	// The causes of a record being read, kept apart until it is read
	// whole.
	pending []causeAt
	// partial: the view goes on from the record at stream seq base (see
	// tail); else it is a view from the thread's first record.
	partial bool
	base    uint64
}

type causeAt struct {
	cause string
	seq   uint64
}

// newView returns an empty view of id, with room for about n causes.
func newView(id string, n uint64) *view {
	return &view{head: thread.Head{Thread: id}, causes: make(map[string]uint64, min(n, 1<<16))}
}

// tail returns an empty view that goes on from v's last record, for a
// read to fill and merge back.
func (v *view) tail() *view {
	return &view{seq: v.seq, head: v.head, causes: map[string]uint64{}, partial: true, base: v.seq}
}

// begin starts reading record r into v: r must start right after v's head.
func (v *view) begin(id string, r *record) error {
	if r.first != v.head.Seq+1 {
		return corrupt(id, r.first, "the record at stream seq %d starts at seq %d, but the record before ends at seq %d", r.seq, r.first, v.head.Seq)
	}
	v.pending = v.pending[:0]
	return nil
}

// add reads fact f of record r into v.
func (v *view) add(id string, r *record, f facts.Fact) error {
	if f.Seq == r.first && f.Prev != v.head.Hash {
		return corrupt(id, f.Seq, "prev is %s, but seq %d hashes to %s", f.Prev, f.Seq-1, v.head.Hash)
	}
	v.pending = append(v.pending, causeAt{f.Cause, f.Seq})
	return nil
}

// end finishes reading record r into v. A cause keeps the seq of its
// first fact.
func (v *view) end(r *record) {
	for _, c := range v.pending {
		if _, ok := v.causes[c.cause]; !ok {
			v.causes[c.cause] = c.seq
		}
	}
	v.pending = v.pending[:0]
	v.seq, v.head = r.seq, r.head(v.head.Thread)
	v.recs = append(v.recs, recPos{last: r.last(), seq: r.seq})
}

// appended adds to v the record of an append of drafts stored at stream
// seq seq, with head next after it.
func (v *view) appended(seq uint64, next thread.Head, drafts []facts.Draft) {
	for i, d := range drafts {
		if _, ok := v.causes[d.Cause]; !ok {
			v.causes[d.Cause] = v.head.Seq + 1 + uint64(i)
		}
	}
	v.seq, v.head = seq, next
	v.recs = append(v.recs, recPos{last: next.Seq, seq: seq})
}

// tstate is the cache's entry of one thread.
type tstate struct {
	id string
	// mu guards loaded and v. It is held while the view catches up with
	// the log (network reads), never while appending or while a read
	// yields.
	mu     sync.Mutex
	loaded bool // v is a view of the log from its first record
	v      *view

	elem *list.Element // in cache.lru; guarded by cache.mu
	size int           // facts counted for it; guarded by cache.mu
}

// cache holds the views of the threads most recently used, up to limit
// facts in all (and always the one in use).
type cache struct {
	mu    sync.Mutex // guards m, lru, facts and every tstate's elem
	m     map[string]*tstate
	lru   list.List // of *tstate, most recent first
	facts int
	limit int
}

func newCache(limit int) *cache { return &cache{m: map[string]*tstate{}, limit: limit} }

// get returns id's entry, making an empty one if need be.
func (c *cache) get(id string) *tstate {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[id]
	if !ok {
		st = &tstate{id: id, v: newView(id, 0)}
		st.elem = c.lru.PushFront(st)
		c.m[id] = st
		return st
	}
	c.lru.MoveToFront(st.elem)
	return st
}

// resize records that st's view now holds n facts, and evicts the least
// recently used entries but st while the cache holds more than its limit.
// st.mu is held.
func (c *cache) resize(st *tstate, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[st.id] != st {
		return // evicted meanwhile: st is used once more and dropped
	}
	c.facts += n - st.size
	st.size = n
	for c.facts > c.limit {
		e := c.lru.Back()
		old := e.Value.(*tstate)
		if old == st {
			break
		}
		c.lru.Remove(e)
		delete(c.m, old.id)
		c.facts -= old.size
	}
}

// merge adds a view that a read filled to st, if st is still where the
// view started (or, for a whole view, if st has none yet).
func (c *cache) merge(st *tstate, v *view) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case !v.partial && !st.loaded:
		st.v, st.loaded = v, true
	case v.partial && st.loaded && st.v.seq == v.base:
		maps.Copy(st.v.causes, v.causes)
		st.v.recs = append(st.v.recs, v.recs...)
		st.v.seq, st.v.head = v.seq, v.head
	default:
		return
	}
	c.resize(st, int(st.v.head.Seq))
}

// refresh brings st's view up to id's last record, reading the records it
// lacks, and returns that record (nil for a thread with none). st.mu is
// held.
func (s *Store) refresh(ctx context.Context, st *tstate) (*record, error) {
	last, err := s.lastRecord(ctx, st.id)
	if err != nil {
		return nil, err
	}
	if err := s.catchUp(ctx, st, last); err != nil {
		return nil, err
	}
	return last, nil
}

// catchUp brings st's view up to record last (nil: the thread has none).
// st.mu is held.
func (s *Store) catchUp(ctx context.Context, st *tstate, last *record) error {
	id := st.id
	switch {
	case last == nil:
		if st.loaded && st.v.seq != 0 {
			return corrupt(id, 0, "the thread's records up to stream seq %d are gone", st.v.seq)
		}
		st.loaded, st.v = true, newView(id, 0)
		return nil
	case st.loaded && last.seq == st.v.seq:
		return nil
	case st.loaded && last.seq < st.v.seq:
		// The stream holds less than this store read: it was made anew.
		st.loaded = false
	}
	if !st.loaded {
		st.v = newView(id, last.last())
	}
	v := st.v
	fold := func(r *record) error {
		if err := v.begin(id, r); err != nil {
			return err
		}
		if err := s.readFacts(ctx, id, r, r.first, func(f facts.Fact) error { return v.add(id, r, f) }); err != nil {
			return err
		}
		v.end(r)
		return nil
	}
	var err error
	if st.loaded && last.first == v.head.Seq+1 {
		err = fold(last) // the one record the view lacks
	} else {
		err = s.scan(ctx, id, v.seq+1, last.seq, last.last()-v.head.Seq <= fewFacts, fold)
	}
	// The view holds whole records only, so even a failed catch-up leaves
	// a view of the log (up to where it got).
	st.loaded = true
	s.cache.resize(st, int(v.head.Seq))
	return err
}
