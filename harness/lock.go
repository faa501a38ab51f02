package harness

import (
	"context"
	"sync"

	"github.com/seed-7cc7a084/harness/thread"
)

// Within one process a thread is resumed by one runtime at a time. Across
// processes the store's expected-head appends decide who goes first; within
// one, the lock also keeps a runtime from taking another's action in
// progress (action.started, not yet completed) for one left in doubt by a
// crash — in a process that holds the lock, a started action with no
// completion can only be one whose process died.
//
// The locks are keyed by store and thread, counted, and dropped when no
// runtime holds or waits for them.
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
	k := lockKey{store, id}
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
