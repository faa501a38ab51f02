package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// enter makes the session act in the workspace the thread id records
// (see stock.Session.Enter), wherever the command was run from (another
// directory with --store, say), and says so once on stderr. A thread that
// works on another machine, or in a directory this machine does not have,
// is refused, naming both.
func (a *app) enter(ctx context.Context, s *stock.Session, id string) error {
	moved, ok, err := s.Enter(ctx, id)
	switch {
	case errors.Is(err, stock.ErrOtherMachine):
		return fmt.Errorf("%w; run the command there", err)
	case errors.Is(err, stock.ErrStoreCameWith):
		return fmt.Errorf("%w; run the command in that workspace with its own store, or name a store with --store", err)
	case err != nil || !ok:
		return err
	}
	fmt.Fprintf(a.stderr, "harness: thread %s works in %s; acting there (not in %s)\n", id, present.EscapeLine(moved.To), present.EscapeLine(moved.From))
	a.front().WarnMCP(s)
	return nil
}
