package thread

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/facts"
)

// Store keeps threads: durable, append-only fact logs. Every method is safe
// for concurrent use. No method updates or deletes a fact.
//
// The interface asks only for what a log with per-key expected-sequence
// appends provides, so a NATS JetStream subject per thread can implement it
// as well as the embedded Pebble store does. The conformance suite in
// package storetest says what every Store must do.
type Store interface {
	// Append appends drafts to thread as one unit, all or none, if the
	// thread's head is still seq after (0 for a thread with no facts yet).
	// The store assigns each fact's Seq, Prev and At and returns the new
	// head. An acknowledged append is durable.
	//
	// Append refuses, appending nothing:
	//   - a cause already present in an earlier append of the thread, with
	//     a *DuplicateCauseError (ErrDuplicateCause); a caller treats it as
	//     "already done". The drafts of one append may share a cause. If the
	//     head moved as well, the duplicate is reported, since it is the
	//     final answer;
	//   - a head that is not after, with a *ConflictError (ErrConflict)
	//     carrying the actual head so the caller can catch up;
	//   - no drafts (ErrEmptyAppend), a bad thread id (ErrBadThreadID), a
	//     draft that fails facts.Draft.Validate, a done context.
	Append(ctx context.Context, thread string, after uint64, drafts ...facts.Draft) (Head, error)

	// Read yields the facts of thread in order, from seq from (0 and 1 both
	// mean the first) to the head as it was when reading began. Memory does
	// not grow with the log. A thread with no facts yields nothing. On an
	// error Read yields it once, with a zero Fact, and stops; a damaged
	// record is a *CorruptError (ErrCorrupt) naming thread and seq.
	Read(ctx context.Context, thread string, from uint64) iter.Seq2[facts.Fact, error]

	// Head returns the thread's last fact's position, or ErrNotFound if the
	// thread has no facts.
	Head(ctx context.Context, thread string) (Head, error)

	// HasCause reports whether a fact of thread has the given cause.
	HasCause(ctx context.Context, thread, cause string) (bool, error)

	// Threads returns the heads of threads with ids after page.After, in
	// ascending byte order of id, at most page.Limit of them. An empty
	// result is the end; pass the last id as After for the next page.
	Threads(ctx context.Context, page ThreadsPage) ([]Head, error)

	// Verify walks the thread's whole log and checks every link: seqs from
	// 1 with no gap, each fact's Prev equal to the hash of the fact before,
	// the head record equal to the last fact, each cause indexed. It
	// returns nil, ErrNotFound for a thread with no facts, or a
	// *CorruptError naming the first broken link.
	Verify(ctx context.Context, thread string) error

	// Close waits for running calls and open reads to finish and releases
	// the store. Calls after Close fail with ErrClosed.
	Close() error
	// Backing returns the store that keeps the logs this one reads and
	// appends: the store itself, or, for a wrapper (one that watches,
	// counts or logs the calls of another store), the store it wraps. The
	// runtimes of one process hold a thread by its backing store, and take
	// the thread's lease from it (see Leaser), so two runtimes over two
	// wrappers of one store never act on one thread at once. A wrapper
	// that embeds the Store it wraps gets Backing from it and stays the
	// same store; a wrapper written from scratch returns what it wraps.
	Backing() Store
}

// Head is the position of a thread's last fact.
type Head struct {
	Thread string `json:"thread"`
	// Seq is the last fact's seq: the number of facts in the thread.
	Seq uint64 `json:"seq"`
	// Hash is the last fact's hash, the Prev of the next fact.
	Hash facts.Hash `json:"hash"`
	// Kind is the last fact's kind.
	Kind facts.Kind `json:"kind"`
	// At is when the last fact was appended.
	At time.Time `json:"at"`
}

// ThreadsPage selects a page of Store.Threads.
type ThreadsPage struct {
	// After excludes ids up to and including it; "" starts at the first.
	After string
	// Limit is the most heads to return; 0 or less means DefaultPageLimit.
	Limit int
}

// DefaultPageLimit is the page size of Threads when none is given.
const DefaultPageLimit = 100

// The sentinel errors of this package. Check them with errors.Is; the
// errors returned wrap them with the thread, and the seq where one applies.
var (
	// ErrConflict: the thread's head is not the seq an append expected.
	// The error is a *ConflictError carrying the actual head.
	ErrConflict = errors.New("head moved")
	// ErrDuplicateCause: an earlier append of the thread has the cause.
	// The error is a *DuplicateCauseError naming its seq.
	ErrDuplicateCause = errors.New("cause already appended")
	// ErrNotFound: the thread has no facts.
	ErrNotFound = errors.New("thread not found")
	// ErrEmptyAppend: an append of no drafts.
	ErrEmptyAppend = errors.New("append of no facts")
	// ErrBadThreadID: a thread id that breaks the rules of ValidateID.
	ErrBadThreadID = errors.New("bad thread id")
	// ErrCorrupt: stored data that this store could not have written. The
	// error is a *CorruptError naming thread and seq.
	ErrCorrupt = errors.New("corrupt thread log")
	// ErrLocked: the store's directory is open in another process (or
	// another store in this one).
	ErrLocked = errors.New("in use by another process")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("store is closed")
	// ErrDiskFull: the disk holding the store has too little space left to
	// write safely; nothing was written.
	ErrDiskFull = errors.New("no space left for the store")
	// ErrReadOnly: a write to a store opened read-only.
	ErrReadOnly = errors.New("store opened read-only")
	// ErrLeaseLost: a Leaser could not renew a lease in time; its holder
	// must stop, since another may hold the thread now.
	ErrLeaseLost = errors.New("thread lease lost")
	// ErrNoSeq: the thread has no fact at the seq asked for (ReadAt). The
	// error is a *SeqError naming thread and seq.
	ErrNoSeq = errors.New("no such seq")
)

// Errors of this package's own machinery, never returned by a Store's
// method as they are.
var (
	// errStopped is what a walk's callback returns to end the walk early
	// without an error.
	errStopped = errors.New("stopped")
	// errGroupAbandoned is the answer of the appends of a group whose
	// leader panicked while committing it: whether it committed is not
	// known.
	errGroupAbandoned = errors.New("the commit of this append's group was abandoned")
)

// SeqError is the error of a read of a seq the thread does not have.
type SeqError struct {
	Thread string
	Seq    uint64
}

// Error names the thread and the seq.
func (e *SeqError) Error() string { return fmt.Sprintf("thread %s has no seq %d", e.Thread, e.Seq) }

// Is reports whether target is ErrNoSeq.
func (e *SeqError) Is(target error) bool { return target == ErrNoSeq }

// Leaser is implemented by a store that several processes share, such as
// NATS JetStream. It leases a thread to one holder at a time, which is
// what lets a runtime tell an action in progress in another process from
// one whose process died: a runtime resumes a thread only while it holds
// the thread's lease, so a started action with no completion, seen by the
// lease's holder, was left by a holder that is gone. A store that one
// process opens at a time (the Pebble store's directory lock) needs none.
//
// Resuming a thread and undoing its changes take the lease. Appends, and
// posts from outside, do not: they are decided by the expected-head check
// as always.
type Leaser interface {
	// Lease waits until no one holds the thread's lease, or ctx is done,
	// and takes it for the caller. It returns a context derived from ctx
	// that is cancelled, with cause ErrLeaseLost, if the lease is lost
	// (it could not be renewed before it ran out), and the function that
	// gives the lease up and ends that context. A holder whose process
	// dies keeps the lease until it runs out.
	Lease(ctx context.Context, thread string) (held context.Context, release func(), err error)
}

// ConflictError is the error of an append whose expected head is stale.
type ConflictError struct {
	Thread string
	// Expected is the seq the append expected the head to be at.
	Expected uint64
	// Actual is the head when the append was refused (Seq 0 and a zero Hash
	// for a thread with no facts).
	Actual Head
}

// Error names the thread, the expected seq and the actual one.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("append to %s after seq %d: head is at seq %d: %v", e.Thread, e.Expected, e.Actual.Seq, ErrConflict)
}

// Is reports whether target is ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// DuplicateCauseError is the error of an append whose cause is already in
// the thread.
type DuplicateCauseError struct {
	Thread string
	Cause  string
	// Seq is the first fact with Cause.
	Seq uint64
}

// Error names the thread, the cause and where it already is.
func (e *DuplicateCauseError) Error() string {
	return fmt.Sprintf("append to %s: cause %q is at seq %d: %v", e.Thread, e.Cause, e.Seq, ErrDuplicateCause)
}

// Is reports whether target is ErrDuplicateCause.
func (e *DuplicateCauseError) Is(target error) bool { return target == ErrDuplicateCause }

// CorruptError is damage found in a thread's stored data.
type CorruptError struct {
	Thread string
	// Seq is the fact where the damage was found: the first broken link.
	// It is 0 when the damage is in no one fact, such as a head record
	// that cannot be read.
	Seq uint64
	// Err says what is wrong; it may wrap facts.ErrCorrupt.
	Err error
}

// Error names thread and seq and what is wrong.
func (e *CorruptError) Error() string {
	if e.Seq == 0 {
		return fmt.Sprintf("thread %s: %v: %v", e.Thread, ErrCorrupt, e.Err)
	}
	return fmt.Sprintf("thread %s seq %d: %v: %v", e.Thread, e.Seq, ErrCorrupt, e.Err)
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns Err.
func (e *CorruptError) Unwrap() error { return e.Err }

func corrupt(thread string, seq uint64, format string, args ...any) error {
	return &CorruptError{Thread: thread, Seq: seq, Err: fmt.Errorf(format, args...)}
}

// MaxIDLen is the longest thread id.
const MaxIDLen = 128

// ValidateID reports whether id may name a thread: 1 to MaxIDLen bytes of
// ASCII letters, digits, '-', '_' and '.', starting with a letter or digit,
// not ending with '.', and without "..".
//
// These rules make an id safe everywhere a thread is named: in a Pebble key
// (no 0x00, which separates an id from what follows it), as a file or
// directory name, in a URL path, and as NATS subject tokens (no spaces,
// wildcards or empty tokens), so the same ids work with every Store.
func ValidateID(id string) error {
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrBadThreadID, id, fmt.Sprintf(why, args...))
	}
	switch {
	case id == "":
		return bad("empty")
	case len(id) > MaxIDLen:
		return bad("%d bytes, longer than %d", len(id), MaxIDLen)
	case !alnum(id[0]):
		r, _ := utf8.DecodeRuneInString(id)
		return bad("starts with %q, not an ASCII letter or digit", r)
	case id[len(id)-1] == '.':
		return bad("ends with '.'")
	case strings.Contains(id, ".."):
		return bad(`contains ".."`)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			r, _ := utf8.DecodeRuneInString(id[i:])
			return bad("%q at byte %d is not allowed (ASCII letters, digits, '-', '_', '.')", r, i)
		}
	}
	return nil
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
