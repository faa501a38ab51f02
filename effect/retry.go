package effect

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy says how [Retry] repeats an effect that ended with a Fail.
//
// The zero Policy runs the effect once. Waits grow from Backoff by
// Multiplier up to MaxBackoff, each shortened by a random fraction of at most
// Jitter so that many clients retrying the same service spread out. Wait,
// when set, may lengthen a wait from what the failure says (a server's
// Retry-After) or refuse it; OnWait is told of every wait before it starts.
type Policy struct {
	// MaxAttempts is the number of runs in all, the first included; 0 means 1.
	MaxAttempts int
	// Backoff is the wait before the second attempt; 0 retries at once.
	Backoff time.Duration
	// Multiplier scales the wait after each attempt; 0 means 2.
	Multiplier float64
	// MaxBackoff caps a single wait; 0 means no cap.
	MaxBackoff time.Duration
	// Jitter, in [0, 1], is the largest fraction by which a wait is
	// randomly shortened; 0 waits exactly.
	Jitter float64
	// RetryIf, when set, must report true for an error to be retried.
	RetryIf func(error) bool
	// MaxElapsed caps the time from the first attempt to the start of the
	// last; a retry whose wait would pass it is not made. 0 means no cap.
	MaxElapsed time.Duration
	// Wait, when set, decides the wait before a retry from the error of
	// the attempt that failed (attempt counts from 1) and the wait the
	// backoff planned (jitter applied). It returns the wait to make — to
	// honour what the failure asks, typically at least planned — or an
	// error, which ends the retries: that error is then the Fail's (in a
	// RetryError), so it should wrap err. MaxElapsed applies to the wait
	// it returns; the backoff goes on growing from its own plan.
	Wait func(err error, attempt int, planned time.Duration) (time.Duration, error)
	// OnWait, when set, is called before each retry's wait (a zero wait
	// too) with the attempt that failed, the wait and the failure, so a
	// caller can say that it is waiting and why.
	OnWait func(attempt int, wait time.Duration, err error)
}

// validate names the first field that cannot be a policy.
func (p Policy) validate() error {
	switch {
	case p.MaxAttempts < 0:
		return fmt.Errorf("effect.Retry: Policy.MaxAttempts is %d, want ≥ 0", p.MaxAttempts)
	case p.Backoff < 0:
		return fmt.Errorf("effect.Retry: Policy.Backoff is %v, want ≥ 0", p.Backoff)
	case p.Multiplier < 0:
		return fmt.Errorf("effect.Retry: Policy.Multiplier is %v, want ≥ 0", p.Multiplier)
	case p.MaxBackoff < 0:
		return fmt.Errorf("effect.Retry: Policy.MaxBackoff is %v, want ≥ 0", p.MaxBackoff)
	case p.Jitter < 0 || p.Jitter > 1:
		return fmt.Errorf("effect.Retry: Policy.Jitter is %v, want it in [0, 1]", p.Jitter)
	case p.MaxElapsed < 0:
		return fmt.Errorf("effect.Retry: Policy.MaxElapsed is %v, want ≥ 0", p.MaxElapsed)
	}
	return nil
}

// RetryError is the error of a Fail that [Retry] gave up on. It wraps the
// last attempt's error, so errors.Is sees the original failure.
type RetryError struct {
	// Attempts is how many times the effect ran.
	Attempts int
	// Err is the error of the last attempt.
	Err error
}

func (e *RetryError) Error() string {
	if e.Attempts == 1 {
		return fmt.Sprintf("%v (1 attempt)", e.Err)
	}
	return fmt.Sprintf("%v (%d attempts)", e.Err, e.Attempts)
}

// Unwrap returns the last attempt's error.
func (e *RetryError) Unwrap() error { return e.Err }

// Attempts reports how many times a retried effect ran before it failed
// with err, and 1 when err did not come from [Retry].
func Attempts(err error) int {
	var re *RetryError
	if errors.As(err, &re) {
		return re.Attempts
	}
	return 1
}

// Retry describes e repeated while it ends with a Fail, under the policy p.
// A Die is never repeated, nor an Interrupt; a cancelled context ends a
// wait between attempts at once, as an Interrupt. When Retry gives up, the
// Fail's error is a *[RetryError] wrapping the last one.
//
// A policy with a negative or out-of-range field describes a programming
// error: running it ends with a Die naming the field.
func Retry[S, A any](e Effect[S, A], p Policy) Effect[S, A] {
	if e.run == nil {
		return Die[S, A](ErrNilEffect)
	}
	if err := p.validate(); err != nil {
		return Die[S, A](err)
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = 1
	}
	if p.Multiplier == 0 {
		p.Multiplier = 2
	}
	inner := e.run
	return Effect[S, A]{run: func(r *runner, s S) Exit[A] { return retry(r, s, inner, &p) }}
}

func retry[S, A any](r *runner, s S, run func(*runner, S) Exit[A], p *Policy) Exit[A] {
	var start time.Time
	if p.MaxElapsed > 0 {
		start = time.Now()
	}
	wait := p.Backoff
	for attempt := 1; ; attempt++ {
		ex := run(r, s)
		if ex.c == nil || ex.c.kind() != ExitFail {
			return ex
		}
		err := ex.c.err()
		if attempt >= p.MaxAttempts || (p.RetryIf != nil && !p.RetryIf(err)) {
			return failExit[A](&RetryError{Attempts: attempt, Err: err})
		}
		d := wait
		if p.Jitter > 0 && d > 0 {
			d -= time.Duration(rand.Float64() * p.Jitter * float64(d))
		}
		if p.Wait != nil {
			w, werr := p.Wait(err, attempt, d)
			switch {
			case werr != nil:
				return failExit[A](&RetryError{Attempts: attempt, Err: werr})
			case w < 0:
				return dieExit[A](fmt.Errorf("effect.Retry: Policy.Wait returned %v, want ≥ 0", w))
			}
			d = w
		}
		if p.MaxElapsed > 0 && time.Since(start)+d > p.MaxElapsed {
			return failExit[A](&RetryError{Attempts: attempt, Err: err})
		}
		if p.OnWait != nil {
			p.OnWait(attempt, d, err)
		}
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-r.ctx.Done():
				t.Stop()
				return interruptExit[A](r.ctx, err)
			case <-t.C:
			}
		} else if r.interrupted() {
			return interruptExit[A](r.ctx, err)
		}
		wait = time.Duration(float64(wait) * p.Multiplier)
		if p.MaxBackoff > 0 && wait > p.MaxBackoff {
			wait = p.MaxBackoff
		}
	}
}
