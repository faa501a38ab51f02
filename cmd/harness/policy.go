package main

import (
	"context"
	"errors"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
)

// setPolicy records what the flags f change of the thread, a person's
// word (stock.Session.AmendThread): --max-turns raises its bound in
// turns, --max-cost and --max-tokens set its tree's budget anew, and
// --approve, --allow and --deny amend its own policy — or, for a thread
// that records none, the policy the settings give.
func (d *driver) setPolicy(ctx context.Context, f *driveFlags) error {
	flags, err := f.layer()
	if err != nil {
		return err
	}
	err = d.s.AmendThread(ctx, d.Thread, flags, d.a.whoami())
	switch {
	case errors.Is(err, drive.ErrTurnsLowered):
		return usageError("--max-turns %d: %v", f.maxTurns, err)
	case errors.Is(err, harness.ErrNotRoot):
		return usageError("--max-cost, --max-tokens: %v", err)
	case errors.Is(err, stock.ErrBadSettings):
		return asUsage(err)
	}
	return err
}
