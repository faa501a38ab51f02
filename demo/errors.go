package demo

import "errors"

// The errors of package demo, checked with errors.Is.
var (
	// ErrDirNotEmpty: the directory to make the demo in holds files.
	ErrDirNotEmpty = errors.New("not empty; the demo needs an empty or new directory")
)
