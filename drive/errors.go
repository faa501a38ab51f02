package drive

import "errors"

// ErrBadPrompt: a prompt read for a thread is empty, or over MaxPrompt.
var ErrBadPrompt = errors.New("bad prompt")
