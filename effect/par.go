package effect

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Pair holds the values of the two sides of [ZipPar].
type Pair[A, B any] struct {
	First  A
	Second B
}

// ZipPar describes a and b run concurrently, succeeding with both values.
//
// When one side fails or dies, the other is interrupted (its context is
// cancelled) and awaited. No failure is lost: every Fail and Die of either
// side is kept in the Exit, while a side's interruption caused by its
// sibling's failure is not counted as a failure. If either side died, the
// whole Exit is a Die — not retried, not caught — with the Fails still
// visible in [Exit.Failures] and through errors.Is.
//
// b runs on a new goroutine and a on the caller's; ZipPar returns only after
// both have ended, and a panic on either becomes a Die.
func ZipPar[S, A, B any](a Effect[S, A], b Effect[S, B]) Effect[S, Pair[A, B]] {
	if a.run == nil || b.run == nil {
		return Die[S, Pair[A, B]](ErrNilEffect)
	}
	return Effect[S, Pair[A, B]]{run: func(r *runner, s S) Exit[Pair[A, B]] {
		if r.interrupted() {
			return interruptExit[Pair[A, B]](r.ctx, nil)
		}
		ctx, cancel := context.WithCancel(r.ctx)
		defer cancel()
		var exB Exit[B]
		done := make(chan struct{})
		go func() {
			defer close(done)
			exB = runProtected(&runner{ctx: ctx}, b, s)
			if exB.c != nil {
				cancel()
			}
		}()
		exA := runProtected(&runner{ctx: ctx, depth: r.depth}, a, s)
		if exA.c != nil {
			cancel()
		}
		<-done
		if exA.c == nil && exB.c == nil {
			return Exit[Pair[A, B]]{value: Pair[A, B]{exA.value, exB.value}}
		}
		return failed[Pair[A, B]](merge(exA.c, exB.c))
	}}
}

// All describes the effects run concurrently, succeeding with their
// values in the order the effects were given — errgroup with results.
//
// The effects share one cancel: the first to fail or die interrupts the
// rest (their context is cancelled) and All returns once every one that
// started has ended. As with [ZipPar], no failure is lost: every Fail and
// Die is kept in the Exit, an effect interrupted by a sibling's failure is
// not counted as failing, and a Die anywhere makes the whole Exit a Die.
// All of no effects succeeds with an empty slice.
//
// The first effect runs on the caller's goroutine and each other on a
// goroutine of its own; [AllLimit] bounds how many run at once.
func All[S, A any](effects ...Effect[S, A]) Effect[S, []A] {
	return AllLimit(0, effects...)
}

// AllLimit is [All] with at most limit effects running at once (limit ≤ 0:
// no bound). The effects start in order, each when one before it has
// ended; after a failure, those not started yet never start.
func AllLimit[S, A any](limit int, effects ...Effect[S, A]) Effect[S, []A] {
	es, err := checked(effects)
	if err != nil {
		return Die[S, []A](err)
	}
	return Effect[S, []A]{run: func(r *runner, s S) Exit[[]A] {
		if r.interrupted() {
			return interruptExit[[]A](r.ctx, nil)
		}
		exits := make([]Exit[A], len(es))
		ran := fan(r, len(es), limit, func(run *runner, i int) bool {
			exits[i] = runProtected(run, es[i], s)
			return exits[i].c != nil
		})
		var c *cause
		for _, ex := range exits {
			c = merge(c, ex.c)
		}
		if c == nil && ran < len(es) {
			// Effects were left unstarted, and nothing failed: the
			// caller's context was cancelled.
			c = interruptExit[[]A](r.ctx, nil).c
		}
		if c != nil {
			return failed[[]A](c)
		}
		values := make([]A, len(es))
		for i, ex := range exits {
			values[i] = ex.value
		}
		return Exit[[]A]{value: values}
	}}
}

// checked is effects copied, or ErrNilEffect when one is the zero Effect.
func checked[S, A any](effects []Effect[S, A]) ([]Effect[S, A], error) {
	es := make([]Effect[S, A], len(effects))
	for i, e := range effects {
		if e.run == nil {
			return nil, ErrNilEffect
		}
		es[i] = e
	}
	return es, nil
}

// fan runs body(runner, i) for i in [0, n) concurrently, at most limit at
// once (limit ≤ 0: all), under one context derived from r's: the branch 0
// on the caller's goroutine, the others on goroutines of their own. A body
// that returns true cancels that context; a branch not started by then is
// never started. fan returns, when every branch started has ended, how
// many started. It is the machinery of [All]
// and [Race]: one cancel for all branches, every goroutine awaited.
func fan(r *runner, n, limit int, body func(run *runner, i int) (stop bool)) int {
	if n == 0 {
		return 0
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	if limit <= 0 || limit > n {
		limit = n
	}
	var (
		next    atomic.Int64 // the next branch to start
		started atomic.Int64
		wg      sync.WaitGroup
	)
	worker := func(run *runner) {
		for {
			i := int(next.Add(1) - 1)
			if i >= n || ctx.Err() != nil {
				return
			}
			started.Add(1)
			if body(run, i) {
				cancel()
			}
		}
	}
	// One allocation for the runners of every worker.
	runners := make([]runner, limit)
	for k := 1; k < limit; k++ {
		runners[k].ctx = ctx
		wg.Go(func() { worker(&runners[k]) })
	}
	runners[0] = runner{ctx: ctx, depth: r.depth}
	worker(&runners[0])
	wg.Wait()
	return int(started.Load())
}

// Race describes the effects run concurrently, succeeding with the first
// success. The losers are interrupted and awaited before Race returns. If
// none succeeds, every failure is reported (joined, as [ZipPar] does). A
// defect in any racer is a bug, not a lost race: it ends the race with a
// Die at once, interrupting the rest.
//
// Race with no effects describes a programming error and ends with a Die.
// It shares its machinery with [All]: one cancel for all branches.
func Race[S, A any](effects ...Effect[S, A]) Effect[S, A] {
	if len(effects) == 0 {
		return Die[S, A](errors.New("effect.Race: no effects"))
	}
	racers, err := checked(effects)
	if err != nil {
		return Die[S, A](err)
	}
	if len(racers) == 1 {
		return racers[0]
	}
	return Effect[S, A]{run: func(r *runner, s S) Exit[A] { return race(r, s, racers) }}
}

func race[S, A any](r *runner, s S, racers []Effect[S, A]) Exit[A] {
	if r.interrupted() {
		return interruptExit[A](r.ctx, nil)
	}
	var decided atomic.Int64 // 1 + the first racer to succeed or die; 0 while none has
	exits := make([]Exit[A], len(racers))
	fan(r, len(racers), 0, func(run *runner, i int) bool {
		ex := runProtected(run, racers[i], s)
		exits[i] = ex
		return (ex.c == nil || ex.c.kind() == ExitDie) && decided.CompareAndSwap(0, int64(i)+1)
	})
	d := int(decided.Load()) - 1
	if d >= 0 && exits[d].c == nil {
		return exits[d]
	}
	var c *cause
	if d >= 0 {
		c = exits[d].c
	}
	for i, ex := range exits {
		if i != d {
			c = merge(c, ex.c)
		}
	}
	return failed[A](c)
}
