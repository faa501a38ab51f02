package effect_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/effect"
)

// Weather is a service an effect needs; the edge decides which one it gets.
type Weather interface {
	Forecast(ctx context.Context, city string) (string, error)
}

type sunny struct{}

func (sunny) Forecast(_ context.Context, city string) (string, error) { return "sun in " + city, nil }

// A description is a value: building it calls nothing. Run executes it.
func ExampleRun() {
	forecast := effect.FromAsync(func(ctx context.Context, w Weather) (string, error) {
		return w.Forecast(ctx, "Lisbon")
	})
	shout := effect.Map(forecast, strings.ToUpper)

	exit := effect.Run(context.Background(), shout, Weather(sunny{}))
	v, err := exit.Get()
	fmt.Println(v, err, exit.Kind())
	// Output: SUN IN LISBON <nil> success
}

var errBusy = errors.New("429: busy")

// Retry repeats expected failures (Fail) only, under a policy.
func ExampleRetry() {
	calls := 0
	flaky := effect.FromAsync(func(context.Context, struct{}) (string, error) {
		calls++
		if calls < 3 {
			return "", errBusy
		}
		return "ok", nil
	})
	patient := effect.Retry(flaky, effect.Policy{
		MaxAttempts: 5,
		Backoff:     time.Millisecond,
		Jitter:      0.2,
		RetryIf:     func(err error) bool { return errors.Is(err, errBusy) },
	})

	v, err := effect.Run(context.Background(), patient, struct{}{}).Get()
	fmt.Println(v, err, calls)

	// A defect is never retried.
	calls = 0
	buggy := effect.Retry(effect.FromAsync(func(context.Context, struct{}) (string, error) {
		calls++
		return "", effect.Defect(errors.New("invariant broken"))
	}), effect.Policy{MaxAttempts: 5})
	exit := effect.Run(context.Background(), buggy, struct{}{})
	fmt.Println(exit.Kind(), calls)
	// Output:
	// ok <nil> 3
	// die 1
}

// Bracket releases what it acquired exactly once, however use ends.
func ExampleBracket() {
	type file struct{ name string }
	open := effect.FromAsync(func(context.Context, struct{}) (*file, error) {
		fmt.Println("open")
		return &file{name: "notes.txt"}, nil
	})
	use := func(f *file) effect.Effect[struct{}, int] {
		return effect.FromAsync(func(context.Context, struct{}) (int, error) {
			fmt.Println("write", f.name)
			return 0, errors.New("disk full")
		})
	}
	closeFile := func(f *file, used effect.Exit[int]) effect.Effect[struct{}, struct{}] {
		return effect.FromAsync(func(context.Context, struct{}) (struct{}, error) {
			fmt.Println("close after", used.Kind())
			return struct{}{}, nil
		})
	}

	exit := effect.Run(context.Background(), effect.Bracket(open, use, closeFile), struct{}{})
	fmt.Println(exit.Err())
	// Output:
	// open
	// write notes.txt
	// close after fail
	// disk full
}

// ZipPar runs two effects at once; a failure on one side interrupts the
// other, and every failure is kept.
func ExampleZipPar() {
	lookup := func(name string, d time.Duration) effect.Effect[struct{}, string] {
		return effect.FromAsync(func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-time.After(d):
				return name + " found", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	}
	both := effect.ZipPar(lookup("user", time.Millisecond), lookup("repo", 2*time.Millisecond))
	p, err := effect.Run(context.Background(), both, struct{}{}).Get()
	fmt.Println(p.First, "/", p.Second, err)

	failing := effect.ZipPar(effect.Fail[struct{}, string](errors.New("no such user")), lookup("repo", time.Hour))
	exit := effect.Run(context.Background(), failing, struct{}{})
	fmt.Println(exit.Kind(), exit.Err())
	// Output:
	// user found / repo found <nil>
	// fail no such user
}

// All runs many effects at once and gives their values in order; the
// first failure interrupts the rest. AllLimit bounds how many run at once.
func ExampleAll() {
	fetch := func(page int) effect.Effect[struct{}, string] {
		return effect.FromAsync(func(ctx context.Context, _ struct{}) (string, error) {
			if page == 3 {
				return "", fmt.Errorf("page %d: not found", page)
			}
			return fmt.Sprintf("page %d", page), nil
		})
	}
	pages, err := effect.Run(context.Background(), effect.AllLimit(2, fetch(1), fetch(2)), struct{}{}).Get()
	fmt.Println(pages, err)

	exit := effect.Run(context.Background(), effect.All(fetch(1), fetch(2), fetch(3)), struct{}{})
	fmt.Println(exit.Kind(), exit.Err())
	// Output:
	// [page 1 page 2] <nil>
	// fail page 3: not found
}

// Provide swaps services at the edge: the program names what it needs.
func ExampleProvide() {
	type App struct{ Weather Weather }
	forecast := effect.FromAsync(func(ctx context.Context, w Weather) (string, error) {
		return w.Forecast(ctx, "Porto")
	})
	program := effect.Provide(forecast, func(a App) Weather { return a.Weather })
	v, _ := effect.Run(context.Background(), program, App{Weather: sunny{}}).Get()
	fmt.Println(v)
	// Output: sun in Porto
}

// Timeout turns a slow call into an expected failure that Retry may repeat.
func ExampleTimeout() {
	slow := effect.FromAsync(func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done() // a body that listens to its context ends on time
		return "", ctx.Err()
	})
	exit := effect.Run(context.Background(), effect.Timeout(slow, 5*time.Millisecond), struct{}{})
	fmt.Println(exit.Kind(), errors.Is(exit.Err(), effect.ErrTimeout))
	// Output: fail true
}
