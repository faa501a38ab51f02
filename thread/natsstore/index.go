package natsstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/thread"
)

// The thread index: every thread's id, in byte order, in the key-value
// bucket <stream>_THREADS, so that Threads reads what it returns and not
// every thread. JetStream lists keys in no order, so the bucket keeps a
// sorted structure of its own, a chain of leaves (a B-link list, after
// Lehman and Yao):
//
//	leaf.<name>   JSON {"low", "high", "next", "ids"}: the ids from low
//	              (inclusive) to high (exclusive; "" is no bound), sorted,
//	              at most leafSize of them; next names the leaf from high on.
//	              The first leaf is leaf.first, whose low is "".
//	root          JSON {"leaves": [{"low", "leaf"}, …]}: a hint, sorted by
//	              low, of where each leaf starts.
//
// Every write expects the key's revision as read. A leaf's low never
// changes and its high only ever comes down, when it splits: the split
// first creates the new leaf with the upper half (unreachable until
// linked), then updates the old leaf to the lower half linking to the new
// one, which makes it reachable — one write, so a reader always finds every
// id, in order, by following the chain. The root is updated last and may
// lag (or be lost with a crash): a reader that lands on a leaf too far
// left follows next. Leaves never merge; ids are never removed.
//
// Append adds a new thread's id before storing its first record, so the
// index never lacks a thread with facts; an id whose first append failed
// is listed without facts, and Threads skips it.

// leafSize is the most ids a leaf holds (about 33 KiB of JSON at the
// longest ids).
const leafSize = 256

const (
	rootKey   = "root"
	firstLeaf = "first"
)

// indexBucket names the threads bucket of a stream.
func indexBucket(stream string) string { return stream + "_THREADS" }

type leaf struct {
	Low  string   `json:"low"`
	High string   `json:"high"`
	Next string   `json:"next"`
	IDs  []string `json:"ids"`
}

type rootHint struct {
	Leaves []hint `json:"leaves"`
}

type hint struct {
	Low  string `json:"low"`
	Leaf string `json:"leaf"`
}

// find returns the leaf of the hint with the greatest low at most id.
func (r rootHint) find(id string) string {
	i := sort.Search(len(r.Leaves), func(i int) bool { return r.Leaves[i].Low > id })
	if i == 0 {
		return firstLeaf
	}
	return r.Leaves[i-1].Leaf
}

// index is the threads bucket.
type index struct {
	kv       jetstream.KeyValue
	leafSize int
	timeout  time.Duration

	mu   sync.Mutex // guards root
	root rootHint   // as last read

	reads atomic.Int64 // keys read, for the tests of what a page costs
}

// bindIndex opens the threads bucket of o's stream, creating it if need be.
func bindIndex(ctx context.Context, js jetstream.JetStream, o options) (*index, error) {
	name := indexBucket(o.stream)
	kv, err := js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      name,
			Description: "harness thread index: the thread ids of stream " + o.stream + ", in order",
			History:     1,
			Storage:     jetstream.FileStorage,
			Replicas:    o.replicas,
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, name) // created meanwhile by another store
		}
	}
	if err != nil {
		return nil, err
	}
	if kv, err = leaderGets(ctx, js, kv); err != nil {
		return nil, err
	}
	return &index{kv: kv, leafSize: leafSize, timeout: o.timeout}, nil
}

func (ix *index) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, ix.timeout)
}

// getLeaf reads leaf name and its revision; a missing first leaf is made.
func (ix *index) getLeaf(ctx context.Context, name string) (leaf, uint64, error) {
	ix.reads.Add(1)
	e, err := retry(ctx, func() (jetstream.KeyValueEntry, error) { return ix.kv.Get(ctx, "leaf."+name) })
	if errors.Is(err, jetstream.ErrKeyNotFound) && name == firstLeaf {
		v, _ := json.Marshal(leaf{IDs: []string{}})
		if _, err := retry(ctx, func() (uint64, error) { return ix.kv.Create(ctx, "leaf."+firstLeaf, v) }); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			return leaf{}, 0, fmt.Errorf("make the first leaf: %w", err)
		}
		e, err = retry(ctx, func() (jetstream.KeyValueEntry, error) { return ix.kv.Get(ctx, "leaf."+name) })
		// Made by another writer racing this one, whose create a
		// clustered stream refuses this one's for before it is applied:
		// it is there in a moment.
		for wait := time.Millisecond; errors.Is(err, jetstream.ErrKeyNotFound) && wait < time.Second; wait *= 2 {
			select {
			case <-ctx.Done():
				return leaf{}, 0, fmt.Errorf("leaf %s: %w", name, ctx.Err())
			case <-time.After(wait):
			}
			e, err = retry(ctx, func() (jetstream.KeyValueEntry, error) { return ix.kv.Get(ctx, "leaf."+name) })
		}
	}
	if err != nil {
		return leaf{}, 0, fmt.Errorf("leaf %s: %w", name, err)
	}
	var l leaf
	if err := json.Unmarshal(e.Value(), &l); err != nil {
		return leaf{}, 0, fmt.Errorf("leaf %s: %w: %w", name, thread.ErrCorrupt, err)
	}
	return l, e.Revision(), nil
}

// getRoot reads the root hint and its revision (0 if there is none yet).
func (ix *index) getRoot(ctx context.Context) (rootHint, uint64, error) {
	ix.reads.Add(1)
	e, err := retry(ctx, func() (jetstream.KeyValueEntry, error) { return ix.kv.Get(ctx, rootKey) })
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return rootHint{}, 0, nil
	}
	if err != nil {
		return rootHint{}, 0, fmt.Errorf("root: %w", err)
	}
	var r rootHint
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return rootHint{}, 0, fmt.Errorf("root: %w: %w", thread.ErrCorrupt, err)
	}
	ix.mu.Lock()
	ix.root = r
	ix.mu.Unlock()
	return r, e.Revision(), nil
}

// leafOf walks from the leaf the hint names to the one whose range holds
// id, and returns it with its name and revision.
func (ix *index) leafOf(ctx context.Context, r rootHint, id string) (string, leaf, uint64, error) {
	name := r.find(id)
	for hops := 0; ; hops++ {
		l, rev, err := ix.getLeaf(ctx, name)
		if err != nil {
			return "", leaf{}, 0, err
		}
		if l.High == "" || id < l.High {
			return name, l, rev, nil
		}
		if l.Next == "" || hops > 1<<20 {
			return "", leaf{}, 0, fmt.Errorf("leaf %s: %w: it ends at %q with no leaf after it", name, thread.ErrCorrupt, l.High)
		}
		name = l.Next
	}
}

// add puts id in the index, if it is not there yet.
func (ix *index) add(ctx context.Context, id string) error {
	ctx, cancel := ix.context(ctx)
	defer cancel()
	ix.mu.Lock()
	r := ix.root
	ix.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("thread index: %w", ctx.Err())
			case <-time.After(time.Duration(min(attempt, 20)) * time.Millisecond):
			}
		}
		name, l, rev, err := ix.leafOf(ctx, r, id)
		if err != nil {
			return fmt.Errorf("thread index: %w", err)
		}
		i, found := slices.BinarySearch(l.IDs, id)
		if found {
			return nil
		}
		l.IDs = slices.Insert(l.IDs, i, id)
		if len(l.IDs) <= ix.leafSize {
			v, _ := json.Marshal(l)
			if _, err := retry(ctx, func() (uint64, error) { return ix.kv.Update(ctx, "leaf."+name, v, rev) }); err == nil {
				return nil
			} else if !wrongLastSeq(err) {
				return fmt.Errorf("thread index: leaf %s: %w", name, err)
			}
			continue // written meanwhile: read it again
		}
		// Split: the upper half into a new leaf, then link it.
		half := len(l.IDs) / 2
		upper := leaf{Low: l.IDs[half], High: l.High, Next: l.Next, IDs: l.IDs[half:]}
		var raw [8]byte
		_, _ = rand.Read(raw[:])
		newName := hex.EncodeToString(raw[:])
		v, _ := json.Marshal(upper)
		if _, err := retry(ctx, func() (uint64, error) { return ix.kv.Create(ctx, "leaf."+newName, v) }); err != nil {
			return fmt.Errorf("thread index: split leaf %s: %w", name, err)
		}
		lower := leaf{Low: l.Low, High: upper.Low, Next: newName, IDs: l.IDs[:half]}
		v, _ = json.Marshal(lower)
		if _, err := retry(ctx, func() (uint64, error) { return ix.kv.Update(ctx, "leaf."+name, v, rev) }); err != nil {
			// The new leaf is unreachable: left as it is, it is never read.
			if !wrongLastSeq(err) {
				return fmt.Errorf("thread index: split leaf %s: %w", name, err)
			}
			continue
		}
		r = ix.hint(ctx, hint{Low: upper.Low, Leaf: newName})
		return nil
	}
}

// hint adds h to the root hint, trying a few times; a hint that is not
// written only makes readers follow one more link.
func (ix *index) hint(ctx context.Context, h hint) rootHint {
	for range 10 {
		r, rev, err := ix.getRoot(ctx)
		if err != nil {
			return r
		}
		i, found := slices.BinarySearchFunc(r.Leaves, h.Low, func(e hint, low string) int {
			switch {
			case e.Low < low:
				return -1
			case e.Low > low:
				return 1
			}
			return 0
		})
		if found {
			return r
		}
		r.Leaves = slices.Insert(r.Leaves, i, h)
		v, _ := json.Marshal(r)
		if rev == 0 {
			_, err = ix.kv.Create(ctx, rootKey, v)
		} else {
			_, err = ix.kv.Update(ctx, rootKey, v, rev)
		}
		if err == nil {
			ix.mu.Lock()
			ix.root = r
			ix.mu.Unlock()
			return r
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.root
}

// list returns at most limit ids after after, in order, and whether the
// index has none after them.
func (ix *index) list(ctx context.Context, after string, limit int) ([]string, bool, error) {
	ctx, cancel := ix.context(ctx)
	defer cancel()
	r, _, err := ix.getRoot(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("thread index: %w", err)
	}
	name := r.find(after)
	var out []string
	for {
		l, _, err := ix.getLeaf(ctx, name)
		if err != nil {
			return nil, false, fmt.Errorf("thread index: %w", err)
		}
		i, found := slices.BinarySearch(l.IDs, after)
		if found {
			i++
		}
		for _, id := range l.IDs[i:] {
			out = append(out, id)
			if len(out) == limit {
				return out, false, nil
			}
		}
		if l.Next == "" {
			return out, true, nil
		}
		name = l.Next
	}
}

// Threads returns a page of thread heads in id order; see thread.Store.
//
// It reads the index's root hint, the leaves that hold the page (a leaf
// holds up to 256 ids), and the head of each thread on it (one get each,
// eight at a time), so a page costs what it holds, however many threads
// there are. An id listed whose thread has no facts (its first append
// failed) is skipped.
func (s *Store) Threads(ctx context.Context, page thread.ThreadsPage) ([]thread.Head, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	defer s.leave()
	limit := page.Limit
	if limit <= 0 {
		limit = thread.DefaultPageLimit
	}
	out := make([]thread.Head, 0, min(limit, 1024))
	after := page.After
	for len(out) < limit {
		ids, end, err := s.index.list(ctx, after, limit-len(out))
		if err != nil {
			return nil, fmt.Errorf("list threads: %w", err)
		}
		heads, err := s.heads(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("list threads: %w", err)
		}
		out = append(out, heads...)
		if end || len(ids) == 0 {
			break
		}
		after = ids[len(ids)-1]
	}
	return out, nil
}

// heads returns the heads of the threads ids that have facts, in order.
func (s *Store) heads(ctx context.Context, ids []string) ([]thread.Head, error) {
	type result struct {
		head thread.Head
		ok   bool
		err  error
	}
	results := make([]result, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, id := range ids {
		if err := thread.ValidateID(id); err != nil {
			return nil, fmt.Errorf("thread index: %w: %w", thread.ErrCorrupt, err)
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r, err := s.lastRecord(ctx, id)
			switch {
			case err != nil:
				results[i].err = err
			case r != nil:
				results[i] = result{head: r.head(id), ok: true}
			}
		})
	}
	wg.Wait()
	out := make([]thread.Head, 0, len(ids))
	for _, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		if r.ok {
			out = append(out, r.head)
		}
	}
	return out, nil
}

// leaderGets makes the gets of bucket kv answered by its stream's leader
// only, and returns the bucket bound anew. A bucket is made with direct
// gets on, which any replica answers, one that lags too: a get right after
// a write, even one's own, could miss it, and the index (and a lease's
// holder) must read what was written.
//
// The bucket is bound anew even when direct gets were off already: kv
// may have been bound while they were on (another process had just made
// the bucket and not yet turned them off), and a binding keeps the way
// it gets by — direct gets, which nobody answers once they are off.
func leaderGets(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue) (jetstream.KeyValue, error) {
	name := "KV_" + kv.Bucket()
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := hasLeader(st.CachedInfo()); err != nil {
		return nil, err
	}
	if cfg := st.CachedInfo().Config; cfg.AllowDirect {
		cfg.AllowDirect = false
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return nil, fmt.Errorf("turn direct gets off on %s: %w", name, err)
		}
	}
	return js.KeyValue(ctx, kv.Bucket())
}
