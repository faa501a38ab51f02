package seal

import (
	"errors"
	"fmt"
	"time"
)

// The errors of this package: check them with errors.Is.
var (
	// ErrBadKey: a key file, or a public key given as text, that is not
	// an ed25519 key this package writes.
	ErrBadKey = errors.New("not an ed25519 key")
	// ErrKeyExposed: the key file may be read by someone other than its
	// owner (its mode allows group or others, or it is not a regular
	// file); it is not used.
	ErrKeyExposed = errors.New("the key file is not private to its owner")
	// ErrWitnessBroken: a witness log whose chain does not hold — a line
	// changed, removed or put in — or a line that is not an entry. The
	// error is a *WitnessError naming the line.
	ErrWitnessBroken = errors.New("the witness log is broken")
	// ErrSealBroken: a log that disagrees with a trusted seal of it, or
	// a seal whose signature does not verify. The error is a
	// *BrokenError naming the seal.
	ErrSealBroken = errors.New("the log is not the one sealed")
	// ErrNoSealByKey: the keys a verifier named sealed nothing of the
	// thread.
	ErrNoSealByKey = errors.New("no seal of the thread by the keys named")
	// ErrSealedAhead: the person's own witness log holds a seal of the
	// thread, in this store, at a seq its log does not reach, or at a seq
	// where the log now holds another fact: the store lost or changed
	// facts it had kept (a damaged write-ahead log, a restored backup).
	// A Resume is refused on it (Sealer.CheckHead): driving the thread
	// from there would run again what its lost facts had done.
	ErrSealedAhead = errors.New("the log is behind or beside the person's own seal of it")
	// ErrNotAnchored: the seal is in the witness log, but the Sealer's
	// Anchor (a git note, say) failed to keep it elsewhere.
	ErrNotAnchored = errors.New("sealed, but not kept beyond the witness log")
)

// WitnessError names the first line of a witness log that breaks it.
type WitnessError struct {
	Path   string
	Line   int
	Reason string
}

func (e *WitnessError) Error() string {
	return fmt.Sprintf("%s line %d: %s: %v", e.Path, e.Line, e.Reason, ErrWitnessBroken)
}

// Is reports whether target is ErrWitnessBroken.
func (e *WitnessError) Is(target error) bool { return target == ErrWitnessBroken }

// BrokenError names a seal the log fails: its seq, when it was made, by
// which key, and where it is kept.
type BrokenError struct {
	Thread  string
	Seq     uint64
	At      time.Time
	Key     PublicKey
	Witness string
	Line    int
	Reason  string
}

func (e *BrokenError) Error() string {
	return fmt.Sprintf("thread %s: the seal at seq %d (sealed %s by %s, %s line %d): %s: %v",
		e.Thread, e.Seq, e.At.UTC().Format(time.RFC3339), e.Key, e.Witness, e.Line, e.Reason, ErrSealBroken)
}

// Is reports whether target is ErrSealBroken.
func (e *BrokenError) Is(target error) bool { return target == ErrSealBroken }
