package main

import (
	"context"
	"errors"
	"time"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// setPolicy records a change of the thread's approval policy that the
// flags f make: --approve replaces the mode, --allow and --deny add
// patterns, on the thread's own policy — or, for a thread that records
// none, on the policy the settings give (see stock.Session.AmendPolicy).
// Flags that name no policy change nothing.
func (d *driver) setPolicy(ctx context.Context, f *driveFlags) error {
	if err := d.setBudget(ctx, f); err != nil {
		return err
	}
	if !f.policyGiven() {
		return nil
	}
	flags, err := f.layer()
	if err != nil {
		return err
	}
	if err := d.s.AmendPolicy(ctx, d.th, flags, d.a.whoami()); errors.Is(err, stock.ErrBadSettings) {
		return asUsage(err)
	} else if err != nil {
		return err
	}
	return nil
}

// shownCommand is a run_command call as a person reads it
// (present.Command).
type shownCommand struct{ present.Command }

// commandOf reads a run_command call's arguments (present.CommandOf).
func (a *app) commandOf(tool, args string, def time.Duration) (shownCommand, bool) {
	c, ok := present.CommandOf(tool, args, def)
	return shownCommand{c}, ok
}

func (c shownCommand) timeout() string { return c.Timeout() }
func (c shownCommand) lines() []string { return c.Lines() }
