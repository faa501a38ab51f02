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
	if acquire.run == nil || use == nil || release == nil {
		return Die[S, A](fmt.Errorf("effect.Bracket: nil acquire, use or release: %w", ErrNilEffect))
	}
	return Effect[S, A]{run: func(r *runner, s S) Exit[A] {
		acq := acquire.run(r, s)
		if acq.c != nil {
			return failed[A](acq.c)
		}
		res := acq.value
		used := runProtected(r, build(func() Effect[S, A] { return use(res) }), s)

		rr := &runner{ctx: context.WithoutCancel(r.ctx), depth: r.depth}
		rel := runProtected(rr, build(func() Effect[S, struct{}] { return release(res, used) }), s)
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
	}}
}

// build calls a function that builds an effect, turning a panic while
// building into a Die. (A nil result is left to runProtected.)
func build[S, A any](f func() Effect[S, A]) (e Effect[S, A]) {
	defer func() {
		if p := recover(); p != nil {
			e = Die[S, A](panicked(p))
		}
	}()
	return f()
}

// Provide adapts services: it describes e, which needs S, as work that needs
// R, given a way to get an S from an R. A program is written against the
// services it needs, and the edge provides them — the real model in
// production, a fake one in a test. A panic in f is a Die.
func Provide[R, S, A any](e Effect[S, A], f func(R) S) Effect[R, A] {
	if e.run == nil || f == nil {
		return Die[R, A](fmt.Errorf("effect.Provide: nil effect or function: %w", ErrNilEffect))
	}
	inner := e.run
	return Effect[R, A]{run: func(r *runner, rs R) Exit[A] { return inner(r, f(rs)) }}
}
