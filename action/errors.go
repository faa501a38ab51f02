package action

import "errors"

// ErrBadOption is matched by NewWorkspace's error when one of its options
// was given a bad value; the error names the option.
var ErrBadOption = errors.New("bad option")
