package action

import "errors"

// ErrStillRunning is matched by Boundary.Interrupted's error when the
// action found in doubt is still running: the process that began it, on
// this machine, is alive (a worker that lost its lease while frozen or
// cut off, say). Recording it as interrupted would let a retry run its
// command a second time while the first may still be running; nothing is
// recorded until that process is gone.
var ErrStillRunning = errors.New("the action is still running in another process")

// ErrBadOption is matched by NewWorkspace's error when one of its options
// was given a bad value; the error names the option.
var ErrBadOption = errors.New("bad option")
