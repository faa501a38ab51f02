package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
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

// shownCommand is a run_command call as a person reads it.
type shownCommand struct {
	text    string
	seconds *float64
	def     time.Duration
}

// commandOf reads a run_command call's arguments; ok is false for another
// tool, or arguments that do not read as a command.
func (a *app) commandOf(tool, args string, def time.Duration) (shownCommand, bool) {
	if tool != "run_command" {
		return shownCommand{}, false
	}
	var c struct {
		Command *string  `json:"command"`
		Timeout *float64 `json:"timeout_seconds"`
	}
	if json.Unmarshal([]byte(args), &c) != nil || c.Command == nil {
		return shownCommand{}, false
	}
	return shownCommand{text: *c.Command, seconds: c.Timeout, def: def}, true
}

// timeout says how long the command may run.
func (c shownCommand) timeout() string {
	if c.seconds != nil {
		return "timeout " + strconv.FormatFloat(*c.seconds, 'g', -1, 64) + "s"
	}
	if c.def > 0 {
		return "timeout " + strconv.FormatFloat(c.def.Seconds(), 'g', -1, 64) + "s (the default)"
	}
	return "the default timeout"
}

// lines are the command, verbatim, escaped.
func (c shownCommand) lines() []string { return present.CommandLines(c.text) }

// shortSum is a short digest of s, for keys.
func shortSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
