package thread

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
)

// Watch returns store with every successful append reported to fn: the
// appended facts, read back from store in order, before Append returns. A
// runtime given the watched store shows a thread's progress as it is
// written, and what it shows is the log itself, not a copy of the drafts.
//
// fn gets an error instead of a fact if the appended facts cannot be read
// back; the append itself has succeeded either way.
func Watch(store Store, fn func(facts.Fact, error)) Store {
	return &watched{Store: store, fn: fn}
}

type watched struct {
	Store
	fn func(facts.Fact, error)
}

// Unwrap returns the store being watched, so that a store it wraps that
// leases threads is found (see harness.Hold). Its Backing, embedded, is the
// watched store's: a runtime on the watched store and one on the store
// itself hold the same thread.
func (w *watched) Unwrap() Store { return w.Store }

// Append appends through the store and reports what was appended.
func (w *watched) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (Head, error) {
	h, err := w.Store.Append(ctx, id, after, drafts...)
	if err != nil {
		return h, err
	}
	// The append is acknowledged: read it back even if ctx is now done.
	rctx := context.WithoutCancel(ctx)
	for f, err := range w.Store.Read(rctx, id, after+1) {
		if err != nil {
			w.fn(facts.Fact{}, fmt.Errorf("read back %s after seq %d: %w", id, after, err))
			break
		}
		if f.Seq > h.Seq {
			break
		}
		w.fn(f, nil)
	}
	return h, nil
}
