package harnesstest

import (
	"bytes"
	"sync"
)

// LockedBuffer is a bytes.Buffer that a process's output can be copied
// into (exec.Cmd's Stdout, Stderr) while the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

// Write appends p.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
