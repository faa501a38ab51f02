package effect

import (
	"context"
	"fmt"
)

// Bracket describes the safe use of a resource: acquire it, use it, and
// release it. When acquire succeeds, release runs exactly once, after use,
// whether use succeeded, failed, died or was interrupted, and it is given
// use's Exit. Release runs even when the parent context is already
// cancelled: its context keeps the parent's values but not its
// cancellation, so a release that never returns holds up the run.
//
// When release fails, the run ends with release's failure and use's
// failures kept beside it (use's first): a failing release is reported, and
// it hides nothing. When acquire does not succeed, neither use nor release
// runs. A panic in use or release is a Die, after which release has still
// run exactly once.
func Bracket[S, R, A any](acquire Effect[S, R], use func(R) Effect[S, A], release func(R, Exit[A]) Effect[S, struct{}]) Effect[S, A] {
	if acquire.n == nil || use == nil || release == nil {
		return Die[S, A](fmt.Errorf("effect.Bracket: nil acquire, use or release: %w", ErrNilEffect))
	}
	return Effect[S, A]{n: &bracketNode[S, R, A]{acquire: acquire.n, use: use, release: release}}
}

type bracketNode[S, R, A any] struct {
	leaf[S, A]
	acquire node[S, R]
	use     func(R) Effect[S, A]
	release func(R, Exit[A]) Effect[S, struct{}]
}

func (n *bracketNode[S, R, A]) run(r *runner, s S) Exit[A] {
	acq := n.acquire.run(r, s)
	if acq.c != nil {
		return failed[A](acq.c)
	}
	res := acq.value
	used := runProtected(r, build(func() Effect[S, A] { return n.use(res) }), s)

	rr := newRunner(context.WithoutCancel(r.ctx))
	rr.depth = r.depth
	rel := runProtected(rr, build(func() Effect[S, struct{}] { return n.release(res, used) }), s)
	if rel.c == nil {
		return used
	}
	relc := &cause{interrupt: rel.c.interrupt}
	for _, err := range rel.c.fails {
		relc.fails = append(relc.fails, fmt.Errorf("release: %w", err))
	}
	for _, err := range rel.c.defects {
		relc.defects = append(relc.defects, fmt.Errorf("release: %w", err))
	}
	return failed[A](merge(used.c, relc))
}

func (n *bracketNode[S, R, A]) runAny(r *runner, s S) (any, *cause) { return box(n.run(r, s)) }

// build calls a function that builds an effect, turning a panic while
// building into a Die and a nil result into ErrNilEffect.
func build[S, A any](f func() Effect[S, A]) (n node[S, A]) {
	defer func() {
		if p := recover(); p != nil {
			n = &causeNode[S, A]{c: dieExit[A](panicked(p)).c}
		}
	}()
	e := f()
	if e.n == nil {
		return &causeNode[S, A]{c: dieExit[A](ErrNilEffect).c}
	}
	return e.n
}

// Provide adapts services: it describes e, which needs S, as work that needs
// R, given a way to get an S from an R. A program is written against the
// services it needs, and the edge provides them — the real model in
// production, a fake one in a test. A panic in f is a Die.
func Provide[R, S, A any](e Effect[S, A], f func(R) S) Effect[R, A] {
	if e.n == nil || f == nil {
		return Die[R, A](fmt.Errorf("effect.Provide: nil effect or function: %w", ErrNilEffect))
	}
	return Effect[R, A]{n: &provideNode[R, S, A]{inner: e.n, f: f}}
}

type provideNode[R, S, A any] struct {
	leaf[R, A]
	inner node[S, A]
	f     func(R) S
}

func (n *provideNode[R, S, A]) run(r *runner, rs R) Exit[A] {
	return n.inner.run(r, n.f(rs))
}

func (n *provideNode[R, S, A]) runAny(r *runner, rs R) (any, *cause) { return box(n.run(r, rs)) }
