package serve

import (
	"context"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// hub tells the server's streams that a thread moved. Each watched thread
// has a channel that is closed at its next append (and replaced), so a
// stream that took the channel before it read cannot miss an append; any
// is closed at every append. moved collects the threads appended to
// since the search indexer last took them (see indexAppends).
type hub struct {
	// mu guards threads, any, lists, moved and the ch, watchers and seq
	// of every watched thread (its tail has a lock of its own).
	mu      sync.Mutex
	threads map[string]*watched
	any     chan struct{}
	lists   int // streams of the thread list
	moved   map[string]bool
}

type watched struct {
	ch       chan struct{}
	watchers int
	seq      uint64 // the head the poller last saw
	tail     tail
}

func newHub() *hub {
	return &hub{threads: map[string]*watched{}, any: make(chan struct{}), moved: map[string]bool{}}
}

// takeMoved returns the threads appended to since it was last called.
func (h *hub) takeMoved() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]string, 0, len(h.moved))
	for id := range h.moved {
		ids = append(ids, id)
	}
	clear(h.moved)
	slices.Sort(ids)
	return ids
}

// putMoved gives back threads takeMoved returned and the indexer could
// not index.
func (h *hub) putMoved(ids []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if len(h.moved) < maxMoved {
			h.moved[id] = true
		}
	}
}

// watch counts a stream of the thread in, and returns the thread's tail
// and the function that counts the stream out.
func (h *hub) watch(id string) (*tail, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.threads[id]
	if w == nil {
		w = &watched{ch: make(chan struct{})}
		h.threads[id] = w
	}
	w.watchers++
	return &w.tail, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if w.watchers--; w.watchers == 0 {
			delete(h.threads, id)
		}
	}
}

// tail is the latest facts of a watched thread, read once for all its
// streams: the first stream that needs a new fact reads it from the
// store, and the others get it, and what it is encoded as, from here.
type tail struct {
	mu      sync.Mutex // guards entries and lo
	entries []*entry   // seqs lo, lo+1, …
	lo      uint64
}

// tailMax bounds the facts a tail keeps.
const tailMax = 256

// entry is one fact of a tail, with its encodings made once.
type entry struct {
	fact facts.Fact
	mu   sync.Mutex // guards enc
	enc  map[string]string
}

// encoded is the fact as enc encodes it, made once per name.
func (e *entry) encoded(name string, enc func(facts.Fact) (string, error)) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.enc[name]; ok {
		return v, nil
	}
	v, err := enc(e.fact)
	if err != nil {
		return "", err
	}
	if e.enc == nil {
		e.enc = map[string]string{}
	}
	e.enc[name] = v
	return v, nil
}

// since returns the thread's facts from seq next to its head: those the
// tail has, and the newer ones read from the store (once, whoever asks
// first). A stream far behind reads the store itself first (see
// Server.streamThread), so the tail holds only the latest facts.
func (t *tail) since(ctx context.Context, store thread.Store, id string, next uint64) ([]*entry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hi := t.lo + uint64(len(t.entries)) // the first seq the tail does not have
	if len(t.entries) == 0 || next < t.lo || next > hi {
		t.entries, t.lo, hi = nil, next, next
	}
	for f, err := range store.Read(ctx, id, hi) {
		if err != nil {
			return nil, err
		}
		t.entries = append(t.entries, &entry{fact: f})
	}
	out := append([]*entry(nil), t.entries[next-t.lo:]...)
	if n := len(t.entries); n > tailMax {
		t.entries = append([]*entry(nil), t.entries[n-tailMax:]...)
		t.lo += uint64(n - tailMax)
	}
	return out, nil
}

// watchList counts a stream of the thread list in; the function returned
// counts it out.
func (h *hub) watchList() func() {
	h.mu.Lock()
	h.lists++
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.lists--
		h.mu.Unlock()
	}
}

// changed is closed at the thread's next append. The thread must be
// watched.
func (h *hub) changed(id string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.threads[id]; w != nil {
		return w.ch
	}
	return nil
}

// anyChanged is closed at the next append to any thread.
func (h *hub) anyChanged() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.any
}

// notify says that the thread moved.
func (h *hub) notify(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.moved) < maxMoved {
		h.moved[id] = true
	}
	if w := h.threads[id]; w != nil {
		close(w.ch)
		w.ch = make(chan struct{})
	}
	close(h.any)
	h.any = make(chan struct{})
}

// watching returns the threads streams watch and whether any stream
// watches the list: what the poller looks at.
func (h *hub) watching() (map[string]uint64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make(map[string]uint64, len(h.threads))
	for id, w := range h.threads {
		ids[id] = w.seq
	}
	return ids, h.lists > 0
}

// seen records the head the poller saw, and reports whether it moved.
func (h *hub) seen(id string, seq uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.threads[id]
	if w == nil || w.seq == seq {
		return false
	}
	// The first look counts as a move too: a stream may have read
	// before it, and a read again costs little.
	w.seq = seq
	return true
}

// notifying is the held store with every append told to the hub. It
// embeds the store, so it is the same store to harness.Hold.
type notifying struct {
	thread.Store
	hub *hub
	// work, when set, is told of every append (see Options.Work).
	work *socketstore.Work
}

// notifyingBlobs is notifying over a store that keeps blobs; keeping is
// one that also keeps a meta space and answers whether it keeps a blob
// (the Pebble store). What uses the server's store keeps contents in the
// held store's blobs as it would in the store's own.
type notifyingBlobs struct {
	*notifying
	action.Blobs
}

type keeping struct {
	*notifying
	action.Blobs
	action.Meta
	action.BlobChecker
}

// keepingNew is keeping over a store that can also keep bytes without
// looking first (action.NewBlobPutter), as the Pebble store can: the
// observer behind the server writes changed bytes as it would to the
// store itself.
type keepingNew struct {
	*keeping
	action.NewBlobPutter
}

// notify returns store with every append told to h, keeping what store
// keeps besides its threads.
func notifyAppends(store thread.Store, h *hub, work *socketstore.Work) thread.Store {
	n := &notifying{Store: store, hub: h, work: work}
	b, ok := store.(action.Blobs)
	if !ok {
		return n
	}
	m, okm := store.(action.Meta)
	c, okc := store.(action.BlobChecker)
	if okm && okc {
		k := &keeping{notifying: n, Blobs: b, Meta: m, BlobChecker: c}
		if p, ok := store.(action.NewBlobPutter); ok {
			return &keepingNew{keeping: k, NewBlobPutter: p}
		}
		return k
	}
	return &notifyingBlobs{notifying: n, Blobs: b}
}

// Unwrap returns the store it tells the hub about.
func (n *notifying) Unwrap() thread.Store { return n.Store }

// Append appends and, if the append succeeded, tells the hub.
func (n *notifying) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	h, err := n.Store.Append(ctx, id, after, drafts...)
	if err == nil {
		n.hub.notify(id)
		if n.work != nil {
			n.work.Appended(id, h, drafts)
		}
	}
	return h, err
}

// poll looks, every interval, at the heads of the threads streams watch
// (and at the list, if a stream watches it), and tells the hub of those
// that moved: the appends other processes made to a shared store.
func (s *Server) poll(interval time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	var listSum uint64
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		ids, list := s.hub.watching()
		for id := range ids {
			h, err := s.opts.Store.Head(s.ctx, id)
			if err == nil && s.hub.seen(id, h.Seq) {
				s.hub.notify(id)
			}
		}
		if !list {
			continue
		}
		sum := fnv.New64a()
		page := thread.ThreadsPage{}
		for {
			heads, err := s.opts.Store.Threads(s.ctx, page)
			if err != nil || len(heads) == 0 {
				break
			}
			for _, h := range heads {
				sum.Write([]byte(h.Thread))
				sum.Write(h.Hash[:])
			}
			page.After = heads[len(heads)-1].Thread
		}
		if v := sum.Sum64(); v != listSum {
			if listSum != 0 {
				s.hub.notifyAny()
			}
			listSum = v
		}
	}
}

// notifyAny says that some thread moved.
func (h *hub) notifyAny() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.any)
	h.any = make(chan struct{})
}
