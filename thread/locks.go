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
	mu sync.Mutex // guards m and the refs of every entry
	m  map[string]*threadLock
}

type threadLock struct {
	// ch holds a token while the lock is held; a channel rather than a
	// mutex so that waiting can give up when the context is done.
	ch   chan struct{}
	refs int // holders and waiters, guarded by threadLocks.mu
}

// lock waits for id's lock and returns the function that releases it.
func (l *threadLocks) lock(ctx context.Context, id string) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*threadLock)
	}
	tl := l.m[id]
	if tl == nil {
		tl = &threadLock{ch: make(chan struct{}, 1)}
		l.m[id] = tl
	}
	tl.refs++
	l.mu.Unlock()

	select {
	case tl.ch <- struct{}{}:
		return func() {
			<-tl.ch
			l.release(id, tl)
		}, nil
	case <-ctx.Done():
		l.release(id, tl)
		return nil, ctx.Err()
	}
}

func (l *threadLocks) release(id string, tl *threadLock) {
	l.mu.Lock()
	tl.refs--
	if tl.refs == 0 {
		delete(l.m, id)
	}
	l.mu.Unlock()
}
