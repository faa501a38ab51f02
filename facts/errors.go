package facts

import "errors"

// The sentinel errors of this package. Every error returned here wraps one of
// them; check with errors.Is.
var (
	// ErrInvalid reports a fact or draft whose envelope breaks a rule: a
	// missing or malformed kind or cause, a zero seq, a time that cannot be
	// stored.
	ErrInvalid = errors.New("invalid fact")

	// ErrPayload reports a payload that does not fit its kind: unknown
	// fields, wrong types, a missing required field, or bytes that are not
	// one well-formed msgpack value.
	ErrPayload = errors.New("payload does not fit its kind")

	// ErrCorrupt reports stored bytes that cannot be a fact this program
	// wrote: truncated, a checksum mismatch, lengths that run past the end.
	ErrCorrupt = errors.New("corrupt fact record")

	// ErrVersion reports a stored record in a format version this program
	// does not know, most likely written by a newer program.
	ErrVersion = errors.New("unknown fact format version")

	// ErrHashMismatch reports a parsed fact whose recomputed hash differs
	// from the hash it carries: the line was edited, or its payload does not
	// reproduce the bytes that were hashed.
	ErrHashMismatch = errors.New("fact hash mismatch")
)

// errTurnsNotSet: a tree's bound in model turns is its root's
// configuration (--max-turns), only raised (budget.raised).
var errTurnsNotSet = errors.New("turns: a bound in model turns is the thread's configuration's (MaxTurns), raised by budget.raised; budget.set and budget.shared carry none")
