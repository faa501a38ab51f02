package effect

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// Effect is a description of work that needs the services S and succeeds
// with an A. It does nothing until [Run] executes it, and it can be run any
// number of times; each run does the work again.
//
// The zero Effect is not a valid description: running it ends with a Die
// matching [ErrNilEffect].
type Effect[S, A any] struct {
	// run executes the description with typed values on the Go stack.
	run func(r *runner, s S) Exit[A]
	// chain is set for Map, AndThen and CatchFail: it lets the deep
	// interpreter (deep.go) run the same description with a heap stack once
	// the Go stack is deep.
	chain chain[S]
}

// runner carries what a run needs below the description: the context and
// the depth of typed recursion so far on the current goroutine. A runner is
// used by one goroutine at a time; effects that start goroutines or derive
// contexts give each their own runner.
type runner struct {
	ctx   context.Context
	depth int
}

// interrupted reports whether the run's context is done. It neither blocks
// nor locks (a cancelled context's Err is an atomic load), so a
// cancellation is noticed between any two steps of a chain.
func (r *runner) interrupted() bool { return r.ctx.Err() != nil }

// Run executes the description e with the services s and reports how it
// ended. It is the one function of the package that does work.
//
// A panic anywhere inside the run — in a function given to FromAsync, Map,
// AndThen or any other combinator, on this goroutine or on one that a
// combinator started — ends the run with a Die instead of unwinding into
// the caller. Run returns only after every goroutine it started has ended.
func Run[S, A any](ctx context.Context, e Effect[S, A], s S) Exit[A] {
	return runProtected(&runner{ctx: ctx}, e, s)
}

// runProtected runs n and turns a panic into a Die. The depth of typed
// recursion is restored, since a panic skipped the frames that would have
// unwound it.
func runProtected[S, A any](r *runner, e Effect[S, A], s S) (ex Exit[A]) {
	if e.run == nil {
		return dieExit[A](ErrNilEffect)
	}
	depth := r.depth
	defer func() {
		if p := recover(); p != nil {
			r.depth = depth
			ex = dieExit[A](panicked(p))
		}
	}()
	return e.run(r, s)
}

// Succeed describes work that succeeds with a, needing nothing.
func Succeed[S, A any](a A) Effect[S, A] {
	return Effect[S, A]{run: func(*runner, S) Exit[A] { return Exit[A]{value: a} }}
}

// Fail describes work that ends with the expected error err. Fail(nil) is a
// programming error: running it ends with a Die that says so.
func Fail[S, A any](err error) Effect[S, A] {
	if err == nil {
		return Die[S, A](errors.New("effect.Fail: nil error"))
	}
	c := &cause{fails: []error{err}}
	return Effect[S, A]{run: func(*runner, S) Exit[A] { return Exit[A]{c: c} }}
}

// Die describes work that ends with the defect err: a bug, never retried
// and never caught by CatchFail. Die(nil) dies with a message saying so.
func Die[S, A any](err error) Effect[S, A] {
	if err == nil {
		err = errors.New("effect.Die: nil error")
	}
	c := dieExit[A](err).c
	return Effect[S, A]{run: func(*runner, S) Exit[A] { return Exit[A]{c: c} }}
}

// FromAsync describes the work done by f, which receives the run's context
// and services. Its result becomes the Exit:
//
//   - a nil error is a success, even if the context was cancelled meanwhile
//     (the work was done);
//   - an error marked with [Defect] is a Die;
//   - any other error returned after the context was cancelled is an
//     Interrupt, keeping the error for diagnosis;
//   - any other error is a Fail.
//
// f is not called at all when the context is already cancelled. A panic in
// f is a Die.
func FromAsync[S, A any](f func(ctx context.Context, s S) (A, error)) Effect[S, A] {
	if f == nil {
		return Die[S, A](errors.New("effect.FromAsync: nil function"))
	}
	return Effect[S, A]{run: func(r *runner, s S) Exit[A] {
		if r.interrupted() {
			return interruptExit[A](r.ctx, nil)
		}
		a, err := f(r.ctx, s)
		if err == nil {
			return Exit[A]{value: a}
		}
		return classify[A](r.ctx, err)
	}}
}

// classify turns an error returned by work into an Exit: a marked defect is
// a Die, an error after cancellation is an Interrupt, the rest is a Fail.
func classify[A any](ctx context.Context, err error) Exit[A] {
	var d *DefectError
	switch {
	case errors.As(err, &d):
		return dieExit[A](err)
	case ctx.Err() != nil:
		return interruptExit[A](ctx, err)
	default:
		return failExit[A](err)
	}
}

// String names the description's type, never its contents.
func (e Effect[S, A]) String() string {
	if e.run == nil {
		return "Effect(nil)"
	}
	return fmt.Sprintf("Effect[%v, %v]", reflect.TypeFor[S](), reflect.TypeFor[A]())
}
