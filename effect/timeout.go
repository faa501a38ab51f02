package effect

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TimeoutError is the error of the Fail that [Timeout] produces. It matches
// [ErrTimeout] with errors.Is, and also whatever error the timed-out work
// returned once its context was cancelled.
type TimeoutError struct {
	// After is the duration the work was given.
	After time.Duration
	// Err is what the work returned after its context was cancelled; nil
	// when it returned nothing or was not started.
	Err error
}

func (e *TimeoutError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("effect: timeout after %v (work returned: %v)", e.After, e.Err)
	}
	return fmt.Sprintf("effect: timeout after %v", e.After)
}

// Unwrap returns ErrTimeout and the work's error.
func (e *TimeoutError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrTimeout}
	}
	return []error{ErrTimeout, e.Err}
}

// Timeout describes e given at most d. When time is up, e's context is
// cancelled and e is awaited; the run then ends with a Fail whose error is
// a *[TimeoutError] matching [ErrTimeout] — an expected failure, which
// [Retry] may repeat. A cancellation of the parent context is still an
// Interrupt.
//
// Timeout starts no goroutine: e runs on the caller's goroutine under a
// context with a deadline. Go cannot preempt a function that ignores its
// context, so such a body delays the timeout until it returns by itself. A
// body whose last step succeeds after the deadline has passed still
// succeeds: its work was done, and reporting a timeout would invite a retry
// to do it twice. But a chain notices cancellation between its steps (see
// Map): when a slow step succeeds late and more steps follow it inside the
// Timeout, the chain stops there and the Exit is a timeout, which a Retry
// around it repeats — late work included. Put Timeout directly around the
// step that may hang, and chain after it.
//
// A non-positive d times out at once without running e.
func Timeout[S, A any](e Effect[S, A], d time.Duration) Effect[S, A] {
	if e.run == nil {
		return Die[S, A](ErrNilEffect)
	}
	inner := e.run
	return Effect[S, A]{run: func(r *runner, s S) Exit[A] {
		if r.interrupted() {
			return interruptExit[A](r.ctx, nil)
		}
		if d <= 0 {
			return failExit[A](&TimeoutError{After: d})
		}
		ctx, cancel := context.WithTimeoutCause(r.ctx, d, ErrTimeout)
		defer cancel()
		ex := inner(&runner{ctx: ctx, depth: r.depth}, s)
		if ex.c == nil || ex.c.kind() != ExitInterrupt || r.ctx.Err() != nil ||
			!errors.Is(context.Cause(ctx), ErrTimeout) {
			return ex
		}
		var workErr error
		var ie *interruptError
		if errors.As(ex.c.interrupt, &ie) {
			workErr = ie.err
		}
		return failExit[A](&TimeoutError{After: d, Err: workErr})
	}}
}
