//go:build unix

package sandbox

import "syscall"

// gitFileFlags opens a git file to read: a FIFO opens without waiting
// for a writer, a symbolic link does not open, and the descriptor is not
// inherited.
const gitFileFlags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// dirFlags opens a directory to list: a FIFO planted in its place opens
// without waiting for a writer (and is then no directory to list).
const dirFlags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
