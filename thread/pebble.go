package thread

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/seed-7cc7a084/harness/facts"
)

// formatVersion pins Pebble's on-disk format. Left unset, Pebble would
// create a new store in its oldest format; a named version also keeps an
// upgrade of the library from changing the format of existing stores
// unasked.
const formatVersion = pebble.FormatValueSeparation

// PebbleStore is the embedded Store: one directory holding a Pebble
// database, with the layout documented in the package comment.
//
// The fields every call reads and no call writes come first; the ones
// calls write (mutexes, counters, the group commit's queue) are kept off
// their cache lines and, where each is written by every append, off one
// another's: a write by one core to a line takes it from the others, and
// with 64 appenders the lines that held the database handle next to a
// lock shard's mutex were missed on every append.
type PebbleStore struct {
	dir      string
	db       *pebble.DB
	lock     *pebble.Lock
	clock    func() time.Time
	readOnly bool
	minFree  uint64 // bytes the disk must keep free for a write
	fatal    func(msg string)
	_        [64]byte

	locks threadLocks
	hot   hotThreads

	cacheSize int64 // the block cache's capacity (see Memory)
	// releaseRoom gives back what a read-only store reserved of its
	// cache (see keepReaderCache); nil for a writer.
	releaseRoom func()
	room        freeReadings
	full        atomic.Bool // a background write found the disk full
	_           [64]byte
	group       groupCommit
	_           [64]byte

	// mu guards closed. Every call registers in ops under mu's read lock
	// while the store is open, so Close, once it has set closed, can wait
	// for ops to drain knowing no call will start after.
	mu     sync.RWMutex
	closed bool
	ops    sync.WaitGroup
	_      [64]byte
}

var _ Store = (*PebbleStore)(nil)

// Option configures OpenPebble.
type Option func(*options)

type options struct {
	clock     func() time.Time
	logger    *slog.Logger
	cacheSize int64
	readOnly  bool
	minFree   uint64
	fatal     func(msg string)
}

// DefaultMinFree is the space a disk must keep free for the Pebble store
// to write: below it, an append, a blob or opening the store for writing
// fails with ErrDiskFull, nothing written, before Pebble itself runs out
// of room mid-write.
const DefaultMinFree = 32 << 20

// WithMinFree sets the space the disk must keep free for a write (see
// DefaultMinFree); 0 checks nothing.
func WithMinFree(bytes uint64) Option {
	return func(o *options) { o.minFree = bytes }
}

// ReadOnly opens the store for reading only: nothing is written, not even
// Pebble's own files, so a store on a full disk can still be read (a write
// fails with ErrReadOnly). It still takes the directory's lock.
func ReadOnly() Option {
	return func(o *options) { o.readOnly = true }
}

// WithFatal sets what happens when Pebble cannot go on (a write it could
// not make, past the checks that refuse one early): fatal is called with
// the reason and must not return. The default logs the reason and exits
// the process with status 1 — no goroutine dump.
func WithFatal(fatal func(msg string)) Option {
	return func(o *options) { o.fatal = fatal }
}

// DefaultCacheSize is the size of the block cache OpenPebble gives a store.
// Pebble's own default (8 MiB) is small enough that the lookups every
// append makes (the head, the cause index) keep missing it and reading
// files. The cache lives outside the Go heap.
const DefaultCacheSize = 64 << 20

// WithCacheSize sets the size in bytes of the store's block cache.
func WithCacheSize(bytes int64) Option {
	return func(o *options) { o.cacheSize = bytes }
}

// WithClock makes the store stamp facts with now() instead of time.Now().
// Tests and reproducible fixtures use it.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.clock = now }
}

// WithLogger sends Pebble's log to l: errors at error level, routine
// messages at debug level. Without it routine messages are dropped and
// errors go to slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// OpenPebble opens the store in dir, creating dir and an empty store if
// needed. Only one process may have a store open: if another has, OpenPebble
// fails with ErrLocked and says so.
func OpenPebble(dir string, opts ...Option) (*PebbleStore, error) {
	o := options{clock: time.Now, logger: slog.Default(), cacheSize: DefaultCacheSize, minFree: DefaultMinFree}
	for _, opt := range opts {
		opt(&o)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// Pebble tells a directory already open in this process by its path:
	// name it one way, whatever way it was named (relative, through a
	// symlink), so that it is never open twice.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		if real, err = filepath.Abs(real); err == nil {
			dir = real
		}
	}
	// Take Pebble's directory lock ourselves, so that "someone else holds
	// it" can be told apart from every other way opening can fail. Creating
	// the LOCK file fails with a *fs.PathError; anything else is the lock
	// being held, by another process (fcntl's EAGAIN or EACCES) or by a
	// store already open in this one.
	lock, err := pebble.LockDirectory(dir, vfs.Default)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
		return nil, fmt.Errorf("store %s is %w (only one process may open it at a time): %v", dir, ErrLocked, err)
	}
	s := &PebbleStore{dir: dir, lock: lock, clock: o.clock, readOnly: o.readOnly, cacheSize: o.cacheSize, minFree: o.minFree, fatal: o.fatal}
	if s.fatal == nil {
		s.fatal = func(msg string) {
			// Pebble's reason may carry its stack traces (%+v): the
			// person gets the reason, the debug log the rest.
			first, _, _ := strings.Cut(msg, "\n")
			o.logger.Debug(msg, "component", "pebble")
			fmt.Fprintf(os.Stderr, "harness: the store %s cannot go on: %s\n", dir, strings.TrimSpace(first))
			os.Exit(1)
		}
	}
	if !o.readOnly && o.minFree > 0 {
		if s.room.dir, err = os.Open(dir); err != nil {
			lock.Close()
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
	}
	// closeAll releases what is open so far when opening fails.
	closeAll := func() {
		if s.room.dir != nil {
			s.room.dir.Close()
		}
		lock.Close()
	}
	if !o.readOnly {
		// Opening replays Pebble's log into its tables: on a full disk it
		// would retry forever. Refuse first.
		if err := s.roomToWrite(); err != nil {
			closeAll()
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
	}
	popts := &pebble.Options{
		FormatMajorVersion: formatVersion,
		Logger:             pebbleLogger{l: o.logger, fatal: s.fatal},
		Lock:               lock,
		CacheSize:          o.cacheSize,
		ReadOnly:           o.readOnly,
		EventListener: &pebble.EventListener{BackgroundError: func(err error) {
			if errors.Is(err, syscall.ENOSPC) {
				s.full.Store(true)
			}
		}},
	}
	var readerCache *pebble.Cache
	if o.readOnly {
		// See readerMemTableSize and readerMemTableRoom.
		popts.MemTableSize = readerMemTableSize
		readerCache = pebble.NewCache(o.cacheSize + readerMemTableRoom)
		defer readerCache.Unref() // the database holds its own reference
		popts.Cache = readerCache
	}
	// Every append looks up a cause that is almost never there. Bloom
	// filters (set on L0, inherited by the levels below) answer "not
	// there" without reading a block of each table.
	popts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	separateBlobs(popts)
	db, err := pebble.Open(dir, popts)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	s.db = db
	if readerCache != nil {
		s.releaseRoom = keepReaderCache(readerCache, db)
	}
	if err := s.checkSchema(); err != nil {
		s.db.Close()
		closeAll()
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	return s, nil
}

// writable returns why nothing may be written now: a store opened
// read-only, or a disk without room (see DefaultMinFree).
func (s *PebbleStore) writable() error {
	if err := s.writableSoFar(); err != nil {
		return err
	}
	return s.roomToWrite()
}

// writableSoFar is writable without reading the disk's free space.
func (s *PebbleStore) writableSoFar() error {
	if s.readOnly {
		return ErrReadOnly
	}
	if s.full.Load() {
		return fmt.Errorf("%w: the disk holding %s is full", ErrDiskFull, s.dir)
	}
	return nil
}

// roomToWrite returns ErrDiskFull when the disk holding the store has less
// than minFree bytes left.
func (s *PebbleStore) roomToWrite() error {
	if s.minFree == 0 {
		return nil
	}
	free, ok := s.room.read()
	if ok && free < s.minFree {
		return fmt.Errorf("%w: the disk holding %s has %d KiB free, less than the %d KiB it keeps to write safely",
			ErrDiskFull, s.dir, free>>10, s.minFree>>10)
	}
	return nil
}

// checkSchema stamps an empty store with the schema version and refuses a
// directory holding anything else.
func (s *PebbleStore) checkSchema() error {
	v, closer, err := s.db.Get(schemaKey)
	if err == nil {
		defer closer.Close()
		if !bytes.Equal(v, []byte{schemaVersion}) {
			return fmt.Errorf("store schema is %x; this program reads schema %d", v, schemaVersion)
		}
		return nil
	}
	if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	it, err := s.db.NewIter(nil)
	if err != nil {
		return err
	}
	empty := !it.First()
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	if !empty {
		return errors.New("directory holds a Pebble database that is not a harness store")
	}
	if s.readOnly {
		return nil // an empty store, read: nothing to stamp
	}
	return s.db.Set(schemaKey, []byte{schemaVersion}, pebble.Sync)
}

// Dir returns the store's directory.
func (s *PebbleStore) Dir() string { return s.dir }

// enter registers a call, or fails if the store is closed; leave ends it.
func (s *PebbleStore) enter() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	s.ops.Add(1)
	return nil
}

func (s *PebbleStore) leave() { s.ops.Done() }

// Backing is the store itself.
func (s *PebbleStore) Backing() Store { return s }

// Close waits for running calls and reads to finish, then closes the
// database and releases the directory lock.
func (s *PebbleStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("close store %s: %w", s.dir, ErrClosed)
	}
	s.closed = true
	s.mu.Unlock()
	s.ops.Wait()
	var dirErr error
	if s.room.dir != nil {
		dirErr = s.room.dir.Close()
	}
	if s.releaseRoom != nil {
		s.releaseRoom()
	}
	if err := errors.Join(s.db.Close(), s.lock.Close(), dirErr); err != nil {
		return fmt.Errorf("close store %s: %w", s.dir, err)
	}
	return nil
}

// begin does what every call does first: check the id and the context and
// register the call. On success the caller must call s.leave.
func (s *PebbleStore) begin(ctx context.Context, op, id string) error {
	if err := ValidateID(id); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %s: %w", op, id, err)
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("%s %s: %w", op, id, err)
	}
	return nil
}

// reader is what Get is read from: the database or a snapshot of it.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

// get returns a copy of key's value, or nil and false if there is none.
func get(r reader, key []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v = bytes.Clone(v)
	return v, true, closer.Close()
}

// readHead returns id's head, or false if it has none.
func readHead(r reader, id string) (Head, bool, error) {
	v, ok, err := get(r, headKey(id))
	if err != nil || !ok {
		return Head{}, false, err
	}
	h, err := decodeHead(id, v)
	if err != nil {
		return Head{}, false, &CorruptError{Thread: id, Err: err}
	}
	return h, true, nil
}

// noFactsWithoutHead is a CorruptError when id, which has no head record,
// has a fact record or a cause index entry: the head record was lost.
func noFactsWithoutHead(db *pebble.DB, id string) error {
	for _, prefix := range [][]byte{factPrefix(id), causePrefix(id)} {
		upper := bytes.Clone(prefix)
		upper[len(upper)-1]++ // sep + 1: past every key with prefix
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
		if err != nil {
			return err
		}
		found := it.First()
		err = errors.Join(it.Error(), it.Close())
		if err != nil {
			return err
		}
		if found {
			return &CorruptError{Thread: id, Err: errors.New("it has stored facts but no head record: the head record was lost")}
		}
	}
	return nil
}

// causeSeq returns the seq of the first fact of id with cause, or false.
func causeSeq(r reader, id, cause string) (uint64, bool, error) {
	v, ok, err := get(r, causeKey(id, cause))
	if err != nil || !ok {
		return 0, false, err
	}
	seq, err := decodeSeq(v)
	if err != nil {
		return 0, false, &CorruptError{Thread: id, Err: fmt.Errorf("cause %q: %w", cause, err)}
	}
	return seq, true, nil
}

// Append appends drafts to thread if its head is still after; see Store.
//
// The facts, the new head record and the cause index entries of one append
// are written in one synced batch. That is what keeps the invariants every
// read relies on: the head record names the last fact that exists, seqs
// have no gaps, and a cause is indexed exactly when a fact carries it. A
// crash leaves the batch wholly applied or wholly absent.
//
// Reading the head, checking it and committing happen under the thread's
// own lock, so no other append to the thread can commit in between; appends
// to other threads run alongside, and appends that commit at the same time
// are committed as one synced batch, after one reading of the disk's free
// space (see groupCommit).
func (s *PebbleStore) Append(ctx context.Context, thread string, after uint64, drafts ...facts.Draft) (Head, error) {
	if err := ValidateID(thread); err != nil {
		return Head{}, fmt.Errorf("append: %w", err)
	}
	if len(drafts) == 0 {
		return Head{}, fmt.Errorf("append to %s: %w", thread, ErrEmptyAppend)
	}
	// Distinct causes in order of first appearance. Most appends have one.
	causes := make([]string, 0, 1)
	for i, d := range drafts {
		if err := d.Validate(); err != nil {
			return Head{}, fmt.Errorf("append to %s: draft %d: %w", thread, i, err)
		}
		if !slices.Contains(causes, d.Cause) {
			causes = append(causes, d.Cause)
		}
	}
	if err := s.begin(ctx, "append to", thread); err != nil {
		return Head{}, err
	}
	defer s.leave()
	// Refused at once on a store that cannot write; the disk's free
	// space is read when the batch is committed, once for every append
	// committed with it (see groupCommit).
	if err := s.writableSoFar(); err != nil {
		return Head{}, fmt.Errorf("append to %s: %w", thread, err)
	}
	tl, err := s.locks.lock(ctx, thread)
	if err != nil {
		return Head{}, fmt.Errorf("append to %s: %w", thread, err)
	}
	defer s.locks.unlock(thread, tl)

	hot := s.hot.entry(thread)
	head := hot.head
	if !hot.known {
		var found bool
		if head, found, err = readHead(s.db, thread); err != nil {
			return Head{}, fmt.Errorf("append to %s: %w", thread, err)
		}
		head.Thread = thread
		if !found {
			// No head record: a new thread, unless the record was lost
			// (a damaged store) and facts are there, which this append
			// would overwrite from seq 1 — and whose causes a fresh
			// filter would call new.
			if err := noFactsWithoutHead(s.db, thread); err != nil {
				return Head{}, fmt.Errorf("append to %s: %w", thread, err)
			}
			if hot.causes == nil {
				hot.causes = newFreshFilter() // no head record and no facts: no causes
			}
		}
	}
	for _, c := range causes {
		// A cause the filter adds is certainly new, and the filter
		// holds it from now on (before the commit, while its line is
		// in the cache): if this append fails, it holds a cause the
		// thread does not have, which costs a lookup, never a miss.
		if hot.causes != nil && hot.causes.addIfNew(c) {
			continue
		}
		seq, dup, err := causeSeq(s.db, thread, c)
		if err != nil {
			return Head{}, fmt.Errorf("append to %s: %w", thread, err)
		}
		if dup {
			return Head{}, &DuplicateCauseError{Thread: thread, Cause: c, Seq: seq}
		}
		if hot.causes != nil {
			hot.causes.add(c)
		}
	}
	if head.Seq != after {
		return Head{}, &ConflictError{Thread: thread, Expected: after, Actual: head}
	}

	at := s.clock().UTC().Round(0)
	b := s.db.NewBatch()
	defer b.Close()
	f := facts.Fact{Thread: thread, Seq: head.Seq, Prev: head.Hash, At: at}
	indexed := 0 // causes[:indexed] have their index entry in b
	for i, d := range drafts {
		f.Seq++
		f.Kind, f.Cause, f.Data = d.Kind, d.Cause, d.Data
		// Each record is encoded where the batch keeps it: no copy.
		n := facts.EncodedLen(f)
		op := b.SetDeferred(factKeyLen(thread), n)
		putFactKey(op.Key, thread, f.Seq)
		if v, err := facts.AppendEncode(op.Value[:0], f); err != nil {
			return Head{}, fmt.Errorf("append to %s: draft %d: %w", thread, i, err)
		} else if len(v) != n {
			return Head{}, fmt.Errorf("append to %s: draft %d: encoded %d bytes, not %d", thread, i, len(v), n)
		}
		if err := op.Finish(); err != nil {
			return Head{}, fmt.Errorf("append to %s: %w", thread, err)
		}
		// causes lists each cause in order of its first draft, so the
		// next cause to index is the one this draft may be first to carry.
		if indexed < len(causes) && d.Cause == causes[indexed] {
			op := b.SetDeferred(2+len(thread)+len(d.Cause), 8)
			putCauseKey(op.Key, thread, d.Cause)
			binary.BigEndian.PutUint64(op.Value, f.Seq)
			if err := op.Finish(); err != nil {
				return Head{}, fmt.Errorf("append to %s: %w", thread, err)
			}
			indexed++
		}
		f.Prev = f.Hash()
	}
	next := Head{Thread: thread, Seq: f.Seq, Hash: f.Prev, Kind: f.Kind, At: at}
	op := b.SetDeferred(1+len(thread), headLen(next))
	putHeadKey(op.Key, thread)
	if v := appendHead(op.Value[:0], next); len(v) != len(op.Value) {
		return Head{}, fmt.Errorf("append to %s: head record of %d bytes, not %d", thread, len(v), len(op.Value))
	}
	if err := op.Finish(); err != nil {
		return Head{}, fmt.Errorf("append to %s: %w", thread, err)
	}
	// Last chance to give up: after Commit starts, the append happens.
	if err := ctx.Err(); err != nil {
		return Head{}, fmt.Errorf("append to %s: %w", thread, err)
	}
	committed := false
	defer func() {
		if !committed {
			s.hot.drop(thread) // whatever happened (an error, a panic), read it back next time
		}
	}()
	if err := s.group.commit(s.db, s.writable, b); err != nil {
		return Head{}, fmt.Errorf("append to %s after seq %d: %w", thread, after, err)
	}
	committed = true
	s.hot.committed(s.db, thread, hot, next)
	return next, nil
}

// Head returns thread's head; see Store.
func (s *PebbleStore) Head(ctx context.Context, thread string) (Head, error) {
	if err := s.begin(ctx, "head of", thread); err != nil {
		return Head{}, err
	}
	defer s.leave()
	h, ok, err := readHead(s.db, thread)
	if err != nil {
		return Head{}, fmt.Errorf("head of %s: %w", thread, err)
	}
	if !ok {
		// A thread whose head record was lost is damaged, not unknown:
		// its facts are there. (Facts found may be an append's that
		// committed since the head was read: its head record came with
		// them, in one batch, and is read again.)
		if err := noFactsWithoutHead(s.db, thread); err != nil {
			if h, ok, rerr := readHead(s.db, thread); rerr == nil && ok {
				return h, nil
			}
			return Head{}, fmt.Errorf("head of %s: %w", thread, err)
		}
		return Head{}, fmt.Errorf("head of %s: %w", thread, ErrNotFound)
	}
	return h, nil
}

// HasCause reports whether a fact of thread has cause; see Store.
func (s *PebbleStore) HasCause(ctx context.Context, thread, cause string) (bool, error) {
	if err := s.begin(ctx, "cause in", thread); err != nil {
		return false, err
	}
	defer s.leave()
	if err := facts.ValidateCause(cause); err != nil {
		return false, fmt.Errorf("cause in %s: %w", thread, err)
	}
	_, ok, err := causeSeq(s.db, thread, cause)
	if err != nil {
		return false, fmt.Errorf("cause in %s: %w", thread, err)
	}
	return ok, nil
}

// Threads returns a page of thread heads in id order; see Store.
func (s *PebbleStore) Threads(ctx context.Context, page ThreadsPage) ([]Head, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	defer s.leave()
	limit := page.Limit
	if limit <= 0 {
		limit = DefaultPageLimit
	}
	lower := []byte{tableHead}
	if page.After != "" {
		// The smallest key after 'h' After is 'h' After 0x00.
		lower = append(headKey(page.After), sep)
	}
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: []byte{tableHead + 1}})
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	defer it.Close()
	var out []Head
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("list threads: %w", err)
		}
		id := string(it.Key()[1:])
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, fmt.Errorf("list threads: %s: %w", id, err)
		}
		h, err := decodeHead(id, v)
		if err != nil {
			return nil, fmt.Errorf("list threads: %w", &CorruptError{Thread: id, Err: err})
		}
		out = append(out, h)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return out, nil
}

// Read yields thread's facts from seq from; see Store.
//
// Read sees one snapshot: the head record and the facts as they were when
// reading began, however long the caller takes. It checks each record's
// checksum and that seqs run without a gap up to the head record; the hash
// chain is Verify's job, since hashing every fact would make every read pay
// for it.
func (s *PebbleStore) Read(ctx context.Context, thread string, from uint64) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		if err := s.begin(ctx, "read", thread); err != nil {
			yield(facts.Fact{}, err)
			return
		}
		defer s.leave()
		snap := s.db.NewSnapshot()
		defer snap.Close()
		if err := read(ctx, snap, thread, from, yield); err != nil {
			yield(facts.Fact{}, fmt.Errorf("read %s: %w", thread, err))
		}
	}
}

// read yields thread's facts from seq from in snap. It returns an error for
// the caller to yield, or nil when done or when yield said stop.
func read(ctx context.Context, snap *pebble.Snapshot, thread string, from uint64, yield func(facts.Fact, error) bool) error {
	return walk(ctx, snap, thread, from, false, func(f facts.Fact) error {
		if !yield(f, nil) {
			return errStopped
		}
		return nil
	})
}

// Verify walks thread's whole log and checks every link; see Store.
func (s *PebbleStore) Verify(ctx context.Context, thread string) error {
	if err := s.begin(ctx, "verify", thread); err != nil {
		return err
	}
	defer s.leave()
	snap := s.db.NewSnapshot()
	defer snap.Close()
	if err := verify(ctx, snap, thread); err != nil {
		return fmt.Errorf("verify %s: %w", thread, err)
	}
	return nil
}

func verify(ctx context.Context, snap *pebble.Snapshot, thread string) error {
	head, found, err := readHead(snap, thread)
	if err != nil {
		return err
	}
	if !found {
		// No head record: either there are no facts, or the head record
		// was lost; read will tell which.
		for _, err := range readSeq(ctx, snap, thread) {
			return err
		}
		return ErrNotFound
	}
	var (
		prev      facts.Hash
		last      facts.Fact
		lastCause string
	)
	// Each payload is lent for as long as it is hashed: last keeps the
	// envelope only.
	err = walk(ctx, snap, thread, 1, true, func(f facts.Fact) error {
		if f.Prev != prev {
			return corrupt(thread, f.Seq, "prev is %s, but seq %d hashes to %s", f.Prev, f.Seq-1, prev)
		}
		// The cause index names the first fact with each cause. Facts of
		// one append that share a cause follow each other, so only a change
		// of cause needs a lookup.
		if f.Seq == 1 || f.Cause != lastCause {
			if err := checkCause(snap, thread, f); err != nil {
				return err
			}
		}
		prev, last, lastCause = f.Hash(), f, f.Cause
		last.Data = nil
		return nil
	})
	if fe, ok := err.(fnError); ok {
		return fe.err
	}
	if err != nil {
		return err
	}
	if last.Seq != head.Seq {
		return corrupt(thread, last.Seq+1, "fact is missing (the head record is at seq %d)", head.Seq)
	}
	if head.Hash != prev || head.Kind != last.Kind || !head.At.Equal(last.At) {
		return corrupt(thread, head.Seq, "head record (hash %s, kind %s, at %s) does not match the last fact (hash %s, kind %s, at %s)",
			head.Hash, head.Kind, head.At.Format(time.RFC3339Nano), prev, last.Kind, last.At.Format(time.RFC3339Nano))
	}
	return verifyCauseIndex(ctx, snap, thread, head.Seq)
}

// readSeq adapts read to a range-over-func loop for Verify. The snapshot
// stays open: Verify closes it.
func readSeq(ctx context.Context, snap *pebble.Snapshot, thread string) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		if err := read(ctx, snap, thread, 1, yield); err != nil {
			yield(facts.Fact{}, err)
		}
	}
}

// checkCause checks that f's cause is indexed at f or at an earlier fact
// with the same cause.
func checkCause(snap *pebble.Snapshot, thread string, f facts.Fact) error {
	seq, ok, err := causeSeq(snap, thread, f.Cause)
	switch {
	case err != nil:
		return err
	case !ok:
		return corrupt(thread, f.Seq, "cause %q is missing from the cause index", f.Cause)
	case seq == f.Seq:
		return nil
	case seq > f.Seq:
		return corrupt(thread, f.Seq, "cause index puts cause %q at the later seq %d", f.Cause, seq)
	}
	first, err := factAt(snap, thread, seq)
	if err != nil {
		return err
	}
	if first.Cause != f.Cause {
		return corrupt(thread, f.Seq, "cause index puts cause %q at seq %d, whose cause is %q", f.Cause, seq, first.Cause)
	}
	return nil
}

// verifyCauseIndex checks that every cause index entry of thread names a
// fact with that cause, so no entry can refuse a cause that never ran.
func verifyCauseIndex(ctx context.Context, snap *pebble.Snapshot, thread string, headSeq uint64) error {
	prefix := causePrefix(thread)
	upper := bytes.Clone(prefix)
	upper[len(upper)-1] = sep + 1
	it, err := snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		cause := string(it.Key()[len(prefix):])
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		seq, err := decodeSeq(v)
		if err != nil {
			return &CorruptError{Thread: thread, Err: fmt.Errorf("cause %q: %w", cause, err)}
		}
		if seq == 0 || seq > headSeq {
			return corrupt(thread, seq, "cause index puts cause %q at seq %d, past the head (seq %d)", cause, seq, headSeq)
		}
		f, err := factAt(snap, thread, seq)
		if err != nil {
			return err
		}
		if f.Cause != cause {
			return corrupt(thread, seq, "cause index puts cause %q at seq %d, whose cause is %q", cause, seq, f.Cause)
		}
	}
	return it.Error()
}

// factAt reads one fact.
func factAt(r reader, thread string, seq uint64) (facts.Fact, error) {
	v, ok, err := get(r, factKey(thread, seq))
	if err != nil {
		return facts.Fact{}, err
	}
	if !ok {
		return facts.Fact{}, corrupt(thread, seq, "fact is missing")
	}
	f, err := facts.DecodeFact(thread, v)
	if err != nil {
		return facts.Fact{}, &CorruptError{Thread: thread, Seq: seq, Err: err}
	}
	return f, nil
}

// pebbleLogger quiets Pebble: routine messages go to debug, errors to
// error, and what cannot go on to the store's fatal.
type pebbleLogger struct {
	l     *slog.Logger
	fatal func(msg string)
}

// Infof logs a routine message at debug level.
func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

// Errorf logs an error at error level.
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is called by Pebble when it cannot go on; it must not return.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.fatal(msg)
	panic("pebble: " + msg) // fatal returned, which it must not
}

// Blob values at least blobValueMin bytes long are kept in Pebble's blob
// files, apart from their keys (see separateBlobs).
const blobValueMin = 256

// separateBlobs keeps the values of the blob table ('b') in Pebble's blob
// files, and every other table's values beside their keys, as before.
//
// A workspace's first observation keeps every file of the tree as a blob,
// under a key that is the content's digest: the blobs of a 10,000-file
// tree are 25 MB, spread over the whole 'b' key range. Each session
// after adds a few blobs (the files it changed, a manifest) at random
// places in that range, so every compaction of a new level-0 table into
// the level below overlapped all of it and rewrote all 25 MB — every
// other `harness run` on such a tree, a cost that grew with the tree,
// not with what the session wrote. With the values apart, a compaction
// rewrites the keys and their references (about 45 bytes a blob) and
// leaves the blob files as they are. Facts, heads, causes and the
// observer's stat records are read far more often than they are
// compacted: their values stay in place (ValueStorageLowReadLatency).
//
// Each flush that holds blobs adds a blob file overlapping the whole
// range, and a table's references reach one more file: past
// MaxBlobReferenceDepth files a compaction writes the values it meets
// anew. Depth 64 makes that a 25 MB rewrite every 64 sessions or so
// (the blob value a point read follows names its file: the depth costs
// a scan of the blob table, which nothing does, more than a read).
func separateBlobs(o *pebble.Options) {
	o.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
		return pebble.ValueSeparationPolicy{
			Enabled:               true,
			MinimumSize:           blobValueMin,
			MaxBlobReferenceDepth: 64,
			RewriteMinimumAge:     10 * time.Minute,
			TargetGarbageRatio:    0.2,
		}
	}
	blobs := pebble.KeyRange{Start: []byte{tableBlob}, End: []byte{tableBlob + 1}}
	o.Experimental.SpanPolicyFunc = func(start []byte) (pebble.SpanPolicy, []byte, error) {
		inPlace := pebble.SpanPolicy{ValueStoragePolicy: pebble.ValueStorageLowReadLatency}
		switch {
		case bytes.Compare(start, blobs.Start) < 0:
			return inPlace, blobs.Start, nil
		case bytes.Compare(start, blobs.End) < 0:
			return pebble.SpanPolicy{}, blobs.End, nil
		default:
			return inPlace, nil, nil
		}
	}
}
