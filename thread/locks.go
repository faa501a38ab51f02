package thread

import (
	"context"
	"hash/maphash"
	"sync"
)

// threadLocks serializes the appends of each thread and nothing else: two
// appends to one thread take turns, appends to different threads never wait
// for each other. An entry lives only while someone holds or waits for it,
// so the maps stay as small as the number of threads being appended to.
//
// The entries are spread over lockShards shards by a hash of the thread's
// id, each with its own mutex: the appends of a group commit all unlock
// when it ends, at once, and one mutex for all would make them queue.
type threadLocks struct {
	shards [lockShards]lockShard
}

// lockShards is the number of shards of threadLocks.
const lockShards = 32

// lockSeed spreads thread ids over the shards of threadLocks and of
// hotThreads. Only which shard holds an entry depends on it.
var lockSeed = maphash.MakeSeed()

// lockShard is one shard of threadLocks.
type lockShard struct {
	mu sync.Mutex // guards m, spare and the refs of every entry
	m  map[string]*threadLock
	// spare holds entries released, for the next threads to lock: a
	// thread appended to by one writer at a time makes and drops its
	// entry on every append, and would allocate one each time.
	spare []*threadLock
	_     [64]byte // keeps shards' mutexes off one another's cache lines
}

// maxSpareLocks bounds lockShard.spare.
const maxSpareLocks = 16

type threadLock struct {
	// ch holds a token while the lock is held; a channel rather than a
	// mutex so that waiting can give up when the context is done.
	ch   chan struct{}
	refs int // holders and waiters, guarded by the shard's mu
}

func (l *threadLocks) shard(id string) *lockShard {
	return &l.shards[maphash.String(lockSeed, id)%lockShards]
}

// lock waits for id's lock and returns it, for unlock to release.
func (l *threadLocks) lock(ctx context.Context, id string) (*threadLock, error) {
	sh := l.shard(id)
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[string]*threadLock)
	}
	tl := sh.m[id]
	if tl == nil {
		if n := len(sh.spare); n > 0 {
			tl, sh.spare = sh.spare[n-1], sh.spare[:n-1]
		} else {
			tl = &threadLock{ch: make(chan struct{}, 1)}
		}
		sh.m[id] = tl
	}
	tl.refs++
	sh.mu.Unlock()

	select {
	case tl.ch <- struct{}{}:
		return tl, nil
	case <-ctx.Done():
		sh.release(id, tl)
		return nil, ctx.Err()
	}
}

// unlock releases id's lock tl, which lock returned.
func (l *threadLocks) unlock(id string, tl *threadLock) {
	<-tl.ch
	l.shard(id).release(id, tl)
}

func (sh *lockShard) release(id string, tl *threadLock) {
	sh.mu.Lock()
	tl.refs--
	if tl.refs == 0 {
		delete(sh.m, id)
		// No one holds it (its token is out) or waits for it: it can
		// serve the next thread as it is.
		if len(sh.spare) < maxSpareLocks {
			sh.spare = append(sh.spare, tl)
		}
	}
	sh.mu.Unlock()
}
