package effect

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// ExitKind names the four ways a run can end: the kind of an [Exit].
// (It is not how a thread stands; that is harness.Status.)
type ExitKind uint8

const (
	// ExitSuccess: the run produced a value.
	ExitSuccess ExitKind = iota
	// ExitFail: the run ended with an expected error.
	ExitFail
	// ExitDie: the run ended with a defect — a panic, or an error marked
	// with [Defect].
	ExitDie
	// ExitInterrupt: the parent context was cancelled.
	ExitInterrupt
)

// String returns "success", "fail", "die" or "interrupt"; these are also
// the values of the harness.exit span attribute.
func (o ExitKind) String() string {
	switch o {
	case ExitSuccess:
		return "success"
	case ExitFail:
		return "fail"
	case ExitDie:
		return "die"
	case ExitInterrupt:
		return "interrupt"
	}
	return fmt.Sprintf("ExitKind(%d)", uint8(o))
}

// Sentinel errors of the package, for errors.Is.
var (
	// ErrInterrupted is matched by the error of every interrupted Exit.
	ErrInterrupted = errors.New("effect: interrupted")
	// ErrTimeout is matched by the error of a Fail produced by [Timeout].
	ErrTimeout = errors.New("effect: timeout")
	// ErrNilEffect is the defect of running the zero Effect, or an effect
	// that a function given to [AndThen], [CatchFail] or [Bracket] returned
	// without building.
	ErrNilEffect = errors.New("effect: nil effect (the zero Effect was run)")
)

// Exit is how a run ended: with a value, or with a cause of failure.
//
// The zero Exit is a success with the zero value. An Exit is a plain value
// and may be copied and compared by its accessors.
type Exit[A any] struct {
	value A
	c     *cause // nil exactly when the run succeeded
}

// cause records why a run did not succeed. A run can end with several
// failures at once: ZipPar keeps the failures of both sides, Bracket keeps
// the failures of use and of release, Race keeps those of every racer.
type cause struct {
	fails     []error
	defects   []error // each matches *DefectError with errors.As
	interrupt error   // set only when nothing failed or died
}

func (c *cause) kind() ExitKind {
	switch {
	case len(c.defects) > 0:
		return ExitDie
	case len(c.fails) > 0:
		return ExitFail
	default:
		return ExitInterrupt
	}
}

// err is the error of the cause: defects first, then failures; several are
// joined so that errors.Is and errors.As see every one of them.
func (c *cause) err() error {
	switch c.kind() {
	case ExitInterrupt:
		return c.interrupt
	case ExitFail:
		if len(c.fails) == 1 {
			return c.fails[0]
		}
		return errors.Join(c.fails...)
	}
	if len(c.defects) == 1 && len(c.fails) == 0 {
		return c.defects[0]
	}
	all := make([]error, 0, len(c.defects)+len(c.fails))
	all = append(all, c.defects...)
	return errors.Join(append(all, c.fails...)...)
}

// merge returns the union of two causes. An interruption is kept only when
// neither side failed or died.
func merge(a, b *cause) *cause {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	m := &cause{
		fails:   append(append([]error(nil), a.fails...), b.fails...),
		defects: append(append([]error(nil), a.defects...), b.defects...),
	}
	if len(m.fails) == 0 && len(m.defects) == 0 {
		m.interrupt = a.interrupt
		if m.interrupt == nil {
			m.interrupt = b.interrupt
		}
	}
	return m
}

// Succeeded returns a successful Exit holding a.
func Succeeded[A any](a A) Exit[A] { return Exit[A]{value: a} }

// Kind reports how the run ended.
func (e Exit[A]) Kind() ExitKind {
	if e.c == nil {
		return ExitSuccess
	}
	return e.c.kind()
}

// IsSuccess reports whether the run produced a value.
func (e Exit[A]) IsSuccess() bool { return e.c == nil }

// IsFail reports whether the run ended with expected errors only.
func (e Exit[A]) IsFail() bool { return e.Kind() == ExitFail }

// IsDie reports whether the run ended with a defect.
func (e Exit[A]) IsDie() bool { return e.Kind() == ExitDie }

// IsInterrupt reports whether the run was interrupted by cancellation.
func (e Exit[A]) IsInterrupt() bool { return e.Kind() == ExitInterrupt }

// Value returns the value of a successful run; ok is false otherwise.
func (e Exit[A]) Value() (a A, ok bool) { return e.value, e.c == nil }

// Err returns nil for a success and otherwise the error of the run: the
// expected error of a Fail, the defect of a Die, or for an Interrupt an
// error matching [ErrInterrupted] and the context's cause. When a run ended
// with several errors (see [ZipPar]), they are joined; errors.Is and
// errors.As see each of them.
func (e Exit[A]) Err() error {
	if e.c == nil {
		return nil
	}
	return e.c.err()
}

// Get returns the value and the error, in the manner of a Go call.
func (e Exit[A]) Get() (A, error) { return e.value, e.Err() }

// Failures returns the expected errors the run ended with, in the order
// they happened to be collected. A Die may carry failures too: ZipPar keeps
// a sibling's Fail next to the defect for diagnosis.
func (e Exit[A]) Failures() []error {
	if e.c == nil {
		return nil
	}
	return append([]error(nil), e.c.fails...)
}

// Defects returns the defects the run ended with; each matches
// *[DefectError] with errors.As.
func (e Exit[A]) Defects() []error {
	if e.c == nil {
		return nil
	}
	return append([]error(nil), e.c.defects...)
}

// String describes the exit for logs: "success(42)", "fail(boom)", ….
func (e Exit[A]) String() string {
	if e.c == nil {
		return fmt.Sprintf("success(%v)", e.value)
	}
	msg := e.c.err().Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] + " …"
	}
	return fmt.Sprintf("%s(%s)", e.c.kind(), msg)
}

// exits of a given cause, for any success type.
func failed[A any](c *cause) Exit[A] { return Exit[A]{c: c} }

func failExit[A any](err error) Exit[A] {
	return Exit[A]{c: &cause{fails: []error{err}}}
}

// dieExit ends a run with the defect err, marking it as a defect (with the
// current stack) unless it already is one.
func dieExit[A any](err error) Exit[A] {
	var d *DefectError
	if !errors.As(err, &d) {
		err = &DefectError{Value: err, Stack: debug.Stack()}
	}
	return Exit[A]{c: &cause{defects: []error{err}}}
}

// DefectError is a defect: the value of a panic, or an error marked as a
// bug with [Defect], with the stack where it happened.
type DefectError struct {
	// Value is the panic value, or the error that was marked.
	Value any
	// Stack is the goroutine's stack at the panic or at the mark.
	Stack []byte
}

// Error describes the defect on one line; Stack has the rest.
func (d *DefectError) Error() string {
	if err, ok := d.Value.(error); ok {
		return "defect: " + err.Error()
	}
	return fmt.Sprintf("defect: panic: %v", d.Value)
}

// Unwrap returns the defect's value when it is an error, so that errors.Is
// sees through a defect to the error that caused it.
func (d *DefectError) Unwrap() error {
	err, _ := d.Value.(error)
	return err
}

// Defect marks err as a defect: an effect built with [FromAsync] whose
// function returns it (or an error wrapping it) ends with a Die, which
// [Retry] does not repeat and [CatchFail] does not handle. Use it for broken
// invariants, not for failures a caller could expect. Defect(nil) is nil.
func Defect(err error) error {
	if err == nil {
		return nil
	}
	return &DefectError{Value: err, Stack: debug.Stack()}
}

// panicked turns a recovered panic value into a defect; call it from the
// deferred function, so the stack still shows where the panic happened.
func panicked(p any) error {
	return &DefectError{Value: p, Stack: debug.Stack()}
}

// interruptError is the error of an interrupted run.
type interruptError struct {
	cause error // context.Cause of the cancelled context
	err   error // what the work returned after the cancellation, if anything
}

func (e *interruptError) Error() string {
	if e.err != nil && !errors.Is(e.err, e.cause) {
		return fmt.Sprintf("interrupted: %v (work returned: %v)", e.cause, e.err)
	}
	return fmt.Sprintf("interrupted: %v", e.cause)
}

func (e *interruptError) Unwrap() []error {
	errs := []error{ErrInterrupted, e.cause}
	if e.err != nil {
		errs = append(errs, e.err)
	}
	return errs
}

func interruptExit[A any](ctx context.Context, workErr error) Exit[A] {
	c := context.Cause(ctx)
	if c == nil {
		c = context.Canceled
	}
	return Exit[A]{c: &cause{interrupt: &interruptError{cause: c, err: workErr}}}
}
