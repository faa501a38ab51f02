package rerun

import "errors"

// The errors of the package, wrapped with the thread they concern; check
// them with errors.Is.
var (
	// ErrNoTurns: the thread to rerun has no user message to offer.
	ErrNoTurns = errors.New("the thread has no message to rerun")
	// ErrNotRerun: a thread compared as a rerun records no rerun.
	ErrNotRerun = errors.New("not a rerun")
	// ErrOtherRerun: the thread a rerun would be written to exists, and
	// is not that rerun (another thread, or a rerun under another key).
	ErrOtherRerun = errors.New("the rerun's thread id is taken")
	// ErrBlobMissing: a live rerun needs a kept content to undo the
	// original's file effects in its scratch workspace, and the store
	// does not hold it.
	ErrBlobMissing = errors.New("a kept content needed to undo the original's effects is missing")
	// ErrServe: the original holds no result at the seq a call is served
	// from.
	ErrServe = errors.New("no recorded result at that seq")
)
