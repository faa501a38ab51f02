package effect

import "errors"

// Map describes e followed by f applied to its value. f runs only when e
// succeeds; a panic in f is a Die.
func Map[S, A, B any](e Effect[S, A], f func(A) B) Effect[S, B] {
	switch {
	case e.n == nil:
		return Die[S, B](ErrNilEffect)
	case f == nil:
		return Die[S, B](errors.New("effect.Map: nil function"))
	}
	return Effect[S, B]{n: &mapNode[S, A, B]{inner: e.n, f: f}}
}

// AndThen describes e followed by the effect that f builds from its value.
// f runs only when e succeeds. Chains of any length, including effects that
// recurse through AndThen to loop, run in bounded stack.
func AndThen[S, A, B any](e Effect[S, A], f func(A) Effect[S, B]) Effect[S, B] {
	switch {
	case e.n == nil:
		return Die[S, B](ErrNilEffect)
	case f == nil:
		return Die[S, B](errors.New("effect.AndThen: nil function"))
	}
	return Effect[S, B]{n: &andThenNode[S, A, B]{inner: e.n, f: f}}
}

// CatchFail describes e, and when e ends with a Fail, the effect that h
// builds from the error. A Die or an Interrupt passes through untouched: a
// defect is not an expected failure, and cancellation is not handled by
// recovering from it.
func CatchFail[S, A any](e Effect[S, A], h func(error) Effect[S, A]) Effect[S, A] {
	switch {
	case e.n == nil:
		return Die[S, A](ErrNilEffect)
	case h == nil:
		return Die[S, A](errors.New("effect.CatchFail: nil function"))
	}
	return Effect[S, A]{n: &catchNode[S, A]{inner: e.n, h: h}}
}

// maxDepth bounds the typed recursion of chains on one goroutine. Below it,
// Map, AndThen and CatchFail run as direct calls on the Go stack, which is
// what makes them cheap; at it, the chain continues in runDeep, whose stack
// of continuations lives on the heap. A frame of typed recursion is well
// under 200 bytes, so the Go stack stays under a few hundred KiB.
const maxDepth = 1024

type mapNode[S, A, B any] struct {
	inner node[S, A]
	f     func(A) B
}

func (n *mapNode[S, A, B]) run(r *runner, s S) Exit[B] {
	if r.depth >= maxDepth {
		return runDeep[S, B](r, s, n)
	}
	r.depth++
	ex := n.inner.run(r, s)
	r.depth--
	if ex.c != nil {
		return Exit[B]{c: ex.c}
	}
	if r.interrupted() {
		return interruptExit[B](r.ctx, nil)
	}
	return Exit[B]{value: n.f(ex.value)}
}

func (n *mapNode[S, A, B]) split() (anyNode[S], frame[S]) { return n.inner, n }
func (n *mapNode[S, A, B]) runAny(r *runner, s S) (any, *cause) { return box(n.run(r, s)) }

func (n *mapNode[S, A, B]) resume(r *runner, v any, c *cause) (anyNode[S], any, *cause) {
	if c != nil {
		return nil, nil, c
	}
	if r.interrupted() {
		return nil, nil, interruptExit[B](r.ctx, nil).c
	}
	a, _ := v.(A) // v is nil only when A is an interface type holding nil
	return nil, n.f(a), nil
}

type andThenNode[S, A, B any] struct {
	inner node[S, A]
	f     func(A) Effect[S, B]
}

func (n *andThenNode[S, A, B]) run(r *runner, s S) Exit[B] {
	if r.depth >= maxDepth {
		return runDeep[S, B](r, s, n)
	}
	r.depth++
	defer func() { r.depth-- }()
	ex := n.inner.run(r, s)
	if ex.c != nil {
		return Exit[B]{c: ex.c}
	}
	if r.interrupted() {
		return interruptExit[B](r.ctx, nil)
	}
	next := n.f(ex.value)
	if next.n == nil {
		return dieExit[B](ErrNilEffect)
	}
	// The continuation runs one frame deeper: a loop written as recursion
	// through AndThen reaches maxDepth and goes on in runDeep.
	return next.n.run(r, s)
}

func (n *andThenNode[S, A, B]) split() (anyNode[S], frame[S]) { return n.inner, n }
func (n *andThenNode[S, A, B]) runAny(r *runner, s S) (any, *cause) { return box(n.run(r, s)) }

func (n *andThenNode[S, A, B]) resume(r *runner, v any, c *cause) (anyNode[S], any, *cause) {
	if c != nil {
		return nil, nil, c
	}
	if r.interrupted() {
		return nil, nil, interruptExit[B](r.ctx, nil).c
	}
	a, _ := v.(A)
	next := n.f(a)
	if next.n == nil {
		return nil, nil, dieExit[B](ErrNilEffect).c
	}
	return next.n, nil, nil
}

type catchNode[S, A any] struct {
	inner node[S, A]
	h     func(error) Effect[S, A]
}

func (n *catchNode[S, A]) run(r *runner, s S) Exit[A] {
	if r.depth >= maxDepth {
		return runDeep[S, A](r, s, n)
	}
	r.depth++
	defer func() { r.depth-- }()
	ex := n.inner.run(r, s)
	if ex.c == nil || ex.c.outcome() != OutcomeFail {
		return ex
	}
	next := n.h(ex.c.err())
	if next.n == nil {
		return dieExit[A](ErrNilEffect)
	}
	return next.n.run(r, s)
}

func (n *catchNode[S, A]) split() (anyNode[S], frame[S]) { return n.inner, n }
func (n *catchNode[S, A]) runAny(r *runner, s S) (any, *cause) { return box(n.run(r, s)) }

func (n *catchNode[S, A]) resume(r *runner, v any, c *cause) (anyNode[S], any, *cause) {
	if c == nil || c.outcome() != OutcomeFail {
		return nil, v, c
	}
	next := n.h(c.err())
	if next.n == nil {
		return nil, nil, dieExit[A](ErrNilEffect).c
	}
	return next.n, nil, nil
}
