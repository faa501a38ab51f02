package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// RunHook runs a hook's command — argv when given, else the shell line
// (sh -c line) — in dir, in spec's
// sandbox (mode off: unsandboxed, in a watched process group), with input
// on its standard input, killing it and everything it started after
// timeout. Its output is not shown live. A cancelled ctx stops it as it
// stops a command (SIGTERM, then SIGKILL) and is returned as the error.
func RunHook(ctx context.Context, dir, line string, argv []string, spec sandbox.Spec, input []byte, timeout time.Duration, outputCap int) (action.HookExit, error) {
	if len(argv) > 0 {
		line = shellQuote(argv)
	}
	if input == nil {
		input = []byte{}
	}
	quiet := action.WithOutput(ctx, nil)
	start := time.Now()
	r := runProcess(quiet, dir, line, spec, timeout, outputCap, input)
	x := action.HookExit{Code: -1, Took: time.Since(start)}
	switch {
	case ctx.Err() != nil:
		return x, ctx.Err()
	case r.startErr != nil && errors.Is(r.startErr, context.DeadlineExceeded):
		x.Failure = fmt.Sprintf("timed out after %s while its sandbox was set up; it did not run", timeout)
		return x, nil
	case r.startErr != nil:
		x.Failure = "did not start: " + r.startErr.Error()
		return x, nil
	}
	x.Stdout, x.Stderr, x.Network = r.stdout.String(), r.stderr.String(), r.end.exit.network
	switch {
	case r.timedOut:
		x.Failure = fmt.Sprintf("timed out after %s; it and everything it started were killed", timeout)
	case r.end.err != nil:
		x.Failure = r.end.err.Error()
	case r.end.exit.code < 0:
		x.Failure = "ended by " + r.end.exit.desc
	default:
		x.Code = r.end.exit.code
	}
	return x, nil
}
