package safegit

import "errors"

// ErrUnsafe is a repository's config that Command cannot make safe: a
// filter or merge driver whose name holds "=", which "-c" cannot name.
var ErrUnsafe = errors.New("repository config that would run a program")

// ErrStalled is a git call of the harness's own that did not finish in
// its time (callLimit), or a file git reads first that is no file (a FIFO
// where .git/HEAD should be): something in the repository blocks git, and
// waiting would wait forever.
var ErrStalled = errors.New("git would wait forever: something in the repository blocks it")
