package effect

import (
	"context"
	"errors"
	"fmt"
)

// Effect is a description of work that needs the services S and succeeds
// with an A. It does nothing until [Run] executes it, and it can be run any
// number of times; each run does the work again.
//
// The zero Effect is not a valid description: running it ends with a Die
// matching [ErrNilEffect].
type Effect[S, A any] struct {
	n node[S, A]
}

// node is one constructor's description. run executes it with typed values
// on the Go stack; the methods of anyNode let the deep interpreter (deep.go)
// run the same node with a heap stack once a chain is too deep.
type node[S, A any] interface {
	anyNode[S]
	run(r *runner, s S) Exit[A]
}

// runner carries what a run needs below the description: the context, its
// Done channel (read once), and the depth of typed recursion so far on the
// current goroutine. A runner is used by one goroutine at a time; effects
// that start goroutines give each its own runner.
type runner struct {
	ctx   context.Context
	done  <-chan struct{}
	depth int
}

func newRunner(ctx context.Context) *runner {
	return &runner{ctx: ctx, done: ctx.Done()}
}

// interrupted reports whether the run's context is done. It does not block
// and does not take a lock: a cancelled context is noticed between any two
// steps of a chain at the cost of one non-blocking channel receive.
func (r *runner) interrupted() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Run executes the description e with the services s and reports how it
// ended. It is the one function of the package that does work.
//
// A panic anywhere inside the run — in a function given to FromAsync, Map,
// AndThen or any other combinator, on this goroutine or on one that a
// combinator started — ends the run with a Die instead of unwinding into
// the caller. Run returns only after every goroutine it started has ended.
func Run[S, A any](ctx context.Context, e Effect[S, A], s S) Exit[A] {
	return runProtected(newRunner(ctx), e.n, s)
}

// runProtected runs n and turns a panic into a Die. The depth of typed
// recursion is restored, since a panic skipped the frames that would have
// unwound it.
func runProtected[S, A any](r *runner, n node[S, A], s S) (ex Exit[A]) {
	if n == nil {
		return dieExit[A](ErrNilEffect)
	}
	depth := r.depth
	defer func() {
		if p := recover(); p != nil {
			r.depth = depth
			ex = dieExit[A](panicked(p))
		}
	}()
	return n.run(r, s)
}

// Succeed describes work that succeeds with a, needing nothing.
func Succeed[S, A any](a A) Effect[S, A] {
	return Effect[S, A]{n: &succeedNode[S, A]{value: a}}
}

type succeedNode[S, A any] struct {
	leaf[S, A]
	value A
}

func (n *succeedNode[S, A]) run(*runner, S) Exit[A] { return Exit[A]{value: n.value} }
func (n *succeedNode[S, A]) runAny(r *runner, s S) (any, *cause) { return box(n.run(r, s)) }

// Fail describes work that ends with the expected error err. Fail(nil) is a
// programming error: running it ends with a Die that says so.
func Fail[S, A any](err error) Effect[S, A] {
	if err == nil {
		return Die[S, A](errors.New("effect.Fail: nil error"))
	}
	return Effect[S, A]{n: &causeNode[S, A]{c: &cause{fails: []error{err}}}}
}

// Die describes work that ends with the defect err: a bug, never retried
// and never caught by CatchFail. Die(nil) dies with a message saying so.
func Die[S, A any](err error) Effect[S, A] {
	if err == nil {
		err = errors.New("effect.Die: nil error")
	}
	var d *DefectError
	if !errors.As(err, &d) {
		err = Defect(err)
	}
	return Effect[S, A]{n: &causeNode[S, A]{c: &cause{defects: []error{err}}}}
}

type causeNode[S, A any] struct {
	leaf[S, A]
	c *cause
}

func (n *causeNode[S, A]) run(*runner, S) Exit[A] { return Exit[A]{c: n.c} }
func (n *causeNode[S, A]) runAny(r *runner, s S) (any, *cause) { return box(n.run(r, s)) }

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
	return Effect[S, A]{n: &asyncNode[S, A]{f: f}}
}

type asyncNode[S, A any] struct {
	leaf[S, A]
	f func(context.Context, S) (A, error)
}

func (n *asyncNode[S, A]) run(r *runner, s S) Exit[A] {
	if r.interrupted() {
		return interruptExit[A](r.ctx, nil)
	}
	a, err := n.f(r.ctx, s)
	if err == nil {
		return Exit[A]{value: a}
	}
	return classify[A](r.ctx, err)
}

func (n *asyncNode[S, A]) runAny(r *runner, s S) (any, *cause) { return box(n.run(r, s)) }

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

// leaf marks a node that is not a chain: the deep interpreter does not
// split it but runs it whole, as one typed call (its runAny method).
type leaf[S, A any] struct{}

func (leaf[S, A]) split() (anyNode[S], frame[S]) { return nil, nil }

// String names the description, never its contents.
func (e Effect[S, A]) String() string {
	if e.n == nil {
		return "Effect(nil)"
	}
	return fmt.Sprintf("Effect[%T]", e.n)
}
