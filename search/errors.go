package search

import (
	"errors"
	"fmt"
)

// The sentinel errors of this package; check them with errors.Is.
var (
	// ErrQuery: a query that does not parse. The error is a *QueryError
	// naming the term.
	ErrQuery = errors.New("bad query")
	// ErrCursor: a page cursor this index did not give.
	ErrCursor = errors.New("bad page cursor")
	// ErrLocked: another process has the index open.
	ErrLocked = errors.New("search index in use by another process")
	// ErrIndexVersion: an index written in a layout this program does not
	// read; rebuild it (Reindex).
	ErrIndexVersion = errors.New("search index of another layout version")
	// ErrClosed: the index is closed.
	ErrClosed = errors.New("search index is closed")
	// ErrNotDir: the index's place is a link or a file, not a directory
	// (a repository may have put it there): nothing is written through it.
	ErrNotDir = errors.New("search index is not a directory")
)

// QueryError is a query term that does not parse.
type QueryError struct {
	// Term is the term as written, and N its place in the query, from 1.
	Term string
	N    int
	// Why says what is wrong with it.
	Why string
}

// Error names the term and what is wrong.
func (e *QueryError) Error() string {
	if e.N == 0 {
		return fmt.Sprintf("%v: %s", ErrQuery, e.Why)
	}
	return fmt.Sprintf("%v: term %d %q: %s", ErrQuery, e.N, e.Term, e.Why)
}

// Is reports whether target is ErrQuery.
func (e *QueryError) Is(target error) bool { return target == ErrQuery }
