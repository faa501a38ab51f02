package effect_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/seed-7cc7a084/harness/effect"
)

type S = struct{}

// runs returns an effect that counts its runs and ends as end says.
func runs(n *atomic.Int64, end func(ctx context.Context) (int, error)) effect.Effect[S, int] {
	return effect.FromAsync(func(ctx context.Context, _ S) (int, error) {
		n.Add(1)
		return end(ctx)
	})
}

func failing(context.Context) (int, error) { return 0, errBoom }

func TestRetry(t *testing.T) {
	t.Run("a Fail with one retry left runs twice", func(t *testing.T) {
		var n atomic.Int64
		ex := effect.Run(context.Background(), effect.Retry(runs(&n, failing), effect.Policy{MaxAttempts: 2}), S{})
		require.True(t, ex.IsFail())
		require.ErrorIs(t, ex.Err(), errBoom)
		require.EqualValues(t, 2, n.Load())
		require.Equal(t, 2, effect.Attempts(ex.Err()))
	})
	t.Run("a Die with three retries left runs once", func(t *testing.T) {
		var n atomic.Int64
		e := runs(&n, func(context.Context) (int, error) { return 0, effect.Defect(errBoom) })
		ex := effect.Run(context.Background(), effect.Retry(e, effect.Policy{MaxAttempts: 4}), S{})
		require.True(t, ex.IsDie())
		require.EqualValues(t, 1, n.Load())
	})
	t.Run("a panic is not retried", func(t *testing.T) {
		var n atomic.Int64
		e := runs(&n, func(context.Context) (int, error) { panic("bug") })
		ex := effect.Run(context.Background(), effect.Retry(e, effect.Policy{MaxAttempts: 4}), S{})
		require.True(t, ex.IsDie())
		require.EqualValues(t, 1, n.Load())
	})
	t.Run("success after failures", func(t *testing.T) {
		var n atomic.Int64
		e := runs(&n, func(context.Context) (int, error) {
			if n.Load() < 3 {
				return 0, errBoom
			}
			return 42, nil
		})
		v, err := effect.Run(context.Background(), effect.Retry(e, effect.Policy{MaxAttempts: 5}), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, 42, v)
		require.EqualValues(t, 3, n.Load())
	})
	t.Run("an Interrupt stops retrying at once", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int64
		e := runs(&n, func(context.Context) (int, error) { cancel(); return 0, errBoom })
		ex := effect.Run(ctx, effect.Retry(e, effect.Policy{MaxAttempts: 5}), S{})
		require.True(t, ex.IsInterrupt())
		require.EqualValues(t, 1, n.Load())
	})
	t.Run("a backoff wait ends when the context does", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int64
		time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		ex := effect.Run(ctx, effect.Retry(runs(&n, failing), effect.Policy{MaxAttempts: 5, Backoff: time.Hour}), S{})
		require.True(t, ex.IsInterrupt())
		require.ErrorIs(t, ex.Err(), errBoom, "the last failure is kept")
		require.Less(t, time.Since(start), 30*time.Second) // not the hour (room for a loaded machine)
		require.EqualValues(t, 1, n.Load())
	})
	t.Run("the predicate decides", func(t *testing.T) {
		var n atomic.Int64
		other := errors.New("not retryable")
		e := runs(&n, func(context.Context) (int, error) { return 0, other })
		p := effect.Policy{MaxAttempts: 5, RetryIf: func(err error) bool { return errors.Is(err, errBoom) }}
		ex := effect.Run(context.Background(), effect.Retry(e, p), S{})
		require.ErrorIs(t, ex.Err(), other)
		require.EqualValues(t, 1, n.Load())
	})
	t.Run("backoff grows, with jitter within bounds", func(t *testing.T) {
		var n atomic.Int64
		var at []time.Time
		e := runs(&n, func(context.Context) (int, error) { at = append(at, time.Now()); return 0, errBoom })
		p := effect.Policy{MaxAttempts: 4, Backoff: 10 * time.Millisecond, Multiplier: 2, MaxBackoff: 25 * time.Millisecond, Jitter: 0.5}
		effect.Run(context.Background(), effect.Retry(e, p), S{})
		require.Len(t, at, 4)
		// Waits are 10, 20 and 25 (capped) ms, each shortened by at most half.
		for i, want := range []time.Duration{10, 20, 25} {
			got := at[i+1].Sub(at[i])
			require.GreaterOrEqual(t, got, want*time.Millisecond/2, "wait %d", i)
		}
	})
	t.Run("a cap on total time", func(t *testing.T) {
		var n atomic.Int64
		p := effect.Policy{MaxAttempts: 100, Backoff: 20 * time.Millisecond, Multiplier: 1, MaxElapsed: 50 * time.Millisecond}
		ex := effect.Run(context.Background(), effect.Retry(runs(&n, failing), p), S{})
		require.True(t, ex.IsFail())
		// Attempts at 0, 20 and 40 ms at best; a wait to 60 ms would pass
		// the cap. A loaded machine oversleeps, which can only mean fewer
		// attempts, never a wait past the cap nor the 100 allowed.
		require.GreaterOrEqual(t, n.Load(), int64(1))
		require.LessOrEqual(t, n.Load(), int64(3), "no wait passes the cap")
	})
	t.Run("a bad policy is a Die naming the field", func(t *testing.T) {
		for field, p := range map[string]effect.Policy{
			"MaxAttempts": {MaxAttempts: -1},
			"Backoff":     {Backoff: -time.Second},
			"Jitter":      {Jitter: 1.5},
			"MaxElapsed":  {MaxElapsed: -1},
			"Multiplier":  {Multiplier: -2},
			"MaxBackoff":  {MaxBackoff: -1},
		} {
			var n atomic.Int64
			ex := effect.Run(context.Background(), effect.Retry(runs(&n, failing), p), S{})
			require.True(t, ex.IsDie(), field)
			require.ErrorContains(t, ex.Err(), "Policy."+field)
			require.Zero(t, n.Load())
		}
	})
}

// TestRetryWait: Policy.Wait lengthens or refuses a wait from the failure
// (as a server's Retry-After does), and Policy.OnWait is told of each wait.
func TestRetryWait(t *testing.T) {
	errSlow := errors.New("slow down")
	type call struct {
		attempt int
		planned time.Duration
	}
	type notice struct {
		attempt int
		wait    time.Duration
		err     error
	}
	t.Run("a wait lengthened by the failure is waited, and told", func(t *testing.T) {
		var n atomic.Int64
		var at []time.Time
		e := runs(&n, func(context.Context) (int, error) {
			at = append(at, time.Now())
			if n.Load() < 3 {
				return 0, errSlow
			}
			return 7, nil
		})
		var calls []call
		var told []notice
		p := effect.Policy{MaxAttempts: 5, Backoff: 10 * time.Millisecond, Multiplier: 2,
			Wait: func(err error, attempt int, planned time.Duration) (time.Duration, error) {
				calls = append(calls, call{attempt, planned})
				if errors.Is(err, errSlow) && attempt == 1 {
					return 60 * time.Millisecond, nil
				}
				return planned, nil
			},
			OnWait: func(attempt int, wait time.Duration, err error) { told = append(told, notice{attempt, wait, err}) },
		}
		v, err := effect.Run(context.Background(), effect.Retry(e, p), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, 7, v)
		require.Equal(t, []call{{1, 10 * time.Millisecond}, {2, 20 * time.Millisecond}}, calls,
			"the backoff grows from its own plan, not from the lengthened wait")
		require.Equal(t, []notice{{1, 60 * time.Millisecond, errSlow}, {2, 20 * time.Millisecond, errSlow}}, told)
		require.Len(t, at, 3)
		require.GreaterOrEqual(t, at[1].Sub(at[0]), 60*time.Millisecond, "the lengthened wait is honoured")
		require.GreaterOrEqual(t, at[2].Sub(at[1]), 20*time.Millisecond)
	})
	t.Run("a refused wait ends the retries with Wait's error", func(t *testing.T) {
		var n atomic.Int64
		tooLong := errors.New("the server asked for an hour")
		var told []notice
		p := effect.Policy{MaxAttempts: 5,
			Wait: func(err error, _ int, _ time.Duration) (time.Duration, error) {
				return 0, errors.Join(tooLong, err)
			},
			OnWait: func(attempt int, wait time.Duration, err error) { told = append(told, notice{attempt, wait, err}) },
		}
		ex := effect.Run(context.Background(), effect.Retry(runs(&n, failing), p), S{})
		require.True(t, ex.IsFail())
		require.ErrorIs(t, ex.Err(), tooLong)
		require.ErrorIs(t, ex.Err(), errBoom, "Wait's error wraps the failure")
		require.Equal(t, 1, effect.Attempts(ex.Err()))
		require.EqualValues(t, 1, n.Load())
		require.Empty(t, told, "no wait is made, so none is told")
	})
	t.Run("zero waits are told too; no wait is told when no retry follows", func(t *testing.T) {
		var n atomic.Int64
		var told []notice
		p := effect.Policy{MaxAttempts: 3,
			OnWait: func(attempt int, wait time.Duration, err error) { told = append(told, notice{attempt, wait, err}) }}
		ex := effect.Run(context.Background(), effect.Retry(runs(&n, failing), p), S{})
		require.True(t, ex.IsFail())
		require.EqualValues(t, 3, n.Load())
		require.Equal(t, []notice{{1, 0, errBoom}, {2, 0, errBoom}}, told)

		told = nil
		p.RetryIf = func(error) bool { return false }
		effect.Run(context.Background(), effect.Retry(runs(&n, failing), p), S{})
		require.Empty(t, told)
	})
	t.Run("MaxElapsed caps the lengthened wait", func(t *testing.T) {
		var n atomic.Int64
		p := effect.Policy{MaxAttempts: 5, MaxElapsed: time.Second,
			Wait: func(error, int, time.Duration) (time.Duration, error) { return time.Hour, nil }}
		start := time.Now()
		ex := effect.Run(context.Background(), effect.Retry(runs(&n, failing), p), S{})
		require.True(t, ex.IsFail())
		require.ErrorIs(t, ex.Err(), errBoom)
		require.EqualValues(t, 1, n.Load())
		require.Less(t, time.Since(start), 30*time.Second) // not the hour (room for a loaded machine)
	})
	t.Run("a lengthened wait ends when the context does", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int64
		p := effect.Policy{MaxAttempts: 5,
			Wait:   func(error, int, time.Duration) (time.Duration, error) { return time.Hour, nil },
			OnWait: func(int, time.Duration, error) { cancel() }}
		ex := effect.Run(ctx, effect.Retry(runs(&n, failing), p), S{})
		require.True(t, ex.IsInterrupt())
		require.ErrorIs(t, ex.Err(), errBoom)
		require.EqualValues(t, 1, n.Load())
	})
	t.Run("a negative wait is a Die naming Policy.Wait", func(t *testing.T) {
		var n atomic.Int64
		p := effect.Policy{MaxAttempts: 5,
			Wait: func(error, int, time.Duration) (time.Duration, error) { return -time.Second, nil }}
		ex := effect.Run(context.Background(), effect.Retry(runs(&n, failing), p), S{})
		require.True(t, ex.IsDie())
		require.ErrorContains(t, ex.Err(), "Policy.Wait")
		require.EqualValues(t, 1, n.Load())
	})
}

func TestTimeout(t *testing.T) {
	defer goleak.VerifyNone(t)
	waitForCancel := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	t.Run("time up: the body is cancelled and awaited, the Exit is a Fail", func(t *testing.T) {
		var n atomic.Int64
		var returned atomic.Bool
		e := runs(&n, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			time.Sleep(10 * time.Millisecond)
			returned.Store(true)
			return 0, ctx.Err()
		})
		ex := effect.Run(context.Background(), effect.Timeout(e, 10*time.Millisecond), S{})
		require.True(t, ex.IsFail(), "exit: %v", ex)
		require.ErrorIs(t, ex.Err(), effect.ErrTimeout)
		require.ErrorIs(t, ex.Err(), context.DeadlineExceeded, "the body's own error is kept")
		require.NotErrorIs(t, ex.Err(), effect.ErrInterrupted)
		require.True(t, returned.Load(), "the body returned before Run did")
	})
	t.Run("Retry repeats a timeout", func(t *testing.T) {
		var n atomic.Int64
		e := effect.Retry(effect.Timeout(runs(&n, waitForCancel), 5*time.Millisecond), effect.Policy{MaxAttempts: 3})
		ex := effect.Run(context.Background(), e, S{})
		require.ErrorIs(t, ex.Err(), effect.ErrTimeout)
		require.EqualValues(t, 3, n.Load())
	})
	t.Run("a body that ignores its context delays the timeout", func(t *testing.T) {
		var n atomic.Int64
		e := runs(&n, func(context.Context) (int, error) { time.Sleep(60 * time.Millisecond); return 0, errBoom })
		start := time.Now()
		ex := effect.Run(context.Background(), effect.Timeout(e, 5*time.Millisecond), S{})
		require.GreaterOrEqual(t, time.Since(start), 60*time.Millisecond)
		require.ErrorIs(t, ex.Err(), effect.ErrTimeout)
		require.ErrorIs(t, ex.Err(), errBoom)
	})
	t.Run("a late success is still a success", func(t *testing.T) {
		var n atomic.Int64
		e := runs(&n, func(context.Context) (int, error) { time.Sleep(30 * time.Millisecond); return 7, nil })
		v, err := effect.Run(context.Background(), effect.Timeout(e, 5*time.Millisecond), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, 7, v)
	})
	t.Run("in time", func(t *testing.T) {
		v, err := effect.Run(context.Background(), effect.Timeout(effect.Succeed[S](3), time.Minute), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, 3, v)
	})
	t.Run("the parent's cancellation is an Interrupt, not a timeout", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Millisecond, cancel)
		var n atomic.Int64
		ex := effect.Run(ctx, effect.Retry(effect.Timeout(runs(&n, waitForCancel), time.Minute), effect.Policy{MaxAttempts: 3}), S{})
		require.True(t, ex.IsInterrupt())
		require.EqualValues(t, 1, n.Load(), "an interruption is not retried")
	})
}

func TestZipPar(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("both sides run concurrently", func(t *testing.T) {
		var started sync.WaitGroup
		started.Add(2)
		side := func(v int) effect.Effect[S, int] {
			return effect.FromAsync(func(ctx context.Context, _ S) (int, error) {
				started.Done()
				started.Wait() // returns only when both sides are running at once
				return v, nil
			})
		}
		p, err := effect.Run(context.Background(), effect.ZipPar(side(1), effect.Map(side(2), func(n int) string { return "two" })), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, effect.Pair[int, string]{First: 1, Second: "two"}, p)
	})
	for _, failingSide := range []string{"first", "second"} {
		t.Run("the "+failingSide+" side fails: the other is interrupted and awaited", func(t *testing.T) {
			var sawCancel, returned atomic.Bool
			started := make(chan struct{})
			slow := effect.FromAsync(func(ctx context.Context, _ S) (int, error) {
				close(started)
				select {
				case <-ctx.Done():
					sawCancel.Store(true)
				case <-time.After(10 * time.Second):
				}
				time.Sleep(5 * time.Millisecond)
				returned.Store(true)
				return 0, ctx.Err()
			})
			fail := effect.FromAsync(func(context.Context, S) (int, error) { <-started; return 0, errBoom })
			a, b := fail, slow
			if failingSide == "second" {
				a, b = slow, fail
			}
			ex := effect.Run(context.Background(), effect.ZipPar(a, b), S{})
			require.True(t, ex.IsFail(), "the sibling's interruption is not a failure: %v", ex)
			require.Equal(t, []error{errBoom}, ex.Failures())
			require.True(t, sawCancel.Load())
			require.True(t, returned.Load(), "awaited before ZipPar returned")
		})
	}
	t.Run("every failure is kept", func(t *testing.T) {
		errOther := errors.New("other")
		ex := effect.Run(context.Background(), effect.ZipPar(effect.Fail[S, int](errBoom), effect.Fail[S, int](errOther)), S{})
		require.True(t, ex.IsFail())
		require.ErrorIs(t, ex.Err(), errBoom)
		require.ErrorIs(t, ex.Err(), errOther)
		require.Len(t, ex.Failures(), 2)
	})
	t.Run("a Die wins over a Fail, which stays visible", func(t *testing.T) {
		// The first side fails; the second, interrupted by that failure,
		// then panics: both are kept.
		started := make(chan struct{})
		e := effect.ZipPar(
			effect.FromAsync(func(context.Context, S) (int, error) { <-started; return 0, errBoom }),
			effect.FromAsync(func(ctx context.Context, _ S) (int, error) { close(started); <-ctx.Done(); panic("bug") }))
		var n atomic.Int64
		retried := effect.CatchFail(effect.Retry(e, effect.Policy{MaxAttempts: 3}), func(error) effect.Effect[S, effect.Pair[int, int]] {
			n.Add(1)
			return effect.Succeed[S](effect.Pair[int, int]{})
		})
		ex := effect.Run(context.Background(), retried, S{})
		require.True(t, ex.IsDie(), "not retried, not caught: %v", ex)
		require.Zero(t, n.Load())
		require.ErrorIs(t, ex.Err(), errBoom)
		require.Len(t, ex.Failures(), 1)
		require.Len(t, ex.Defects(), 1)
	})
	t.Run("a panic on the new goroutine is a Die, not a crash", func(t *testing.T) {
		e := effect.ZipPar(effect.Succeed[S](1), effect.FromAsync(func(context.Context, S) (int, error) { panic("on the goroutine") }))
		ex := effect.Run(context.Background(), e, S{})
		require.True(t, ex.IsDie())
		require.ErrorContains(t, ex.Err(), "on the goroutine")
	})
	t.Run("the parent's cancellation is an Interrupt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		wait := effect.FromAsync(func(ctx context.Context, _ S) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		time.AfterFunc(5*time.Millisecond, cancel)
		ex := effect.Run(ctx, effect.ZipPar(wait, wait), S{})
		require.True(t, ex.IsInterrupt())
	})
}

func TestRace(t *testing.T) {
	defer goleak.VerifyNone(t)
	sleepy := func(d time.Duration, v int, returned *atomic.Int64) effect.Effect[S, int] {
		return effect.FromAsync(func(ctx context.Context, _ S) (int, error) {
			defer returned.Add(1)
			select {
			case <-time.After(d):
				return v, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
	}
	t.Run("the first success wins; losers are interrupted and awaited", func(t *testing.T) {
		var returned atomic.Int64
		e := effect.Race(sleepy(time.Minute, 1, &returned), sleepy(time.Millisecond, 2, &returned), sleepy(time.Minute, 3, &returned))
		start := time.Now()
		v, err := effect.Run(context.Background(), e, S{}).Get()
		require.NoError(t, err)
		require.Equal(t, 2, v)
		require.EqualValues(t, 3, returned.Load(), "every racer returned before Race did")
		require.Less(t, time.Since(start), 30*time.Second, "the losers were interrupted, not waited out") // room for a loaded machine
	})
	t.Run("a failure does not end the race", func(t *testing.T) {
		var returned atomic.Int64
		v, err := effect.Run(context.Background(), effect.Race(effect.Fail[S, int](errBoom), sleepy(5*time.Millisecond, 9, &returned)), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, 9, v)
	})
	t.Run("all fail: every failure is reported", func(t *testing.T) {
		errs := []error{errors.New("a"), errors.New("b"), errors.New("c")}
		ex := effect.Run(context.Background(), effect.Race(effect.Fail[S, int](errs[0]), effect.Fail[S, int](errs[1]), effect.Fail[S, int](errs[2])), S{})
		require.True(t, ex.IsFail())
		require.ElementsMatch(t, errs, ex.Failures())
	})
	t.Run("a defect ends the race", func(t *testing.T) {
		var returned atomic.Int64
		e := effect.Race(sleepy(10*time.Second, 1, &returned), effect.FromAsync(func(context.Context, S) (int, error) { panic("bug") }))
		ex := effect.Run(context.Background(), e, S{})
		require.True(t, ex.IsDie())
		require.EqualValues(t, 1, returned.Load())
	})
	t.Run("no racers is a Die", func(t *testing.T) {
		require.True(t, effect.Run(context.Background(), effect.Race[S, int](), S{}).IsDie())
	})
}

func TestAll(t *testing.T) {
	defer goleak.VerifyNone(t)
	value := func(v int) effect.Effect[S, int] {
		return effect.FromAsync(func(context.Context, S) (int, error) { return v, nil })
	}
	waitForCancel := func(returned *atomic.Int64) effect.Effect[S, int] {
		return effect.FromAsync(func(ctx context.Context, _ S) (int, error) {
			defer returned.Add(1)
			<-ctx.Done()
			return 0, ctx.Err()
		})
	}
	t.Run("the values come in the order of the effects", func(t *testing.T) {
		es := make([]effect.Effect[S, int], 50)
		for i := range es {
			es[i] = value(i * i)
		}
		for _, limit := range []int{0, 1, 3, 50, 99} {
			v, err := effect.Run(context.Background(), effect.AllLimit(limit, es...), S{}).Get()
			require.NoError(t, err, "limit %d", limit)
			require.Len(t, v, 50)
			for i := range v {
				require.Equal(t, i*i, v[i], "limit %d", limit)
			}
		}
	})
	t.Run("they run at once", func(t *testing.T) {
		var started sync.WaitGroup
		started.Add(5)
		es := make([]effect.Effect[S, int], 5)
		for i := range es {
			es[i] = effect.FromAsync(func(context.Context, S) (int, error) {
				started.Done()
				started.Wait() // returns only when all five run at once
				return i, nil
			})
		}
		v, err := effect.Run(context.Background(), effect.All(es...), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, []int{0, 1, 2, 3, 4}, v)
	})
	t.Run("no effects succeed with none", func(t *testing.T) {
		v, err := effect.Run(context.Background(), effect.All[S, int](), S{}).Get()
		require.NoError(t, err)
		require.Empty(t, v)
	})
	t.Run("the first failure interrupts the rest, which are awaited", func(t *testing.T) {
		var returned atomic.Int64
		started := make(chan struct{}, 3)
		wait := effect.FromAsync(func(ctx context.Context, _ S) (int, error) {
			started <- struct{}{}
			defer returned.Add(1)
			<-ctx.Done()
			return 0, ctx.Err()
		})
		fail := effect.FromAsync(func(context.Context, S) (int, error) {
			for range 3 {
				<-started
			}
			return 0, errBoom
		})
		ex := effect.Run(context.Background(), effect.All(wait, wait, fail, wait), S{})
		require.True(t, ex.IsFail(), "the siblings' interruption is not a failure: %v", ex)
		require.Equal(t, []error{errBoom}, ex.Failures())
		require.EqualValues(t, 3, returned.Load(), "every sibling returned before All did")
	})
	t.Run("with a limit, what was not started after a failure never starts", func(t *testing.T) {
		var n atomic.Int64
		ex := effect.Run(context.Background(), effect.AllLimit(1, runs(&n, func(context.Context) (int, error) { return 1, nil }),
			runs(&n, failing), runs(&n, failing), runs(&n, func(context.Context) (int, error) { return 1, nil })), S{})
		require.True(t, ex.IsFail())
		require.Equal(t, []error{errBoom}, ex.Failures())
		require.EqualValues(t, 2, n.Load())
	})
	t.Run("no more than the limit run at once", func(t *testing.T) {
		var running, most atomic.Int64
		es := make([]effect.Effect[S, int], 40)
		for i := range es {
			es[i] = effect.FromAsync(func(context.Context, S) (int, error) {
				now := running.Add(1)
				for {
					m := most.Load()
					if now <= m || most.CompareAndSwap(m, now) {
						break
					}
				}
				time.Sleep(100 * time.Microsecond)
				running.Add(-1)
				return i, nil
			})
		}
		v, err := effect.Run(context.Background(), effect.AllLimit(3, es...), S{}).Get()
		require.NoError(t, err)
		require.Len(t, v, 40)
		require.LessOrEqual(t, most.Load(), int64(3))
	})
	t.Run("a Die wins, and the Fail stays visible", func(t *testing.T) {
		// A failure after the first, of an effect whose context the first
		// cancelled, is that effect's interruption; a panic is kept.
		started := make(chan struct{})
		ex := effect.Run(context.Background(), effect.All(
			effect.FromAsync(func(context.Context, S) (int, error) { <-started; return 0, errBoom }),
			effect.FromAsync(func(ctx context.Context, _ S) (int, error) { close(started); <-ctx.Done(); panic("bug") })), S{})
		require.True(t, ex.IsDie(), "%v", ex)
		require.Len(t, ex.Failures(), 1)
		require.Len(t, ex.Defects(), 1)
	})
	t.Run("a panic on a goroutine is a Die, not a crash", func(t *testing.T) {
		ex := effect.Run(context.Background(), effect.All(value(1), effect.FromAsync(func(context.Context, S) (int, error) { panic("on the goroutine") })), S{})
		require.True(t, ex.IsDie())
		require.ErrorContains(t, ex.Err(), "on the goroutine")
	})
	t.Run("the parent's cancellation is an Interrupt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var returned atomic.Int64
		time.AfterFunc(5*time.Millisecond, cancel)
		ex := effect.Run(ctx, effect.AllLimit(2, waitForCancel(&returned), waitForCancel(&returned), value(3)), S{})
		require.True(t, ex.IsInterrupt(), "%v", ex)
		require.EqualValues(t, 2, returned.Load())
		ex = effect.Run(ctx, effect.All(value(1)), S{})
		require.True(t, ex.IsInterrupt(), "cancelled before it runs")
	})
	t.Run("a zero effect is a Die", func(t *testing.T) {
		require.True(t, effect.Run(context.Background(), effect.All(value(1), effect.Effect[S, int]{}), S{}).IsDie())
	})
}

func TestBracket(t *testing.T) {
	defer goleak.VerifyNone(t)
	type record struct {
		acquired, released atomic.Int64
		useExit            effect.Exit[string]
		releaseCtxErr      error
	}
	bracket := func(rec *record, use effect.Effect[S, string], releaseErr error) effect.Effect[S, string] {
		acquire := effect.FromAsync(func(context.Context, S) (int, error) { rec.acquired.Add(1); return 7, nil })
		return effect.Bracket(acquire,
			func(res int) effect.Effect[S, string] { return use },
			func(res int, ex effect.Exit[string]) effect.Effect[S, struct{}] {
				return effect.FromAsync(func(ctx context.Context, _ S) (struct{}, error) {
					rec.released.Add(1)
					rec.useExit = ex
					rec.releaseCtxErr = ctx.Err()
					return struct{}{}, releaseErr
				})
			})
	}
	ctxCancelledDuringUse, cancel := context.WithCancel(context.Background())
	defer cancel()
	cases := []struct {
		name       string
		ctx        context.Context
		use        effect.Effect[S, string]
		releaseErr error
		outcome    effect.ExitKind
	}{
		{"success", context.Background(), effect.Succeed[S]("used"), nil, effect.ExitSuccess},
		{"Fail", context.Background(), effect.Fail[S, string](errBoom), nil, effect.ExitFail},
		{"Die", context.Background(), effect.FromAsync(func(context.Context, S) (string, error) { panic("in use") }), nil, effect.ExitDie},
		{"Interrupt; release runs though the parent is cancelled", ctxCancelledDuringUse,
			effect.FromAsync(func(ctx context.Context, _ S) (string, error) { cancel(); return "", ctx.Err() }), nil, effect.ExitInterrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rec record
			ex := effect.Run(tc.ctx, bracket(&rec, tc.use, tc.releaseErr), S{})
			require.Equal(t, tc.outcome, ex.Kind(), "exit: %v", ex)
			require.EqualValues(t, 1, rec.acquired.Load())
			require.EqualValues(t, 1, rec.released.Load(), "release runs exactly once")
			require.Equal(t, tc.outcome, rec.useExit.Kind(), "release is given use's Exit")
			require.NoError(t, rec.releaseCtxErr, "release's context is not cancelled")
		})
	}
	t.Run("a failing release is reported without hiding use's error", func(t *testing.T) {
		var rec record
		errRelease := errors.New("close failed")
		ex := effect.Run(context.Background(), bracket(&rec, effect.Fail[S, string](errBoom), errRelease), S{})
		require.True(t, ex.IsFail())
		require.ErrorIs(t, ex.Err(), errBoom)
		require.ErrorIs(t, ex.Err(), errRelease)
		require.ErrorContains(t, ex.Failures()[1], "release: close failed")
	})
	t.Run("a failing release after a successful use fails the run", func(t *testing.T) {
		var rec record
		errRelease := errors.New("close failed")
		ex := effect.Run(context.Background(), bracket(&rec, effect.Succeed[S]("used"), errRelease), S{})
		require.True(t, ex.IsFail())
		require.ErrorIs(t, ex.Err(), errRelease)
	})
	t.Run("acquire fails: neither use nor release runs", func(t *testing.T) {
		var used, released atomic.Int64
		e := effect.Bracket(effect.Fail[S, int](errBoom),
			func(int) effect.Effect[S, int] { used.Add(1); return effect.Succeed[S](1) },
			func(int, effect.Exit[int]) effect.Effect[S, struct{}] {
				released.Add(1)
				return effect.Succeed[S](struct{}{})
			})
		ex := effect.Run(context.Background(), e, S{})
		require.ErrorIs(t, ex.Err(), errBoom)
		require.Zero(t, used.Load())
		require.Zero(t, released.Load())
	})
	t.Run("a panic while building use still releases", func(t *testing.T) {
		var released atomic.Int64
		e := effect.Bracket(effect.Succeed[S](1),
			func(int) effect.Effect[S, int] { panic("building use") },
			func(int, effect.Exit[int]) effect.Effect[S, struct{}] {
				released.Add(1)
				return effect.Succeed[S](struct{}{})
			})
		ex := effect.Run(context.Background(), e, S{})
		require.True(t, ex.IsDie())
		require.EqualValues(t, 1, released.Load())
	})
}

// traced is a service that carries its own tracer provider.
type traced struct{ tp trace.TracerProvider }

func (s traced) TracerProvider() trace.TracerProvider { return s.tp }

func TestWithSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	svc := traced{tp: tp}

	inner := effect.WithSpan(effect.FromAsync(func(ctx context.Context, _ traced) (int, error) { return 1, nil }), "inner")
	cases := []struct {
		name    string
		e       effect.Effect[traced, int]
		exit    string
		code    codes.Code
		defects int
	}{
		{"ok", effect.Succeed[traced](1), "success", codes.Ok, 0},
		{"fail", effect.Fail[traced, int](errBoom), "fail", codes.Error, 0},
		{"die", effect.FromAsync(func(context.Context, traced) (int, error) { panic("bug") }), "die", codes.Error, 1},
		{"parent", effect.Map(inner, func(n int) int { return n }), "success", codes.Ok, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.Ended())
			e := effect.WithSpan(tc.e, tc.name, attribute.String("harness.thread", "t1"))
			ex := effect.Run(context.Background(), e, svc)
			require.Equal(t, tc.exit, ex.Kind().String())
			spans := rec.Ended()[before:]
			outer := spans[len(spans)-1]
			require.Equal(t, tc.name, outer.Name())
			require.Equal(t, tc.code, outer.Status().Code)
			require.Contains(t, outer.Attributes(), effect.AttrExit.String(tc.exit))
			require.Contains(t, outer.Attributes(), attribute.String("harness.thread", "t1"))
			var defects int
			for _, ev := range outer.Events() {
				if ev.Name == "defect" {
					defects++
				}
			}
			require.Equal(t, tc.defects, defects)
			if tc.name == "parent" {
				require.Len(t, spans, 2, "one span per WithSpan per run")
				require.Equal(t, outer.SpanContext().SpanID(), spans[0].Parent().SpanID())
			} else {
				require.Len(t, spans, 1, "one span per run")
			}
		})
	}
	t.Run("one span per run", func(t *testing.T) {
		before := len(rec.Ended())
		e := effect.WithSpan(effect.Succeed[traced](1), "twice")
		effect.Run(context.Background(), e, svc)
		effect.Run(context.Background(), e, svc)
		require.Len(t, rec.Ended()[before:], 2)
	})
	t.Run("no provider configured", func(t *testing.T) {
		v, err := effect.Run(context.Background(), effect.WithSpan(effect.Succeed[S](5), "quiet"), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, 5, v)
	})
}
