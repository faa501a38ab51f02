package audit

import (
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
)

// The errors of this package: what a log or its snapshots fail an audit
// with.

// ErrUnverified: a thread's log fails an audit. The error is a
// *VerifyError naming the first fact that fails.
var ErrUnverified = errors.New("log does not verify")

// VerifyError names the first fact of a log that fails verification.
type VerifyError struct {
	Thread string
	Seq    uint64
	Kind   facts.Kind
	Cause  string
	Reason string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("verify %s: seq %d (%s, cause %s): %s: %v", e.Thread, e.Seq, e.Kind, e.Cause, e.Reason, ErrUnverified)
}

// Is reports whether target is ErrUnverified.
func (e *VerifyError) Is(target error) bool { return target == ErrUnverified }

// ErrSnapshotMismatch: a snapshot kept beside a thread's log is not the
// fold of the log at its seq — its record is damaged, or it was made by a
// fold that read the log otherwise. (thread.ErrBadSnapshot is the store's
// own: a record it cannot read.) A resume never uses a damaged
// one (it folds the log instead); one that reads but is wrong, only a
// verifier can tell. The error is a *SnapshotMismatchError.
var ErrSnapshotMismatch = errors.New("snapshot is not the fold of the log")

// SnapshotMismatchError names a snapshot that is not the fold of its
// thread's log at its seq.
type SnapshotMismatchError struct {
	Thread string
	Seq    uint64
	Reason string
}

func (e *SnapshotMismatchError) Error() string {
	return fmt.Sprintf("verify %s: the snapshot at seq %d: %s: %v", e.Thread, e.Seq, e.Reason, ErrSnapshotMismatch)
}

// Is reports whether target is ErrSnapshotMismatch.
func (e *SnapshotMismatchError) Is(target error) bool { return target == ErrSnapshotMismatch }

// ErrRereadDiffers: a lean verifier (Verifier.Lean) read the log again
// from its store and found a fact that is not the one it verified at
// that seq — the store changed under it.
var ErrRereadDiffers = errors.New("the log read again is not the log verified")
