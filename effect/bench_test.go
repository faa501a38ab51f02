package effect_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/effect"
)

// Each benchmark measures the raw baseline and the effect version in the
// same run and reports both, with the ratio effect/baseline.

const chainLen = 1000

// cost is the time and heap allocations per call of f, over n calls.
type cost struct{ ns, allocs float64 }

func measure(n int, f func()) cost {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range n {
		f()
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	return cost{
		ns:     float64(elapsed.Nanoseconds()) / float64(n),
		allocs: float64(after.Mallocs-before.Mallocs) / float64(n),
	}
}

// compare runs baseline and subject b.N times each and reports per-unit
// costs (units per call, e.g. chain steps) and the ratio.
func compare(b *testing.B, units int, baseline, subject func()) {
	b.Helper()
	b.ReportAllocs()
	base := measure(b.N, baseline)
	eff := measure(b.N, subject)
	u := float64(units)
	b.ReportMetric(base.ns/u, "base-ns/unit")
	b.ReportMetric(eff.ns/u, "ns/unit")
	b.ReportMetric(eff.allocs/u, "allocs/unit")
	b.ReportMetric(eff.ns/base.ns, "ratio")
}

var sink int

func closureChain(n int) func(int) int {
	f := func(x int) int { return x }
	for range n {
		prev := f
		f = func(x int) int { return prev(x) + 1 }
	}
	return f
}

// BenchmarkMapChain: Run of a prebuilt 1,000-step Map chain against a
// plain closure chain doing the same work. Unit: one step.
func BenchmarkMapChain(b *testing.B) {
	plain := closureChain(chainLen)
	e := effect.Succeed[S](0)
	for range chainLen {
		e = effect.Map(e, func(x int) int { return x + 1 })
	}
	ctx, cancel := context.WithCancel(context.Background()) // a real Done channel, checked every step
	defer cancel()
	compare(b, chainLen,
		func() { sink = plain(0) },
		func() { sink, _ = effect.Run(ctx, e, S{}).Value() })
}

// BenchmarkAndThenChain: Run of a prebuilt 1,000-step AndThen chain, each
// step building the next effect, against the closure chain. Unit: one step.
func BenchmarkAndThenChain(b *testing.B) {
	plain := closureChain(chainLen)
	e := effect.Succeed[S](0)
	for range chainLen {
		e = effect.AndThen(e, func(x int) effect.Effect[S, int] { return effect.Succeed[S](x + 1) })
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	compare(b, chainLen,
		func() { sink = plain(0) },
		func() { sink, _ = effect.Run(ctx, e, S{}).Value() })
}

// BenchmarkDeepMapChain: the same work past the typed-recursion depth, where
// the interpreter keeps continuations on the heap. Unit: one step.
func BenchmarkDeepMapChain(b *testing.B) {
	const n = 100_000
	plain := closureChain(n)
	e := effect.Succeed[S](0)
	for range n {
		e = effect.Map(e, func(x int) int { return x + 1 })
	}
	compare(b, n,
		func() { sink = plain(0) },
		func() { sink, _ = effect.Run(context.Background(), e, S{}).Value() })
}

func work(x int) int { return x*31 + 7 }

// BenchmarkZipPar100: 100 effects run concurrently with ZipPar (a balanced
// tree of pairs) against 100 goroutines and a WaitGroup. Unit: one effect.
func BenchmarkZipPar100(b *testing.B) {
	const n = 100
	leaves := make([]effect.Effect[S, int], n)
	for i := range leaves {
		leaves[i] = effect.FromAsync(func(context.Context, S) (int, error) { return work(i), nil })
	}
	var tree func([]effect.Effect[S, int]) effect.Effect[S, int]
	tree = func(es []effect.Effect[S, int]) effect.Effect[S, int] {
		if len(es) == 1 {
			return es[0]
		}
		m := len(es) / 2
		return effect.Map(effect.ZipPar(tree(es[:m]), tree(es[m:])), func(p effect.Pair[int, int]) int { return p.First + p.Second })
	}
	e := tree(leaves)
	compare(b, n,
		func() {
			var wg sync.WaitGroup
			results := make([]int, n)
			for i := range n {
				wg.Go(func() { results[i] = work(i) })
			}
			wg.Wait()
			sum := 0
			for _, r := range results {
				sum += r
			}
			sink = sum
		},
		func() { sink, _ = effect.Run(context.Background(), e, S{}).Value() })
}

// BenchmarkAll100: All of 100 effects against 100 goroutines and a
// WaitGroup filling a slice of results (errgroup without the error).
// Unit: one effect.
func BenchmarkAll100(b *testing.B) {
	const n = 100
	es := make([]effect.Effect[S, int], n)
	for i := range es {
		es[i] = effect.FromAsync(func(context.Context, S) (int, error) { return work(i), nil })
	}
	e := effect.All(es...)
	compare(b, n,
		func() {
			var wg sync.WaitGroup
			results := make([]int, n)
			for i := range n {
				wg.Go(func() { results[i] = work(i) })
			}
			wg.Wait()
			sink = results[n-1]
		},
		func() {
			v, _ := effect.Run(context.Background(), e, S{}).Value()
			sink = v[n-1]
		})
}

// BenchmarkRace100: a Race of 100 effects against 100 goroutines sending to
// a channel, the first result taken and all awaited. Unit: one racer.
func BenchmarkRace100(b *testing.B) {
	const n = 100
	racers := make([]effect.Effect[S, int], n)
	for i := range racers {
		racers[i] = effect.FromAsync(func(context.Context, S) (int, error) { return work(i), nil })
	}
	e := effect.Race(racers...)
	compare(b, n,
		func() {
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			first := make(chan int, n)
			for i := range n {
				wg.Go(func() {
					if ctx.Err() == nil {
						first <- work(i)
					}
				})
			}
			sink = <-first
			cancel()
			wg.Wait()
		},
		func() { sink, _ = effect.Run(context.Background(), e, S{}).Value() })
}

// BenchmarkRetry3: a failing effect retried to 3 attempts with zero backoff
// against a plain loop of 3 calls. Unit: one attempt.
func BenchmarkRetry3(b *testing.B) {
	call := func() (int, error) { return 0, errBoom }
	e := effect.Retry(effect.FromAsync(func(context.Context, S) (int, error) { return call() }), effect.Policy{MaxAttempts: 3})
	compare(b, 3,
		func() {
			for range 3 {
				if _, err := call(); err == nil {
					break
				}
			}
		},
		func() { effect.Run(context.Background(), e, S{}) })
}

// BenchmarkWithSpanNoProvider: WithSpan with no tracer provider configured,
// against the same effect without a span. Unit: one run.
func BenchmarkWithSpanNoProvider(b *testing.B) {
	bare := effect.FromAsync(func(context.Context, S) (int, error) { return 1, nil })
	spanned := effect.WithSpan(bare, "quiet")
	compare(b, 1,
		func() { sink, _ = effect.Run(context.Background(), bare, S{}).Value() },
		func() { sink, _ = effect.Run(context.Background(), spanned, S{}).Value() })
}
