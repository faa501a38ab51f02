package thread

import (
	"hash/maphash"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// maxHotThreads bounds the cache of threads being appended to: past it
// the cache starts over (each shard of it, past its share).
const maxHotThreads = 1 << 14

// hotAfter is how many appends in this process make a thread hot enough
// to be worth a cause filter: a command that appends once or twice never
// pays for the scan that builds one.
const hotAfter = 8

// hotThreads remembers, for each thread this store appends to, what the
// next append would otherwise read back from Pebble: the head its last
// append committed, and a filter of the causes the thread has used.
//
// It is sound because nothing else writes head records or the cause
// index: this process holds the store's directory lock, and every write of
// either goes through Append under the thread's lock, which is also the
// only user of an entry. An entry's head is updated only after its batch
// committed, and the entry is dropped when a commit fails, so its head
// never runs ahead of the database. Its cause filter may: Append adds a
// cause as it checks it, before the commit, and an append that then fails
// leaves a cause the thread does not have, which costs a lookup, never a
// missed duplicate. Reads other than Append's (Head, Threads, Verify) go
// to Pebble.
//
// Its entries are spread over shards as threadLocks' are, each shard
// with its own mutex and at most maxHotThreads/hotShards entries.
type hotThreads struct {
	shards [hotShards]hotShard
}

// hotShards is the number of shards of hotThreads.
const hotShards = 32

// hotShard is one shard of hotThreads.
type hotShard struct {
	mu sync.Mutex // guards m (each entry is its appender's alone)
	m  map[string]*hotThread
	_  [64]byte // keeps shards' mutexes off one another's cache lines
}

// causeSeed seeds the hashes of every cause filter.
var causeSeed = maphash.MakeSeed()

// hotThread is one thread's entry. Only Append, under the thread's lock,
// reads or changes it.
type hotThread struct {
	head    Head
	known   bool // head is the thread's head
	appends int
	// causes, when set, holds every cause the thread has used (and
	// perhaps some of appends that failed): a cause it does not hold is
	// new, and needs no lookup. A thread with no head record gets an
	// empty one at once (see newFreshFilter).
	causes *causeFilter
}

func (c *hotThreads) shard(thread string) *hotShard {
	return &c.shards[maphash.String(lockSeed, thread)%hotShards]
}

// entry returns thread's entry, making an empty one if there is none.
func (c *hotThreads) entry(thread string) *hotThread {
	sh := c.shard(thread)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m == nil || len(sh.m) >= maxHotThreads/hotShards {
		sh.m = make(map[string]*hotThread)
	}
	e := sh.m[thread]
	if e == nil {
		e = &hotThread{}
		sh.m[thread] = e
	}
	return e
}

// drop forgets thread.
func (c *hotThreads) drop(thread string) {
	sh := c.shard(thread)
	sh.mu.Lock()
	delete(sh.m, thread)
	sh.mu.Unlock()
}

// committed records an append that committed with head next (its causes
// are in e's filter, if it has one: Append adds them as it checks them).
// A hot thread gets a cause filter, built from the index (which now holds
// the append's causes too); a full filter is built again, twice the size.
func (c *hotThreads) committed(db *pebble.DB, thread string, e *hotThread, next Head) {
	e.head, e.known = next, true
	e.appends++
	if e.causes != nil {
		if !e.causes.full() {
			return
		}
		e.causes = nil
	} else if e.appends < hotAfter {
		return
	}
	e.causes = buildCauseFilter(db, thread, causeSeed)
}

// freshCauses is how many causes the filter of a thread found empty has
// room for. It needs no scan to build (it starts empty, as the thread's
// index is), so a thread's first appends need no lookups either; it is
// small (128 bytes), since most such threads get a few appends, and once
// full it is built from the index, as any full filter.
const freshCauses = 64

// newFreshFilter returns the cause filter of a thread that has no facts.
func newFreshFilter() *causeFilter { return newCauseFilter(freshCauses, causeSeed) }

// buildCauseFilter reads thread's cause index into a filter with room for
// as many more. It returns nil if the index cannot be read: the appends go
// on looking causes up.
func buildCauseFilter(db *pebble.DB, thread string, seed maphash.Seed) *causeFilter {
	lower := causePrefix(thread)
	upper := causePrefix(thread)
	upper[len(upper)-1] = sep + 1
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil
	}
	var causes []string
	for ok := it.First(); ok; ok = it.Next() {
		causes = append(causes, string(it.Key()[len(lower):]))
	}
	if err := it.Close(); err != nil {
		return nil
	}
	f := newCauseFilter(max(2*len(causes), 1024), seed)
	for _, cause := range causes {
		f.add(cause)
	}
	return f
}

// causeFilter is a Bloom filter of causes: it may hold a cause it was
// never given (then the index is asked), never the other way round.
type causeFilter struct {
	bits []uint64
	n    int // causes added
	max  int // causes it was sized for
	seed maphash.Seed
}

const (
	filterBitsPerCause = 16 // with filterProbes, about 1 lookup in 400 for a new cause
	filterProbes       = 4
)

func newCauseFilter(max int, seed maphash.Seed) *causeFilter {
	words := (max*filterBitsPerCause + 63) / 64
	return &causeFilter{bits: make([]uint64, words), max: max, seed: seed}
}

// probe returns the first bit position of cause and the step between
// its filterProbes positions (double hashing).
func (f *causeFilter) probe(cause string) (bit, step, nbits uint64) {
	h := maphash.String(f.seed, cause)
	return h, h>>32 | h<<32 | 1, uint64(len(f.bits)) * 64
}

func (f *causeFilter) add(cause string) { f.addProbed(f.probe(cause)) }

// addProbed adds the cause whose probe returned bit, step and nbits.
func (f *causeFilter) addProbed(bit, step, nbits uint64) {
	for range filterProbes {
		b := bit % nbits
		f.bits[b/64] |= 1 << (b % 64)
		bit += step
	}
	f.n++
}

// addIfNew adds cause and reports true if the filter certainly did not
// hold it; it reports false, adding nothing, if it may have.
func (f *causeFilter) addIfNew(cause string) bool {
	bit, step, nbits := f.probe(cause)
	b := bit
	for range filterProbes {
		if i := b % nbits; f.bits[i/64]&(1<<(i%64)) == 0 {
			f.addProbed(bit, step, nbits)
			return true
		}
		b += step
	}
	return false
}

// mayHold reports whether cause may have been added; false is certain.
func (f *causeFilter) mayHold(cause string) bool {
	bit, step, nbits := f.probe(cause)
	for range filterProbes {
		b := bit % nbits
		if f.bits[b/64]&(1<<(b%64)) == 0 {
			return false
		}
		bit += step
	}
	return true
}

// full reports whether the filter holds as many causes as it was sized for.
func (f *causeFilter) full() bool { return f.n >= f.max }
