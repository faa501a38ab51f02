package safegit

import "errors"

// ErrUnsafe is a repository's config that Command cannot make safe: a
// filter or merge driver whose name holds "=", which "-c" cannot name.
var ErrUnsafe = errors.New("repository config that would run a program")
