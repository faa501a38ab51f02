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
	// ErrLiveRefused: a live rerun cannot go on past its divergence: the
	// original's file effects cannot be undone in its scratch copy (a
	// kept content is missing, or the workspace changed since), or it
	// would act in the workspace itself rather than a copy.
	ErrLiveRefused = errors.New("the live rerun is refused")
	// ErrOverride: an override the rerun cannot make: a tool named that
	// the original was not offered (an override narrows the tools, never
	// widens them), or one this harness cannot offer.
	ErrOverride = errors.New("the override is refused")
	// ErrScratch: a live rerun cut off midway goes on in the scratch copy
	// it recorded, and that copy is gone, or is not the one it recorded.
	ErrScratch = errors.New("the live rerun's scratch copy")
	// ErrServe: the original holds no result at the seq a call is served
	// from.
	ErrServe = errors.New("no recorded result at that seq")
)
