package thread

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// ReaderCacheSize is the block cache for a store opened to read its logs
// through once (replay, verify, export, listing): such a reader walks each
// table block in key order and seldom comes back to one, so a cache the
// size of the tables (DefaultCacheSize, kept for a writer's lookups) would
// only hold every block it has passed — most of the resident memory of a
// `replay --verify` of a long log. Open such a store with
// WithCacheSize(ReaderCacheSize).
const ReaderCacheSize = 4 << 20

// A store opened read-only holds in memtables what its write-ahead log
// had not yet put in tables (a writer that closes leaves up to two of its
// 4 MiB memtables there), replayed as it opens. Pebble allocates each
// memtable whole, growing from 256 KiB to MemTableSize, and takes its size
// out of the block cache: with a writer's MemTableSize and a cache of
// ReaderCacheSize, a replayed tail of a few MiB left the cache no room,
// and every block was read and decompressed again at every look (1.8× the
// CPU of a verify). So a reader's memtables are at most
// readerMemTableSize, and its cache is opened readerMemTableRoom larger,
// the room the memtables do not take reserved (keepReaderCache): the
// blocks get the cache size asked for, whatever the tail was, up to a
// tail of readerMemTableRoom.
const (
	readerMemTableSize = 1 << 20
	readerMemTableRoom = 10 << 20
)

// keepReaderCache reserves, in cache, the part of readerMemTableRoom that
// db's memtables did not take, and returns the function that gives it
// back.
//
// What the memtables took is what Pebble reserved in the cache for them:
// the memtables it allocated, queued or not (MemTable.Size plus
// MemTable.ZombieSize, which Pebble computes as the reservation less
// Size; the sum wraps back to the reservation). MemTable.Size alone also
// counts the batches a replayed log is queued as, which live in the Go
// heap and take nothing from the cache: counted, they left the blocks
// that much more than asked (a 100,000-fact log's store: 6.3 MiB of
// blocks for the 4 MiB of ReaderCacheSize).
func keepReaderCache(cache *pebble.Cache, db *pebble.DB) (release func()) {
	m := db.Metrics()
	taken := m.MemTable.Size + m.MemTable.ZombieSize
	if taken >= readerMemTableRoom {
		return func() {}
	}
	return cache.Reserve(int(readerMemTableRoom - taken))
}

// Memory is what a Pebble store holds in memory outside the Go heap, and
// how it was opened: what a reader that must stay small checks it was
// given.
type Memory struct {
	// ReadOnly is whether the store was opened for reading only.
	ReadOnly bool
	// CacheLimit is the block cache's capacity in bytes; CacheBytes what
	// it holds now.
	CacheLimit, CacheBytes int64
	// CacheHits and CacheMisses count the block cache's lookups since the
	// store was opened.
	CacheHits, CacheMisses int64
	// MemTables is how many memtables the store holds (a store opened
	// read-only holds in them what its write-ahead log had not yet put in
	// tables), MemTableBytes their allocated size.
	MemTables     int64
	MemTableBytes uint64
}

// Memory reports what the store holds in memory now; see Memory. It fails
// only on a closed store (ErrClosed).
func (s *PebbleStore) Memory() (Memory, error) {
	if err := s.enter(); err != nil {
		return Memory{}, fmt.Errorf("memory of %s: %w", s.dir, err)
	}
	defer s.leave()
	m := s.db.Metrics()
	return Memory{
		ReadOnly:      s.readOnly,
		CacheLimit:    s.cacheSize,
		CacheBytes:    m.BlockCache.Size,
		CacheHits:     m.BlockCache.Hits,
		CacheMisses:   m.BlockCache.Misses,
		MemTables:     m.MemTable.Count,
		MemTableBytes: m.MemTable.Size,
	}, nil
}
