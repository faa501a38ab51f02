package thread

import "sync"

// maxCachedHeads bounds the head cache: past it the cache starts over.
const maxCachedHeads = 1 << 14

// headCache remembers the head each append committed, so that the next
// append to the thread need not read the head record back from Pebble.
//
// It is sound because nothing else writes head records: this process holds
// the store's directory lock, and every write of a head record goes through
// Append under the thread's lock, which is also the only reader. An entry
// is set only after its batch committed and dropped when a commit fails, so
// the cache never runs ahead of the database. Reads other than Append's
// (Head, Threads, Verify) go to Pebble.
type headCache struct {
	mu sync.Mutex
	m  map[string]Head
}

// get returns thread's cached head, if there is one.
func (c *headCache) get(thread string) (Head, bool) {
	c.mu.Lock()
	h, ok := c.m[thread]
	c.mu.Unlock()
	return h, ok
}

// set records thread's head after a committed append.
func (c *headCache) set(thread string, h Head) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedHeads {
		c.m = make(map[string]Head)
	}
	c.m[thread] = h
	c.mu.Unlock()
}

// drop forgets thread's head.
func (c *headCache) drop(thread string) {
	c.mu.Lock()
	delete(c.m, thread)
	c.mu.Unlock()
}
