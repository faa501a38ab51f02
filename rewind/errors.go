package rewind

import "errors"

// The errors of this package: check them with errors.Is.
var (
	// ErrMoved: the thread's log grew since the preview a person confirmed
	// was made; the undo it showed is not the one that would run now.
	ErrMoved = errors.New("the thread moved since the preview")

	// ErrUndoRefused: an undo would overwrite a change the thread did not make,
	// or cannot restore a path whose bytes were not kept. The error is an
	// *UndoError naming the paths.
	ErrUndoRefused = errors.New("undo refused")

	// ErrMidStep: a fork's last seq falls inside what one step of the
	// thread wrote (the fact after it has the same cause): a fork cut there
	// would hold a step half done. The error is a *MidStepError.
	ErrMidStep = errors.New("the cut falls inside one step")
)
