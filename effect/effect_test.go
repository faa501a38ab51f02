package effect_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed-7cc7a084/harness/effect"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter is a service that counts its calls.
type counter struct{ calls atomic.Int64 }

func (c *counter) call(context.Context) (int, error) { return int(c.calls.Add(1)), nil }

func callCounter() effect.Effect[*counter, int] {
	return effect.FromAsync(func(ctx context.Context, c *counter) (int, error) { return c.call(ctx) })
}

var errBoom = errors.New("boom")

func TestConstructionIsFree(t *testing.T) {
	release := func(int, effect.Exit[int]) effect.Effect[*counter, struct{}] {
		return effect.FromAsync(func(ctx context.Context, c *counter) (struct{}, error) {
			_, err := c.call(ctx)
			return struct{}{}, err
		})
	}
	double := func(n int) int { return 2 * n }
	cases := []struct {
		name  string
		build func() effect.Effect[*counter, int]
		runs  int64 // service calls per Run
	}{
		{"FromAsync", callCounter, 1},
		{"Map", func() effect.Effect[*counter, int] { return effect.Map(callCounter(), double) }, 1},
		{"AndThen", func() effect.Effect[*counter, int] {
			return effect.AndThen(callCounter(), func(int) effect.Effect[*counter, int] { return effect.Succeed[*counter](1) })
		}, 1},
		{"CatchFail", func() effect.Effect[*counter, int] {
			return effect.CatchFail(callCounter(), func(error) effect.Effect[*counter, int] { return effect.Succeed[*counter](0) })
		}, 1},
		{"Retry", func() effect.Effect[*counter, int] { return effect.Retry(callCounter(), effect.Policy{MaxAttempts: 3}) }, 1},
		{"Timeout", func() effect.Effect[*counter, int] { return effect.Timeout(callCounter(), time.Minute) }, 1},
		{"WithSpan", func() effect.Effect[*counter, int] { return effect.WithSpan(callCounter(), "span") }, 1},
		{"Bracket", func() effect.Effect[*counter, int] {
			return effect.Bracket(callCounter(), func(int) effect.Effect[*counter, int] { return callCounter() }, release)
		}, 3},
		{"Provide", func() effect.Effect[*counter, int] {
			return effect.Provide(callCounter(), func(c *counter) *counter { return c })
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := &counter{}
			e := tc.build()
			require.Zero(t, svc.calls.Load(), "building calls nothing")
			require.True(t, effect.Run(context.Background(), e, svc).IsSuccess())
			require.Equal(t, tc.runs, svc.calls.Load(), "Run does the work")
			require.True(t, effect.Run(context.Background(), e, svc).IsSuccess())
			require.Equal(t, 2*tc.runs, svc.calls.Load(), "a description is reusable: running it twice runs it twice")
		})
	}
}

func TestExitCases(t *testing.T) {
	type S = struct{}
	marked := effect.Defect(errBoom)
	cases := []struct {
		name    string
		e       effect.Effect[S, int]
		outcome effect.ExitKind
		is      []error
	}{
		{"success", effect.Succeed[S](7), effect.ExitSuccess, nil},
		{"Fail", effect.Fail[S, int](errBoom), effect.ExitFail, []error{errBoom}},
		{"FromAsync error", effect.FromAsync(func(context.Context, S) (int, error) { return 0, errBoom }), effect.ExitFail, []error{errBoom}},
		{"Die", effect.Die[S, int](errBoom), effect.ExitDie, []error{errBoom}},
		{"marked defect", effect.FromAsync(func(context.Context, S) (int, error) { return 0, marked }), effect.ExitDie, []error{errBoom}},
		{"wrapped marked defect", effect.FromAsync(func(context.Context, S) (int, error) {
			return 0, errors.Join(errors.New("context"), marked)
		}), effect.ExitDie, []error{errBoom}},
		{"panic in FromAsync", effect.FromAsync(func(context.Context, S) (int, error) { panic("kaput") }), effect.ExitDie, nil},
		{"panic in Map", effect.Map(effect.Succeed[S](1), func(int) int { panic("kaput") }), effect.ExitDie, nil},
		{"panic with error value", effect.Map(effect.Succeed[S](1), func(int) int { panic(errBoom) }), effect.ExitDie, []error{errBoom}},
		{"zero Effect", effect.Effect[S, int]{}, effect.ExitDie, []error{effect.ErrNilEffect}},
		{"Fail(nil)", effect.Fail[S, int](nil), effect.ExitDie, nil},
		{"AndThen to zero Effect", effect.AndThen(effect.Succeed[S](1), func(int) effect.Effect[S, int] { return effect.Effect[S, int]{} }), effect.ExitDie, []error{effect.ErrNilEffect}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := effect.Run(context.Background(), tc.e, S{})
			require.Equal(t, tc.outcome, ex.Kind(), "exit: %v", ex)
			for _, target := range tc.is {
				require.ErrorIs(t, ex.Err(), target)
			}
			if tc.outcome == effect.ExitSuccess {
				v, ok := ex.Value()
				require.True(t, ok)
				require.Equal(t, 7, v)
				require.NoError(t, ex.Err())
				return
			}
			_, ok := ex.Value()
			require.False(t, ok)
			require.Error(t, ex.Err())
			if tc.outcome == effect.ExitDie {
				var d *effect.DefectError
				require.ErrorAs(t, ex.Err(), &d)
				require.NotEmpty(t, d.Stack)
			}
		})
	}
}

func TestDieKeepsPanicValueAndStack(t *testing.T) {
	e := effect.Map(effect.Succeed[struct{}](1), panicsInMap)
	ex := effect.Run(context.Background(), e, struct{}{})
	require.True(t, ex.IsDie())
	var d *effect.DefectError
	require.ErrorAs(t, ex.Err(), &d)
	require.Equal(t, "kaput in map", d.Value)
	require.Contains(t, string(d.Stack), "panicsInMap", "the stack shows where the panic happened")
	require.Contains(t, ex.Err().Error(), "kaput in map")
}

func panicsInMap(int) int { panic("kaput in map") }

func TestInterrupt(t *testing.T) {
	t.Run("cancelled before Run: nothing is called", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		svc := &counter{}
		ex := effect.Run(ctx, callCounter(), svc)
		require.True(t, ex.IsInterrupt())
		require.ErrorIs(t, ex.Err(), effect.ErrInterrupted)
		require.ErrorIs(t, ex.Err(), context.Canceled)
		require.Zero(t, svc.calls.Load())
	})
	t.Run("an error returned after cancellation is an Interrupt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		e := effect.FromAsync(func(ctx context.Context, _ struct{}) (int, error) {
			cancel()
			return 0, errBoom
		})
		ex := effect.Run(ctx, e, struct{}{})
		require.True(t, ex.IsInterrupt())
		require.ErrorIs(t, ex.Err(), errBoom, "the work's error is kept for diagnosis")
	})
	t.Run("success after cancellation is a success", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		e := effect.FromAsync(func(ctx context.Context, _ struct{}) (int, error) {
			cancel()
			return 7, nil
		})
		ex := effect.Run(ctx, e, struct{}{})
		require.True(t, ex.IsSuccess(), "the work was done")
	})
	t.Run("Run notices a cancelled context between steps", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var steps int
		e := effect.Succeed[struct{}](0)
		for i := range 100 {
			e = effect.Map(e, func(n int) int {
				steps++
				if i == 10 {
					cancel()
				}
				return n + 1
			})
		}
		ex := effect.Run(ctx, e, struct{}{})
		require.True(t, ex.IsInterrupt())
		require.Equal(t, 11, steps, "no step runs after the one that cancelled")
	})
	t.Run("the context's cause is kept", func(t *testing.T) {
		why := errors.New("user pressed ^C")
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(why)
		ex := effect.Run(ctx, effect.Succeed[struct{}](1), struct{}{})
		require.True(t, ex.IsSuccess(), "a value needs no work")
		ex = effect.Run(ctx, effect.Map(effect.Succeed[struct{}](1), func(n int) int { return n }), struct{}{})
		require.True(t, ex.IsInterrupt())
		require.ErrorIs(t, ex.Err(), why)
	})
}

func TestCatchFail(t *testing.T) {
	type S = struct{}
	recovered := func(err error) effect.Effect[S, string] { return effect.Succeed[S]("caught: " + err.Error()) }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		e       effect.Effect[S, string]
		outcome effect.ExitKind
		value   string
	}{
		{"handles Fail", context.Background(), effect.Fail[S, string](errBoom), effect.ExitSuccess, "caught: boom"},
		{"success passes", context.Background(), effect.Succeed[S]("ok"), effect.ExitSuccess, "ok"},
		{"Die passes", context.Background(), effect.Die[S, string](errBoom), effect.ExitDie, ""},
		{"panic passes", context.Background(), effect.FromAsync(func(context.Context, S) (string, error) { panic("x") }), effect.ExitDie, ""},
		{"Interrupt passes", ctx, effect.FromAsync(func(context.Context, S) (string, error) { return "", errBoom }), effect.ExitInterrupt, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := effect.Run(tc.ctx, effect.CatchFail(tc.e, recovered), S{})
			require.Equal(t, tc.outcome, ex.Kind(), "exit: %v", ex)
			v, _ := ex.Value()
			require.Equal(t, tc.value, v)
		})
	}
}

func TestProvideSwapsServices(t *testing.T) {
	// Model is the service a program needs; App is what the edge has.
	type Model interface{ Answer(string) string }
	type App struct{ Model Model }
	ask := effect.FromAsync(func(_ context.Context, m Model) (string, error) { return m.Answer("2+2"), nil })
	program := effect.Provide(ask, func(a App) Model { return a.Model })

	ex := effect.Run(context.Background(), program, App{Model: fakeModel("4")})
	v, err := ex.Get()
	require.NoError(t, err)
	require.Equal(t, "fake says 4", v)

	ex = effect.Run(context.Background(), program, App{Model: fakeModel("5")})
	v, _ = ex.Get()
	require.Equal(t, "fake says 5", v, "the same description, another service")
}

type fakeModel string

func (f fakeModel) Answer(string) string { return "fake says " + string(f) }

func TestStackSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds million-step chains")
	}
	type S = struct{}
	const n = 1_000_000
	t.Run("Map chain", func(t *testing.T) {
		e := effect.Succeed[S](0)
		for range n {
			e = effect.Map(e, func(x int) int { return x + 1 })
		}
		v, err := effect.Run(context.Background(), e, S{}).Get()
		require.NoError(t, err)
		require.Equal(t, n, v)
	})
	t.Run("AndThen chain built in a loop", func(t *testing.T) {
		e := effect.Succeed[S](0)
		for range n {
			e = effect.AndThen(e, func(x int) effect.Effect[S, int] { return effect.Succeed[S](x + 1) })
		}
		v, err := effect.Run(context.Background(), e, S{}).Get()
		require.NoError(t, err)
		require.Equal(t, n, v)
	})
	t.Run("AndThen recursion as a loop", func(t *testing.T) {
		var loop func(i int) effect.Effect[S, int]
		loop = func(i int) effect.Effect[S, int] {
			if i == n {
				return effect.Succeed[S](i)
			}
			return effect.AndThen(effect.Succeed[S](i), func(x int) effect.Effect[S, int] { return loop(x + 1) })
		}
		v, err := effect.Run(context.Background(), loop(0), S{}).Get()
		require.NoError(t, err)
		require.Equal(t, n, v)
	})
	t.Run("CatchFail chain, Fail travels to the end", func(t *testing.T) {
		e := effect.Fail[S, int](errBoom)
		for i := range n {
			e = effect.CatchFail(e, func(err error) effect.Effect[S, int] {
				if i == n-1 {
					return effect.Succeed[S](1)
				}
				return effect.Fail[S, int](err)
			})
		}
		v, err := effect.Run(context.Background(), e, S{}).Get()
		require.NoError(t, err)
		require.Equal(t, 1, v)
	})
	t.Run("deep chain stops at a Fail and notices cancellation", func(t *testing.T) {
		var calls int
		e := effect.Succeed[S](0)
		for i := range n {
			e = effect.Map(e, func(x int) int {
				calls++
				if i == n/2 {
					panic("half way")
				}
				return x + 1
			})
		}
		ex := effect.Run(context.Background(), e, S{})
		require.True(t, ex.IsDie())
		require.Equal(t, n/2+1, calls)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls = 0
		e = effect.Succeed[S](0)
		for i := range n {
			e = effect.Map(e, func(x int) int {
				calls++
				if i == n/2 {
					cancel()
				}
				return x + 1
			})
		}
		ex = effect.Run(ctx, e, S{})
		require.True(t, ex.IsInterrupt())
		require.Equal(t, n/2+1, calls)
	})
}

func TestErrorsReadWell(t *testing.T) {
	ex := effect.Run(context.Background(), effect.Retry(effect.Fail[struct{}, int](errBoom), effect.Policy{MaxAttempts: 3}), struct{}{})
	require.Equal(t, "boom (3 attempts)", ex.Err().Error())
	require.Equal(t, 3, effect.Attempts(ex.Err()))
	require.Equal(t, "fail(boom (3 attempts))", ex.String())
	require.True(t, strings.HasPrefix(effect.Run(context.Background(), effect.Die[struct{}, int](errBoom), struct{}{}).String(), "die(defect: boom"))
}
