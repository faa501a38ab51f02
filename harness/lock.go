package harness

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/thread"
)

// Within one process a thread is acted on (resumed, undone) by one holder
// at a time. Across processes the store's expected-head appends decide who
// goes first; within one, the lock also keeps a runtime from taking
// another's action in progress (action.started, not yet completed) for one
// left in doubt by a crash — in a process that holds the lock, a started
// action with no completion can only be one whose process died. A store
// that processes share (a thread.Leaser) extends that across them with a
// lease, taken after the lock (see lease).
//
// The locks are keyed by the backing store (thread.Store.Backing, which a
// wrapper that embeds a store gets from it) and the thread, counted, and
// dropped when no one holds or waits for them. A store whose type cannot
// be a map key is keyed by the thread alone: that serializes more than
// needed, never less.
var resuming = threadLocks{m: map[lockKey]*threadLock{}}

type lockKey struct {
	store thread.Store
	id    string
}

type threadLock struct {
	ch   chan struct{} // holds one token while the thread is held
	refs int
}

type threadLocks struct {
	mu sync.Mutex // guards m and the refs of every entry
	m  map[lockKey]*threadLock
}

// lock waits until the thread is free or ctx is done, and returns the
// function that frees it. With wait false it does not wait: a thread held
// by another is errHeld.
func (l *threadLocks) lock(ctx context.Context, store thread.Store, id string, wait bool) (func(), error) {
	k := lockKey{backing(store), id}
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
	if !wait {
		select {
		case tl.ch <- struct{}{}:
			return func() { <-tl.ch; release() }, nil
		default:
			release()
			return nil, errHeld
		}
	}
	select {
	case tl.ch <- struct{}{}:
		return func() { <-tl.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// errHeld: a thread another holder has.
var errHeld = errors.New("the thread is held")

// backing is the store s keeps its logs in, or nil for one whose dynamic
// type is not comparable.
func backing(s thread.Store) thread.Store {
	if b := s.Backing(); b != nil {
		s = b
	}
	if !reflect.TypeOf(s).Comparable() {
		return nil
	}
	return s
}

// lease takes the thread's lease when the store is shared between
// processes (a thread.Leaser): see thread.Leaser. The outermost Leaser
// counts — the store itself, a store it wraps (a wrapper that says what
// it wraps with Unwrap() thread.Store), or its backing store: a wrapper
// may lease, or leave leasing to what it wraps. It returns ctx unchanged,
// and a release that does nothing, for a store that leases nothing.
func lease(ctx context.Context, store thread.Store, id string) (context.Context, func(), error) {
	for s := range layers(store) {
		if l, ok := s.(thread.Leaser); ok {
			return l.Lease(ctx, id)
		}
	}
	return ctx, func() {}, nil
}

// layers yields s, each store it wraps (through Unwrap() thread.Store),
// outermost first, and then its backing store.
func layers(s thread.Store) iter.Seq[thread.Store] {
	return func(yield func(thread.Store) bool) {
		for cur := s; cur != nil; {
			if !yield(cur) {
				return
			}
			u, ok := cur.(interface{ Unwrap() thread.Store })
			if !ok {
				break
			}
			cur = u.Unwrap()
		}
		if b := s.Backing(); b != nil {
			yield(b)
		}
	}
}

// Hold holds the thread as acting on it requires: this process's lock,
// then, on a shared store, the thread's lease. It waits while another
// holds either, and returns the context to act under (ended if the lease
// is lost) and the function that lets go of both.
//
// The context Hold returns holds the thread: a Hold of the same thread
// (on the same backing store) under it, or under a context derived from
// it, returns at once, holding nothing more, and its release does
// nothing. So a caller that holds a thread for longer than one call — a
// worker driving it from one look to the next — can call Resume, which
// holds the thread itself, under the context it holds it with.
func Hold(ctx context.Context, store thread.Store, id string) (context.Context, func(), error) {
	k, reentrant := heldKeyOf(store, id)
	if reentrant && ctx.Value(k) != nil {
		return ctx, func() {}, nil
	}
	unlock, err := resuming.lock(ctx, store, id, true)
	if err != nil {
		return nil, nil, fmt.Errorf("waiting for another holder of the thread: %w", err)
	}
	held, release, err := lease(ctx, store, id)
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("waiting for the thread's lease: %w", err)
	}
	if reentrant {
		held = context.WithValue(held, k, true)
	}
	return held, func() { release(); unlock() }, nil
}

// heldKey marks the context of a Hold: the thread is held under it.
type heldKey lockKey

// heldKeyOf is the mark of a Hold of the thread id of store; a store whose
// type cannot be a map key has none (a Hold under a Hold of it waits, as
// before, rather than mistake another store's thread for this one).
func heldKeyOf(store thread.Store, id string) (heldKey, bool) {
	b := backing(store)
	return heldKey{b, id}, b != nil
}

// freeProbe bounds the wait of Free for a lease: a lease that is free is
// taken in one round trip; one that is held makes Free wait this long.
const freeProbe = 300 * time.Millisecond

// Free reports whether nobody holds the thread now: no runtime of this
// process, and, on a shared store, no process's lease. It takes both
// without waiting (a lease for at most a moment) and gives them back at
// once. An action that started and has no completion is in doubt only if
// the thread is free: otherwise its holder may still be running it.
//
// Under a context that holds the thread (see Hold) the caller is its
// holder, and no one else can hold it: Free reports true, since an action
// started and not completed is then no call of the caller's own that is
// still running (a holder looks between its calls).
func Free(ctx context.Context, store thread.Store, id string) (bool, error) {
	if k, ok := heldKeyOf(store, id); ok && ctx.Value(k) != nil {
		return true, nil
	}
	unlock, err := resuming.lock(ctx, store, id, false)
	if errors.Is(err, errHeld) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unlock()
	probe, cancel := context.WithTimeout(ctx, freeProbe)
	defer cancel()
	_, release, err := lease(probe, store, id)
	switch {
	case err == nil:
		release()
		return true, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		return false, nil
	}
	return false, fmt.Errorf("look at the thread's lease: %w", err)
}

// tryHold is Hold without waiting for another holder: ok is false, and
// nothing is held, when another runtime of this process or (on a shared
// store) another process holds the thread. A lease is waited for at most
// freeProbe, as Free waits.
func tryHold(ctx context.Context, store thread.Store, id string) (held context.Context, release func(), ok bool, err error) {
	k, reentrant := heldKeyOf(store, id)
	if reentrant && ctx.Value(k) != nil {
		return ctx, func() {}, true, nil
	}
	unlock, err := resuming.lock(ctx, store, id, false)
	if errors.Is(err, errHeld) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	// The probe's bound must not end the lease once it is taken: the
	// timer cancels the probe only while the lease is waited for.
	probe, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(freeProbe, cancel)
	held, releaseLease, err := lease(probe, store, id)
	if !timer.Stop() || err != nil {
		if err == nil {
			releaseLease() // taken as the probe ran out: its context is ended
		}
		cancel()
		unlock()
		switch {
		case ctx.Err() != nil:
			return nil, nil, false, ctx.Err()
		case err == nil, errors.Is(err, context.Canceled):
			return nil, nil, false, nil
		}
		return nil, nil, false, fmt.Errorf("take the thread's lease: %w", err)
	}
	if reentrant {
		held = context.WithValue(held, k, true)
	}
	return held, func() { releaseLease(); cancel(); unlock() }, true, nil
}
