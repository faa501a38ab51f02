package harness

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"sync"

	"github.com/seed-7cc7a084/harness/thread"
)

// Within one process a thread is resumed by one runtime at a time. Across
// processes the store's expected-head appends decide who goes first; within
// one, the lock also keeps a runtime from taking another's action in
// progress (action.started, not yet completed) for one left in doubt by a
// crash — in a process that holds the lock, a started action with no
// completion can only be one whose process died. A store that processes
// share (a thread.Leaser) extends that across them with a lease, taken
// after the lock (see lease).
//
// The locks are keyed by the underlying store (wrappers that implement
// Unwrap() thread.Store are seen through) and the thread, counted, and
// dropped when no runtime holds or waits for them. A store whose type
// cannot be a map key is keyed by the thread alone: that serializes more
// than needed, never less.
var resuming = threadLocks{m: map[lockKey]*threadLock{}}

type lockKey struct {
	store thread.Store
	id    string
}

type threadLock struct {
	ch   chan struct{} // holds one token while the thread is resumed
	refs int
}

type threadLocks struct {
	mu sync.Mutex
	m  map[lockKey]*threadLock
}

// lock waits until the thread is free or ctx is done, and returns the
// function that frees it.
func (l *threadLocks) lock(ctx context.Context, store thread.Store, id string) (func(), error) {
	k := lockKey{underlying(store), id}
	l.mu.Lock()
	tl := l.m[k]
	if tl == nil {
		tl = &threadLock{ch: make(chan struct{}, 1)}
		l.m[k] = tl
	}
	tl.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		tl.refs--
		if tl.refs == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
	select {
	case tl.ch <- struct{}{}:
		return func() { <-tl.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// underlying sees through store wrappers to the store they wrap, and
// returns nil for a store whose dynamic type is not comparable.
func underlying(s thread.Store) thread.Store {
	s = unwrapStore(s)
	if s == nil || !reflect.TypeOf(s).Comparable() {
		return nil
	}
	return s
}

// wrapped yields s and each store it wraps (types with
// Unwrap() thread.Store), outermost first.
func wrapped(s thread.Store) iter.Seq[thread.Store] {
	return func(yield func(thread.Store) bool) {
		for s != nil && yield(s) {
			u, ok := s.(interface{ Unwrap() thread.Store })
			if !ok {
				return
			}
			s = u.Unwrap()
		}
	}
}

// unwrapStore sees through store wrappers to the innermost store.
func unwrapStore(s thread.Store) thread.Store {
	for inner := range wrapped(s) {
		s = inner
	}
	return s
}

// lease takes the thread's lease when the store is shared between
// processes (a thread.Leaser): see thread.Leaser. The outermost Leaser
// counts: a wrapper may lease, or pass leasing through. It returns ctx
// unchanged, and a release that does nothing, for a store that leases
// nothing.
func lease(ctx context.Context, store thread.Store, id string) (context.Context, func(), error) {
	for s := range wrapped(store) {
		if l, ok := s.(thread.Leaser); ok {
			return l.Lease(ctx, id)
		}
	}
	return ctx, func() {}, nil
}

// hold holds the thread as acting on it requires: this process's lock,
// then, on a shared store, the thread's lease. It returns the context to
// act under (ended if the lease is lost) and the function that lets go of
// both.
func hold(ctx context.Context, store thread.Store, id string) (context.Context, func(), error) {
	unlock, err := resuming.lock(ctx, store, id)
	if err != nil {
		return nil, nil, fmt.Errorf("waiting for another resume of the thread: %w", err)
	}
	held, release, err := lease(ctx, store, id)
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("waiting for the thread's lease: %w", err)
	}
	return held, func() { release(); unlock() }, nil
}
