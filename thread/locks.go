package thread

import (
	"context"
	"sync"
)

// threadLocks serializes the appends of each thread and nothing else: two
// appends to one thread take turns, appends to different threads never wait
// for each other. An entry lives only while someone holds or waits for it,
// so the map stays as small as the number of threads being appended to.
type threadLocks struct {
	mu sync.Mutex // guards m, spare and the refs of every entry
	m  map[string]*threadLock
	// spare holds entries released, for the next threads to lock: a
	// thread appended to by one writer at a time makes and drops its
	// entry on every append, and would allocate one each time.
	spare []*threadLock
}

// maxSpareLocks bounds threadLocks.spare: as many as there are appends
// at once to different threads, in a busy process.
const maxSpareLocks = 256

type threadLock struct {
	// ch holds a token while the lock is held; a channel rather than a
	// mutex so that waiting can give up when the context is done.
	ch   chan struct{}
	refs int // holders and waiters, guarded by threadLocks.mu
}

// lock waits for id's lock and returns it, for unlock to release.
func (l *threadLocks) lock(ctx context.Context, id string) (*threadLock, error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*threadLock)
	}
	tl := l.m[id]
	if tl == nil {
		if n := len(l.spare); n > 0 {
			tl, l.spare = l.spare[n-1], l.spare[:n-1]
		} else {
			tl = &threadLock{ch: make(chan struct{}, 1)}
		}
		l.m[id] = tl
	}
	tl.refs++
	l.mu.Unlock()

	select {
	case tl.ch <- struct{}{}:
		return tl, nil
	case <-ctx.Done():
		l.release(id, tl)
		return nil, ctx.Err()
	}
}

// unlock releases id's lock tl, which lock returned.
func (l *threadLocks) unlock(id string, tl *threadLock) {
	<-tl.ch
	l.release(id, tl)
}

func (l *threadLocks) release(id string, tl *threadLock) {
	l.mu.Lock()
	tl.refs--
	if tl.refs == 0 {
		delete(l.m, id)
		// No one holds it (its token is out) or waits for it: it can
		// serve the next thread as it is.
		if len(l.spare) < maxSpareLocks {
			l.spare = append(l.spare, tl)
		}
	}
	l.mu.Unlock()
}
