package thread

import (
	"os"
	"sync"
)

// freeReadings shares readings of the disk's free space among appends
// that run at the same time, as Pebble's group commit shares one fsync
// among their batches: an append that finds a reading under way waits for
// the next one, which starts when that one ends and serves every append
// that arrived meanwhile. Each append still gets a reading taken after it
// asked — none is served from a cache — but 64 writers make a few
// statfs calls between them where they made 64.
type freeReadings struct {
	// dir is the store's directory, open for its life: a reading of an
	// open file's file system (fstatfs) skips the path walk of statfs,
	// which costs appends more than the reading does.
	dir *os.File

	mu      sync.Mutex   // guards running and queued
	running *freeReading // the reading under way, if any
	queued  *freeReading // the reading to start when it ends, if any
}

// statFree is freeBytes; tests count its calls.
var statFree = freeBytes

// freeReading is one statfs call and the appends waiting for it.
type freeReading struct {
	done chan struct{} // closed when free and ok are set
	free uint64
	ok   bool
}

// read returns freeBytes(f.dir), read after read was called.
func (f *freeReadings) read() (free uint64, ok bool) {
	f.mu.Lock()
	if q := f.queued; q != nil {
		f.mu.Unlock()
		<-q.done
		return q.free, q.ok
	}
	r := &freeReading{done: make(chan struct{})}
	if prev := f.running; prev != nil {
		// Under way since before this call: take the next reading, for
		// this call and for those that come while it waits.
		f.queued = r
		f.mu.Unlock()
		<-prev.done
		f.mu.Lock()
		f.queued = nil
	}
	f.running = r
	f.mu.Unlock()
	r.free, r.ok = statFree(f.dir)
	f.mu.Lock()
	f.running = nil
	f.mu.Unlock()
	close(r.done)
	return r.free, r.ok
}
