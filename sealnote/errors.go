package sealnote

import "errors"

// ErrUnusable: the repository's notes of seals cannot be used — the ref
// is symbolic (it would lead the write elsewhere), not a commit, or a
// note is larger than MaxNoteBytes.
var ErrUnusable = errors.New("the repository's seal notes cannot be used")
