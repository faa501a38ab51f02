package effect

import "errors"

// Map describes e followed by f applied to its value. f runs only when e
// succeeds and the run's context is not done; a panic in f is a Die.
//
// Map, AndThen and CatchFail notice a cancelled context between steps: a
// step that succeeds after the context was cancelled ends the chain there,
// as an Interrupt, and its value is not passed on. Work that must be
// recorded once done belongs in one step whose result the caller keeps.
func Map[S, A, B any](e Effect[S, A], f func(A) B) Effect[S, B] {
	switch {
	case e.run == nil:
		return Die[S, B](ErrNilEffect)
	case f == nil:
		return Die[S, B](errors.New("effect.Map: nil function"))
	}
	n := &mapNode[S, A, B]{inner: e, f: f}
	inner := e.run
	return Effect[S, B]{chain: n, run: func(r *runner, s S) Exit[B] {
		if r.depth >= maxDepth {
			return runDeep[S, B](r, s, n)
		}
		r.depth++
		ex := inner(r, s)
		r.depth--
		if ex.c != nil {
			return Exit[B]{c: ex.c}
		}
		if r.interrupted() {
			return interruptExit[B](r.ctx, nil)
		}
		return Exit[B]{value: f(ex.value)}
	}}
}

// AndThen describes e followed by the effect that f builds from its value.
// f runs only when e succeeds. Chains of any length, including effects that
// recurse through AndThen to loop, run in bounded stack.
func AndThen[S, A, B any](e Effect[S, A], f func(A) Effect[S, B]) Effect[S, B] {
	switch {
	case e.run == nil:
		return Die[S, B](ErrNilEffect)
	case f == nil:
		return Die[S, B](errors.New("effect.AndThen: nil function"))
	}
	n := &andThenNode[S, A, B]{inner: e, f: f}
	inner := e.run
	return Effect[S, B]{chain: n, run: func(r *runner, s S) Exit[B] {
		if r.depth >= maxDepth {
			return runDeep[S, B](r, s, n)
		}
		r.depth++
		ex := inner(r, s)
		if ex.c != nil {
			r.depth--
			return Exit[B]{c: ex.c}
		}
		if r.interrupted() {
			r.depth--
			return interruptExit[B](r.ctx, nil)
		}
		next := f(ex.value)
		if next.run == nil {
			r.depth--
			return dieExit[B](ErrNilEffect)
		}
		// The continuation runs one frame deeper: a loop written as
		// recursion through AndThen reaches maxDepth and goes on in runDeep.
		out := next.run(r, s)
		r.depth--
		return out
	}}
}

// CatchFail describes e, and when e ends with a Fail, the effect that h
// builds from the error. A Die or an Interrupt passes through untouched: a
// defect is not an expected failure, and cancellation is not handled by
// recovering from it.
func CatchFail[S, A any](e Effect[S, A], h func(error) Effect[S, A]) Effect[S, A] {
	switch {
	case e.run == nil:
		return Die[S, A](ErrNilEffect)
	case h == nil:
		return Die[S, A](errors.New("effect.CatchFail: nil function"))
	}
	n := &catchNode[S, A]{inner: e, h: h}
	inner := e.run
	return Effect[S, A]{chain: n, run: func(r *runner, s S) Exit[A] {
		if r.depth >= maxDepth {
			return runDeep[S, A](r, s, n)
		}
		r.depth++
		ex := inner(r, s)
		if ex.c == nil || ex.c.kind() != ExitFail {
			r.depth--
			return ex
		}
		next := h(ex.c.err())
		if next.run == nil {
			r.depth--
			return dieExit[A](ErrNilEffect)
		}
		out := next.run(r, s)
		r.depth--
		return out
	}}
}

// maxDepth bounds the typed recursion of chains on one goroutine. Below it,
// Map, AndThen and CatchFail run as direct calls on the Go stack, which is
// what makes them cheap; at it, the chain continues in runDeep, whose stack
// of continuations lives on the heap. A frame of typed recursion is well
// under 200 bytes, so the Go stack stays under a few hundred KiB.
const maxDepth = 1024

// The chain nodes below are what the deep interpreter sees of Map, AndThen
// and CatchFail; the typed closures above do the same work on the Go stack.

type mapNode[S, A, B any] struct {
	inner Effect[S, A]
	f     func(A) B
}

func (n *mapNode[S, A, B]) innerChain() chain[S]                  { return n.inner.chain }
func (n *mapNode[S, A, B]) runInner(r *runner, s S) (any, *cause) { return box(n.inner.run(r, s)) }

func (n *mapNode[S, A, B]) resume(r *runner, s S, v any, c *cause) (chain[S], any, *cause) {
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
	inner Effect[S, A]
	f     func(A) Effect[S, B]
}

func (n *andThenNode[S, A, B]) innerChain() chain[S]                  { return n.inner.chain }
func (n *andThenNode[S, A, B]) runInner(r *runner, s S) (any, *cause) { return box(n.inner.run(r, s)) }

func (n *andThenNode[S, A, B]) resume(r *runner, s S, v any, c *cause) (chain[S], any, *cause) {
	if c != nil {
		return nil, nil, c
	}
	if r.interrupted() {
		return nil, nil, interruptExit[B](r.ctx, nil).c
	}
	a, _ := v.(A)
	return continueWith(r, s, n.f(a))
}

type catchNode[S, A any] struct {
	inner Effect[S, A]
	h     func(error) Effect[S, A]
}

func (n *catchNode[S, A]) innerChain() chain[S]                  { return n.inner.chain }
func (n *catchNode[S, A]) runInner(r *runner, s S) (any, *cause) { return box(n.inner.run(r, s)) }

func (n *catchNode[S, A]) resume(r *runner, s S, v any, c *cause) (chain[S], any, *cause) {
	if c == nil || c.kind() != ExitFail {
		return nil, v, c
	}
	return continueWith(r, s, n.h(c.err()))
}
