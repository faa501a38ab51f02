package effect

import (
	"context"
	"errors"
	"sync"
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

// Race describes the effects run concurrently, succeeding with the first
// success. The losers are interrupted and awaited before Race returns. If
// none succeeds, every failure is reported (joined, as [ZipPar] does). A
// defect in any racer is a bug, not a lost race: it ends the race with a
// Die at once, interrupting the rest.
//
// Race with no effects describes a programming error and ends with a Die.
func Race[S, A any](effects ...Effect[S, A]) Effect[S, A] {
	if len(effects) == 0 {
		return Die[S, A](errors.New("effect.Race: no effects"))
	}
	racers := make([]Effect[S, A], len(effects))
	for i, e := range effects {
		if e.run == nil {
			return Die[S, A](ErrNilEffect)
		}
		racers[i] = e
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
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	var (
		mu       sync.Mutex // guards decided and exits
		decided  = -1       // the first racer to succeed or die
		exits    = make([]Exit[A], len(racers))
		wg       sync.WaitGroup
		finished = func(i int, ex Exit[A]) {
			mu.Lock()
			exits[i] = ex
			if decided < 0 && (ex.c == nil || ex.c.outcome() == OutcomeDie) {
				decided = i
				cancel()
			}
			mu.Unlock()
		}
	)
	for i, racer := range racers[1:] {
		wg.Go(func() { finished(i+1, runProtected(&runner{ctx: ctx}, racer, s)) })
	}
	finished(0, runProtected(&runner{ctx: ctx, depth: r.depth}, racers[0], s))
	wg.Wait()
	if decided >= 0 && exits[decided].c == nil {
		return exits[decided]
	}
	var c *cause
	if decided >= 0 {
		c = exits[decided].c
	}
	for i, ex := range exits {
		if i != decided {
			c = merge(c, ex.c)
		}
	}
	return failed[A](c)
}
