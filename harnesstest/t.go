package harnesstest

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
)

// T is what the kit's constructors need of a test: a *testing.T,
// *testing.B or *testing.F is one, and so is the T that Run gives an
// Example or a program, which has no *testing.T. A failed requirement
// calls Errorf and then FailNow, which does not return.
type T interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Errorf(format string, args ...any)
	FailNow()
}

// Run calls fn with a T of its own, outside go test — in an Example, say
// — and returns what failed in it, or nil: each Errorf's message, a
// FailNow (which ends fn where it was called, as in a test), a panic.
// When fn has ended, the functions given to Cleanup run, last first,
// then the directories TempDir made are removed. Run waits for fn; fn
// must not call FailNow from another goroutine.
func Run(fn func(t T)) error {
	r := &runT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.Errorf("panic: %v", p)
			}
		}()
		fn(r)
	}()
	<-done
	r.finish()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed && len(r.errs) == 0 {
		r.errs = append(r.errs, ErrFailNow)
	}
	return errors.Join(r.errs...)
}

// runT is Run's T.
type runT struct {
	mu       sync.Mutex // guards the fields below
	errs     []error
	failed   bool
	cleanups []func()
	dirs     []string
}

func (r *runT) Helper() {}

func (r *runT) TempDir() string {
	dir, err := os.MkdirTemp("", "harnesstest-")
	if err != nil {
		r.Errorf("TempDir: %v", err)
		r.FailNow()
	}
	r.mu.Lock()
	r.dirs = append(r.dirs, dir)
	r.mu.Unlock()
	return dir
}

func (r *runT) Cleanup(fn func()) {
	r.mu.Lock()
	r.cleanups = append(r.cleanups, fn)
	r.mu.Unlock()
}

func (r *runT) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Errorf(format, args...))
	r.failed = true
	r.mu.Unlock()
}

// FailNow marks fn failed and ends its goroutine, as testing.T's does.
func (r *runT) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

// finish runs the cleanups, last first (a cleanup that fails or panics
// is recorded and the rest still run), then removes the directories.
func (r *runT) finish() {
	for {
		r.mu.Lock()
		n := len(r.cleanups)
		if n == 0 {
			r.mu.Unlock()
			break
		}
		fn := r.cleanups[n-1]
		r.cleanups = r.cleanups[:n-1]
		r.mu.Unlock()
		r.cleanup(fn)
	}
	r.mu.Lock()
	dirs := r.dirs
	r.dirs = nil
	r.mu.Unlock()
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			r.Errorf("TempDir: %v", err)
		}
	}
}

// cleanup runs fn on a goroutine of its own, so that a FailNow in it
// ends fn alone.
func (r *runT) cleanup(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.Errorf("panic in cleanup: %v", p)
			}
		}()
		fn()
	}()
	<-done
}
