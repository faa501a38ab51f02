package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Index is the search index of one store, in a Pebble database of its own
// (see the package comment for its keys). Its methods are safe for
// concurrent use; updates (Update, Reindex) run one at a time.
type Index struct {
	dir  string
	db   *pebble.DB
	lock *pebble.Lock

	// mu guards closed and serializes updates: an Update reads a
	// thread's watermark and carried records, then writes them, and two
	// at once would index a thread twice over each other.
	mu     sync.Mutex
	closed bool
}

// The tables of the index database.
const (
	tableVersion = 'v'
	tableMark    = 'w'
	tableCarry   = 'x'
	tablePosting = 'p'
	sep          = 0x00
)

// layoutVersion is the version of the key layout this code writes.
const layoutVersion = 1

// lockPoll is how often Open tries again an index another process has.
const lockPoll = 50 * time.Millisecond

// DefaultWait is how long a search should wait for the index while
// another process reads or updates it: an update is short, a rebuild
// of a large store is not.
const DefaultWait = 10 * time.Second

// Open opens the index in dir, making an empty one if there is none. If
// another process has it open, Open tries again until wait has passed (0
// tries once) or ctx is done, then fails with ErrLocked.
//
// dir must be a directory, or not be there: a link or a file in its
// place is ErrNotDir, and nothing is written through it.
func Open(ctx context.Context, dir string, wait time.Duration) (*Index, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("open search index: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open search index: %w", err)
	}
	if err := checkDir(dir); err != nil { // made meanwhile by another
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		lock, err := pebble.LockDirectory(dir, vfs.Default)
		if err == nil {
			return open(dir, lock)
		}
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			return nil, fmt.Errorf("open search index %s: %w", dir, err)
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("search index %s: %w: %v", dir, ErrLocked, err)
		}
		t := time.NewTimer(min(lockPoll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("open search index %s: %w", dir, ctx.Err())
		case <-t.C:
		}
	}
}

// checkDir refuses a dir that is there and is not a directory, or holds
// anything but files: Pebble would write through a link it holds.
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		return fmt.Errorf("search index %s: %w (%s)", dir, ErrNotDir, fi.Mode().Type())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("search index %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return fmt.Errorf("search index %s: %w: it holds %s, which is not a file (%s)", dir, ErrNotDir, e.Name(), e.Type())
		}
	}
	return nil
}

// Rebuild opens the index in dir and builds it again from store's logs
// (Reindex). An index that does not open — of another layout version,
// damaged, or holding a link — is removed first and made anew: it holds
// nothing the logs do not. One another process has open is waited for, as Open does.
func Rebuild(ctx context.Context, dir string, wait time.Duration, store thread.Store) (*Index, Stats, error) {
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return nil, Stats{}, fmt.Errorf("search index %s: %w (%s)", dir, ErrNotDir, fi.Mode().Type())
	}
	ix, err := Open(ctx, dir, wait)
	if err != nil && !errors.Is(err, ErrLocked) && ctx.Err() == nil {
		// dir is a directory (or gone): RemoveAll removes the links it
		// holds, never what they point at.
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			return nil, Stats{}, fmt.Errorf("rebuild search index: %w (removing the old one: %v)", err, rmErr)
		}
		ix, err = Open(ctx, dir, wait)
	}
	if err != nil {
		return nil, Stats{}, err
	}
	st, err := ix.Reindex(ctx, store)
	if err != nil {
		ix.Close()
		return nil, Stats{}, err
	}
	return ix, st, nil
}

func open(dir string, lock *pebble.Lock) (*Index, error) {
	db, err := pebble.Open(dir, &pebble.Options{
		FormatMajorVersion: pebble.FormatValueSeparation,
		Lock:               lock,
		Logger:             quiet{},
	})
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open search index %s: %w", dir, err)
	}
	ix := &Index{dir: dir, db: db, lock: lock}
	v, closer, err := db.Get([]byte{tableVersion})
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		err = db.Set([]byte{tableVersion}, []byte{layoutVersion}, pebble.Sync)
	case err == nil:
		if len(v) != 1 || v[0] != layoutVersion {
			err = fmt.Errorf("%w (%x; this program reads %d)", ErrIndexVersion, v, layoutVersion)
		}
		closer.Close()
	}
	if err != nil {
		ix.Close()
		return nil, fmt.Errorf("open search index %s: %w", dir, err)
	}
	return ix, nil
}

// quiet drops Pebble's routine messages; a failure comes back as an error.
type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(format string, a ...any) {
	panic(fmt.Sprintf("search index: "+format, a...))
}

// Close closes the index and releases its directory.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	ix.closed = true
	if err := errors.Join(ix.db.Close(), ix.lock.Close()); err != nil {
		return fmt.Errorf("close search index %s: %w", ix.dir, err)
	}
	return nil
}

// Dir is the index's directory.
func (ix *Index) Dir() string { return ix.dir }

// Stats say what an update did.
type Stats struct {
	// Threads is how many threads had facts to index, and Facts how many
	// facts were indexed.
	Threads int `json:"threads"`
	Facts   int `json:"facts"`
	// Rewritten is how many threads' logs no longer held what the index
	// had read of them (a log replaced or rewritten): each was indexed
	// again from its first fact.
	Rewritten int `json:"rewritten,omitempty"`
}

// Update brings the index up to date with store: each thread whose head
// is past the seq the index last read of it is indexed from there. An
// up-to-date thread costs a comparison of its head with its watermark;
// no log is read again.
func (ix *Index) Update(ctx context.Context, store thread.Store) (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return Stats{}, ErrClosed
	}
	var st Stats
	marks, err := ix.db.NewIter(&pebble.IterOptions{LowerBound: []byte{tableMark}, UpperBound: []byte{tableMark + 1}})
	if err != nil {
		return st, fmt.Errorf("update search index: %w", err)
	}
	defer marks.Close()
	marks.First()
	page := thread.ThreadsPage{Limit: 1000}
	for {
		heads, err := store.Threads(ctx, page)
		if err != nil {
			return st, fmt.Errorf("update search index: %w", err)
		}
		if len(heads) == 0 {
			return st, nil
		}
		for _, h := range heads {
			// Marks and heads both run in thread id order: walk them side by side.
			key := markKey(h.Thread)
			for marks.Valid() && bytes.Compare(marks.Key(), key) < 0 {
				marks.Next()
			}
			var m mark
			if marks.Valid() && bytes.Equal(marks.Key(), key) {
				m, _ = decodeMark(marks.Value())
			}
			if err := ix.catchUp(ctx, store, h, m, &st); err != nil {
				return st, fmt.Errorf("update search index: %w", err)
			}
		}
		page.After = heads[len(heads)-1].Thread
	}
}

// UpdateThread brings the index up to date with one thread of store, as
// Update does for all: the call for a process that has just appended to
// it, so that a search finds the facts without indexing them first.
func (ix *Index) UpdateThread(ctx context.Context, store thread.Store, id string) (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var st Stats
	if ix.closed {
		return st, ErrClosed
	}
	h, err := store.Head(ctx, id)
	if errors.Is(err, thread.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("update search index for %s: %w", id, err)
	}
	var m mark
	v, closer, err := ix.db.Get(markKey(id))
	switch {
	case err == nil:
		m, _ = decodeMark(v)
		closer.Close()
	case !errors.Is(err, pebble.ErrNotFound):
		return st, fmt.Errorf("update search index for %s: %w", id, err)
	}
	if err := ix.catchUp(ctx, store, h, m, &st); err != nil {
		return st, fmt.Errorf("update search index for %s: %w", id, err)
	}
	return st, nil
}

// catchUp indexes h's thread past its mark m, if the head is not the
// mark, counting in st. The caller holds mu.
func (ix *Index) catchUp(ctx context.Context, store thread.Store, h thread.Head, m mark, st *Stats) error {
	if m.seq == h.Seq && m.hash == h.Hash {
		return nil
	}
	n, rewritten, err := ix.indexThread(ctx, store, h, m)
	if err != nil {
		return err
	}
	st.Threads++
	st.Facts += n
	if rewritten {
		st.Rewritten++
	}
	return nil
}

// Reindex empties the index and builds it again from every log of store.
func (ix *Index) Reindex(ctx context.Context, store thread.Store) (Stats, error) {
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return Stats{}, ErrClosed
	}
	// Everything but the layout version: the postings, the marks and what
	// was carried.
	b := ix.db.NewBatch()
	err := errors.Join(b.DeleteRange([]byte{0}, []byte{tableVersion}, nil),
		b.DeleteRange([]byte{tableVersion + 1}, []byte{0xff}, nil))
	if err == nil {
		err = b.Commit(pebble.Sync)
	}
	b.Close()
	ix.mu.Unlock()
	if err != nil {
		return Stats{}, fmt.Errorf("reindex: %w", err)
	}
	return ix.Update(ctx, store)
}

// mark is how far the index has read a thread: the seq and hash of the
// last fact it indexed.
type mark struct {
	seq  uint64
	hash facts.Hash
}

func markKey(id string) []byte { return append([]byte{tableMark}, id...) }

func encodeMark(m mark) []byte {
	return append(binary.BigEndian.AppendUint64(nil, m.seq), m.hash[:]...)
}

func decodeMark(b []byte) (mark, bool) {
	if len(b) != 8+len(facts.Hash{}) {
		return mark{}, false
	}
	var m mark
	m.seq = binary.BigEndian.Uint64(b)
	copy(m.hash[:], b[8:])
	return m, true
}

// carryPrefix is 'x' thread 0x00.
func carryPrefix(id string) []byte {
	k := append([]byte{tableCarry}, id...)
	return append(k, sep)
}

// postingKey is 'p' term 0x00 ^at thread 0x00 ^seq.
func postingKey(buf []byte, term string, f facts.Fact) []byte {
	buf = append(buf[:0], tablePosting)
	buf = append(buf, term...)
	buf = append(buf, sep)
	return appendSuffix(buf, f.At, f.Thread, f.Seq)
}

func appendSuffix(buf []byte, at time.Time, id string, seq uint64) []byte {
	buf = binary.BigEndian.AppendUint64(buf, math.MaxUint64-uint64(at.UnixNano()))
	buf = append(buf, id...)
	buf = append(buf, sep)
	return binary.BigEndian.AppendUint64(buf, math.MaxUint64-seq)
}

// parseSuffix reads ^at thread 0x00 ^seq.
func parseSuffix(s []byte) (at int64, id string, seq uint64, ok bool) {
	if len(s) < 8+1+1+8 || s[len(s)-9] != sep {
		return 0, "", 0, false
	}
	at = int64(math.MaxUint64 - binary.BigEndian.Uint64(s))
	id = string(s[8 : len(s)-9])
	seq = math.MaxUint64 - binary.BigEndian.Uint64(s[len(s)-8:])
	return at, id, seq, true
}

// postingValue is the fact's hash, then its sources.
func postingValue(buf []byte, h facts.Hash, src []uint64) []byte {
	buf = append(buf[:0], h[:]...)
	buf = binary.AppendUvarint(buf, uint64(len(src)))
	for _, s := range src {
		buf = binary.AppendUvarint(buf, s)
	}
	return buf
}

func decodePostingValue(b []byte) (facts.Hash, []uint64, bool) {
	var h facts.Hash
	if len(b) < len(h)+1 {
		return h, nil, false
	}
	copy(h[:], b)
	b = b[len(h):]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxSources+1 {
		return h, nil, false
	}
	b = b[k:]
	src := make([]uint64, 0, n)
	for range n {
		s, k := binary.Uvarint(b)
		if k <= 0 {
			return h, nil, false
		}
		src = append(src, s)
		b = b[k:]
	}
	return h, src, len(b) == 0
}

// batchFacts is how many facts one batch of an update indexes.
const batchFacts = 1000

// errRewritten: the log's fact after a thread's mark does not link to the
// fact the mark names.
var errRewritten = errors.New("the log is not the one indexed")

// indexThread indexes h's thread from the fact after m. A log that no
// longer holds what the index read of it — shorter, or whose next fact
// does not link to the mark's hash — is indexed again from its start.
func (ix *Index) indexThread(ctx context.Context, store thread.Store, h thread.Head, m mark) (n int, rewritten bool, err error) {
	if m.seq > 0 && h.Seq > m.seq {
		n, err = ix.indexFrom(ctx, store, h.Thread, m)
		if !errors.Is(err, errRewritten) {
			return n, false, err
		}
	}
	if m.seq > 0 {
		// What the index carried along the log is not this log's: start
		// again. Its old postings stay, and are dropped by every search
		// (their hashes are not the log's) until a reindex removes them.
		prefix := carryPrefix(h.Thread)
		upper := append(slices.Clone(prefix[:len(prefix)-1]), sep+1)
		if err := ix.db.DeleteRange(prefix, upper, pebble.NoSync); err != nil {
			return 0, false, err
		}
	}
	n, err = ix.indexFrom(ctx, store, h.Thread, mark{})
	return n, m.seq > 0, err
}

// indexFrom indexes the thread id from the fact after m, checking first
// that it links to m (errRewritten, nothing written, if not).
func (ix *Index) indexFrom(ctx context.Context, store thread.Store, id string, m mark) (n int, err error) {
	prefix := carryPrefix(id)
	c := newCarry(func(name string) ([]byte, bool) {
		v, closer, err := ix.db.Get(append(slices.Clip(prefix), name...))
		if err != nil {
			return nil, false
		}
		defer closer.Close()
		return slices.Clone(v), true
	})
	b := ix.db.NewBatch()
	defer func() { b.Close() }()
	var key, val []byte
	pending := 0
	last := m
	flush := func() error {
		for name, v := range c.records {
			if err := b.Set(append(slices.Clip(prefix), name...), v, nil); err != nil {
				return err
			}
		}
		clear(c.dirty)
		if err := b.Set(markKey(id), encodeMark(last), nil); err != nil {
			return err
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return err
		}
		b.Close()
		b = ix.db.NewBatch()
		pending = 0
		return nil
	}
	for f, err := range store.Read(ctx, id, m.seq+1) {
		if err != nil {
			return n, err
		}
		if f.Seq == m.seq+1 && f.Prev != m.hash {
			return n, errRewritten
		}
		p := c.index(f)
		hash := f.Hash()
		val = postingValue(val, hash, p.src)
		for _, t := range p.terms {
			key = postingKey(key, t, f)
			if err := b.Set(key, val, nil); err != nil {
				return n, err
			}
		}
		last = mark{seq: f.Seq, hash: hash}
		n++
		if pending++; pending >= batchFacts {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if pending > 0 {
		if err := flush(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Options page through a search.
type Options struct {
	// Limit is the most hits a page has: 0 for DefaultLimit, at most
	// MaxLimit.
	Limit int
	// Cursor is Page.Next of the page before; "" for the first.
	Cursor string
	// Keep, when set, is asked of each thread a hit is in whether to keep
	// its hits (such as a thread of the query's Status); the caller
	// remembers the answer if it is costly.
	Keep func(ctx context.Context, thread string) (bool, error)
}

// The page sizes.
const (
	DefaultLimit = 20
	MaxLimit     = 1000
)

// Hit is one fact that matches a query, as the log holds it.
type Hit struct {
	Fact facts.Fact
	Hash facts.Hash
}

// Page is one page of hits, newest first.
type Page struct {
	Hits []Hit
	// Next is the cursor of the next page, "" after the last.
	Next string
	// Dropped counts the hits of the index that the log did not confirm
	// (an index out of date, damaged or forged), left out.
	Dropped int
}

// Search returns the facts of store that match q, newest first, from the
// cursor on. The index is read as it is (call Update first to bring it
// up to date); each hit it names is read from store and checked before
// it is given (see the package comment).
func (ix *Index) Search(ctx context.Context, store thread.Store, q Query, o Options) (Page, error) {
	if o.Limit == 0 {
		o.Limit = DefaultLimit
	}
	if o.Limit < 0 || o.Limit > MaxLimit {
		return Page{}, fmt.Errorf("search: limit %d: want 1 to %d", o.Limit, MaxLimit)
	}
	var target []byte
	if o.Cursor != "" {
		c, err := hex.DecodeString(o.Cursor)
		if _, _, _, ok := parseSuffix(c); err != nil || !ok {
			return Page{}, fmt.Errorf("search: %w %q", ErrCursor, o.Cursor)
		}
		target = append(c, sep) // strictly after the last hit given
	}
	if !q.Until.IsZero() {
		// Until is exclusive: start at the complement of until - 1ns.
		start := binary.BigEndian.AppendUint64(nil, math.MaxUint64-uint64(q.Until.UnixNano())+1)
		if bytes.Compare(start, target) > 0 {
			target = start
		}
	}
	var stop []byte // past the complement of since: older than since
	if !q.Since.IsZero() {
		stop = binary.BigEndian.AppendUint64(nil, math.MaxUint64-uint64(q.Since.UnixNano())+1)
	}
	terms := slices.Clone(q.Terms)
	if len(terms) == 0 {
		terms = []string{termAll}
	}
	iters := make([]*pebble.Iterator, len(terms))
	prefixes := make([][]byte, len(terms))
	for i, t := range terms {
		prefixes[i] = append(append([]byte{tablePosting}, t...), sep)
		upper := append(slices.Clone(prefixes[i][:len(prefixes[i])-1]), sep+1)
		it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefixes[i], UpperBound: upper})
		if err != nil {
			return Page{}, fmt.Errorf("search: %w", err)
		}
		defer it.Close()
		iters[i] = it
	}
	page := Page{Hits: []Hit{}}
	kept := map[string]bool{}
	var seek, last []byte
	// One hit past the page is looked for, so that Next is given only
	// when there is a next page.
	for {
		if err := ctx.Err(); err != nil {
			return Page{}, fmt.Errorf("search: %w", err)
		}
		// Leapfrog: seek every term's postings to the target; one that
		// lands further on moves the target, until all land on it.
		agreed := true
		for i, it := range iters {
			seek = append(append(seek[:0], prefixes[i]...), target...)
			if !it.SeekGE(seek) {
				return page, it.Error()
			}
			s := it.Key()[len(prefixes[i]):]
			if stop != nil && bytes.Compare(s[:min(8, len(s))], stop) >= 0 {
				return page, it.Error()
			}
			if !bytes.Equal(s, target) {
				target = slices.Clone(s)
				agreed = false
				break
			}
		}
		if !agreed {
			continue
		}
		hit, ok, err := ix.confirm(ctx, store, q, target, iters[0].Value(), o.Keep, kept)
		if err != nil {
			return Page{}, err
		}
		switch {
		case ok && len(page.Hits) == o.Limit:
			page.Next = hex.EncodeToString(last)
			return page, nil
		case ok:
			page.Hits = append(page.Hits, hit)
			last = slices.Clone(target)
		case hit.Fact.Seq != 0:
			// A thread the caller does not keep: not a drop.
		default:
			page.Dropped++
		}
		target = append(target, sep)
	}
}

// confirm reads the hit at the posting suffix s from the log and checks
// it: the fact's hash is the one the index recorded, its time the one the
// key says, and the fact, read after the facts that gave it fields, has
// every term of the query. A hit of a thread keep refuses comes back with
// ok false and its fact set.
func (ix *Index) confirm(ctx context.Context, store thread.Store, q Query, s, value []byte, keep func(context.Context, string) (bool, error), kept map[string]bool) (Hit, bool, error) {
	at, id, seq, ok := parseSuffix(s)
	if !ok || thread.ValidateID(id) != nil {
		return Hit{}, false, nil
	}
	hash, src, ok := decodePostingValue(value)
	if !ok {
		return Hit{}, false, nil
	}
	if keep != nil {
		k, seen := kept[id]
		if !seen {
			var err error
			if k, err = keep(ctx, id); err != nil {
				return Hit{}, false, err
			}
			kept[id] = k
		}
		if !k {
			return Hit{Fact: facts.Fact{Thread: id, Seq: seq}}, false, nil
		}
	}
	f, ok, err := readOne(ctx, store, id, seq)
	if err != nil || !ok || f.Hash() != hash || f.At.UnixNano() != at {
		return Hit{}, false, err
	}
	c := newCarry(nil)
	for _, sseq := range src {
		if sseq >= seq {
			return Hit{}, false, nil
		}
		sf, ok, err := readOne(ctx, store, id, sseq)
		if err != nil || !ok {
			return Hit{}, false, err
		}
		c.index(sf)
	}
	p := c.index(f)
	for _, t := range q.Terms {
		if !slices.Contains(p.terms, t) {
			return Hit{}, false, nil
		}
	}
	if (!q.Since.IsZero() && f.At.Before(q.Since)) || (!q.Until.IsZero() && !f.At.Before(q.Until)) {
		return Hit{}, false, nil
	}
	return Hit{Fact: f, Hash: hash}, true, nil
}

// readOne reads the fact at seq of a thread from the log (thread.ReadAt):
// false if there is none (a thread that is gone, or shorter). A damaged
// log is an error only when the damage is not at that fact; a fact that
// does not read is not confirmed.
func readOne(ctx context.Context, store thread.Store, id string, seq uint64) (facts.Fact, bool, error) {
	f, err := thread.ReadAt(ctx, store, id, seq)
	switch {
	case errors.Is(err, thread.ErrNoSeq), errors.Is(err, thread.ErrCorrupt), errors.Is(err, thread.ErrNotFound):
		return facts.Fact{}, false, nil
	case err != nil:
		return facts.Fact{}, false, errors.Unwrap(err) // the store's own error
	}
	return f, true, nil
}
