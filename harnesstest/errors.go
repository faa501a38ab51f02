package harnesstest

import "errors"

// ErrFailNow is Run's error when fn called FailNow with no message.
var ErrFailNow = errors.New("harnesstest: FailNow")
