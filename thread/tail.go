package thread

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/seed-7cc7a084/harness/facts"
)

// Tail reports the facts of the threads a front end drives as the store
// has them: every fact, each once, in seq order per thread — those its
// runtime appends (through a store Watch wraps), and those another
// process, or another runtime of this one, appends to the same threads
// meanwhile (a message from a second terminal, a raised budget, a stop
// asked for). Watch alone reports only its own appends.
//
// A thread is followed from its first append through a watched store:
// the facts after that append's expected head (the facts before were
// there when the front end came). Follow starts one earlier. A watched
// append reads the store from the thread's next unreported seq, so the
// facts others appended in between come first; Poll reads what they
// appended since, for a front end that waits (a long command, a model
// turn) while another process stops or steers the thread.
//
// Tail is safe for concurrent use: fn is called by one goroutine at a
// time.
type Tail struct {
	// mu guards what follows, and orders the calls of fn.
	mu sync.Mutex
	fn func(facts.Fact, error)
	// next is, per thread followed, the seq of the next fact to report.
	next map[string]uint64
	// order is the threads followed, in the order they were first seen:
	// Poll reads them so.
	order []string
	// store is the store last watched: Poll reads it.
	store Store
}

// NewTail returns a Tail that reports to fn each fact, or an error
// instead of one when the facts after an acknowledged append cannot be
// read (the append succeeded either way).
func NewTail(fn func(facts.Fact, error)) *Tail {
	return &Tail{fn: fn, next: map[string]uint64{}}
}

// Watch returns store with its appends reported (see Tail); Poll reads
// the store last watched. A front end that reopens its store watches the
// new one with the same Tail, and goes on where it was.
func (t *Tail) Watch(store Store) Store {
	t.mu.Lock()
	t.store = store
	t.mu.Unlock()
	return &tailed{Store: store, t: t}
}

// Follow follows thread id from the fact after seq after (the thread's
// head when the front end came to it), unless it is followed already.
func (t *Tail) Follow(id string, after uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.follow(id, after)
}

// follow is Follow under mu: it returns the next seq to report.
func (t *Tail) follow(id string, after uint64) uint64 {
	n, ok := t.next[id]
	if !ok {
		n = after + 1
		t.next[id] = n
		t.order = append(t.order, id)
	}
	return n
}

// Poll reports what was appended to the threads followed since it was
// last reported, reading the store last watched. A store closed meanwhile
// (released while a person is asked) reports nothing and is no error.
func (t *Tail) Poll(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.store == nil {
		return nil
	}
	var errs []error
	for _, id := range t.order {
		h, err := t.store.Head(ctx, id)
		switch {
		case errors.Is(err, ErrClosed) || errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("poll %s: %w", id, err))
			continue
		case h.Seq < t.next[id]:
			continue
		}
		if err := t.report(ctx, t.store, id, h.Seq); err != nil && !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// report reports the facts of id from its next seq to at least seq upto
// (more, if more were appended when the read began), and moves its next
// on; under mu.
func (t *Tail) report(ctx context.Context, store Store, id string, upto uint64) error {
	from := t.next[id]
	for f, err := range store.Read(ctx, id, from) {
		if err != nil {
			return fmt.Errorf("read %s from seq %d: %w", id, from, err)
		}
		if f.Seq < t.next[id] {
			continue
		}
		t.next[id] = f.Seq + 1
		t.fn(f, nil)
	}
	if t.next[id] <= upto {
		return fmt.Errorf("read %s from seq %d: the read ended at seq %d before the head at %d", id, from, t.next[id]-1, upto)
	}
	return nil
}

// tailed is a store whose appends a Tail reports.
type tailed struct {
	Store
	t *Tail
}

// Unwrap returns the store being watched (see watched.Unwrap).
func (w *tailed) Unwrap() Store { return w.Store }

// Append appends through the store and reports what the thread has
// since it was last reported, this append's facts last.
func (w *tailed) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (Head, error) {
	h, err := w.Store.Append(ctx, id, after, drafts...)
	if err != nil {
		return h, err
	}
	t := w.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.follow(id, after) > h.Seq {
		return h, nil // reported already, by a Poll since
	}
	// The append is acknowledged: read it back even if ctx is now done.
	if err := t.report(context.WithoutCancel(ctx), w.Store, id, h.Seq); err != nil {
		t.fn(facts.Fact{}, fmt.Errorf("read back %s after seq %d: %w", id, after, err))
	}
	return h, nil
}
