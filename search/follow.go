package search

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/thread"
)

// Follower keeps an index up to date with a store that other processes
// append to (a NATS store its workers share): told of each append's
// thread (Moved, from a feed of the store's appends), it waits for a
// burst to settle, opens the index, indexes the threads that moved
// (Index.UpdateThread), and closes it again, so that a search in another
// process on the machine can open it meanwhile. Every Sweep it brings the
// whole index up to date (Index.Update), which also catches what a feed
// missed. A search brings the index up to date itself in any case: a
// follower makes that update short.
type Follower struct {
	// Open opens the index, waiting at most wait for another process
	// that has it open (see Open).
	Open func(ctx context.Context, wait time.Duration) (*Index, error)
	// Store is the store followed.
	Store thread.Store
	// Settle is how long after an append the follower indexes (default
	// 250 ms); Sweep how often it updates the whole index (default 5
	// minutes; it does on start too).
	Settle, Sweep time.Duration
	// Logf, when set, is told of an error; the follower goes on.
	Logf func(format string, a ...any)
	// Indexed, when set, is told of each round's counts (tests).
	Indexed func(Stats)

	// mu guards moved.
	mu    sync.Mutex
	moved map[string]bool
	// kick has a value when threads moved and the loop has not looked.
	kick chan struct{}
	once sync.Once
}

// openWait is how long a round waits for an index another process has
// open (a search: short) before it gives up and tries again later.
const openWait = 2 * time.Second

// maxBackoff bounds the wait before a follower tries again an index it
// could not open or update.
const maxBackoff = 30 * time.Second

// maxFollowed bounds the threads a follower collects between rounds;
// past it the round updates the whole index instead.
const maxFollowed = 10000

func (f *Follower) init() {
	f.once.Do(func() {
		f.kick = make(chan struct{}, 1)
		f.moved = map[string]bool{}
	})
}

// Moved says thread id was appended to. It does not block.
func (f *Follower) Moved(id string) {
	f.init()
	f.mu.Lock()
	if len(f.moved) <= maxFollowed {
		f.moved[id] = true
	}
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Run follows until ctx ends; it returns nil then.
func (f *Follower) Run(ctx context.Context) error {
	f.init()
	settle, sweep := f.Settle, f.Sweep
	if settle <= 0 {
		settle = 250 * time.Millisecond
	}
	if sweep <= 0 {
		sweep = 5 * time.Minute
	}
	all := true // the first round updates the whole index
	failed := 0 // rounds failed in a row
	nextSweep := time.Now().Add(sweep)
	for {
		if !all {
			t := time.NewTimer(time.Until(nextSweep))
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-f.kick:
			case <-t.C:
				all = true
			}
			t.Stop()
			// Let the burst settle.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(settle):
			}
		}
		f.mu.Lock()
		ids := make([]string, 0, len(f.moved))
		for id := range f.moved {
			ids = append(ids, id)
		}
		if len(f.moved) > maxFollowed {
			all = true
		}
		clear(f.moved)
		f.mu.Unlock()
		slices.Sort(ids)
		if len(ids) == 0 && !all {
			continue
		}
		if !f.round(ctx, ids, all) {
			// Another process has the index, or it failed: try again,
			// later each time (up to maxBackoff).
			f.mu.Lock()
			for _, id := range ids {
				f.moved[id] = true
			}
			f.mu.Unlock()
			failed++
			wait := min(settle<<min(failed, 16), maxBackoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			select {
			case f.kick <- struct{}{}:
			default:
			}
			continue
		}
		failed = 0
		if all {
			all, nextSweep = false, time.Now().Add(sweep)
		}
	}
}

// round indexes the threads ids, or the whole store with all; false when
// it could not (the index another process's, or an error).
func (f *Follower) round(ctx context.Context, ids []string, all bool) bool {
	if ctx.Err() != nil {
		return true
	}
	ix, err := f.Open(ctx, openWait)
	if err != nil {
		if !errors.Is(err, ErrLocked) && ctx.Err() == nil && f.Logf != nil {
			f.Logf("search index: %v", err)
		}
		return false
	}
	defer ix.Close()
	var st Stats
	if all {
		st, err = ix.Update(ctx, f.Store)
	} else {
		for _, id := range ids {
			var s Stats
			if s, err = ix.UpdateThread(ctx, f.Store, id); err != nil {
				break
			}
			st.Threads += s.Threads
			st.Facts += s.Facts
			st.Rewritten += s.Rewritten
		}
	}
	if err != nil {
		if ctx.Err() == nil && f.Logf != nil {
			f.Logf("search index: %v", err)
		}
		return ctx.Err() != nil
	}
	if f.Indexed != nil {
		f.Indexed(st)
	}
	return true
}
