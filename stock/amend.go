package stock

import (
	"context"
	"slices"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// AmendThread records on th, a thread that exists, what the command
// line's layer (FlagLayer) changes of it, as by's word: a bound in model
// turns is a raise of the one it records (drive.RaiseTurnsTo; one below
// it wraps drive.ErrTurnsLowered); a budget in money or tokens is set
// anew on the root (drive.SetBounds; on a child it wraps
// harness.ErrNotRoot); approve, allow and deny amend its policy
// (AmendPolicy). A layer that gives none of them records nothing.
func (s *Session) AmendThread(ctx context.Context, th *harness.Thread, layer SettingsSource, by string) error {
	given := func(keys ...string) bool {
		return slices.ContainsFunc(keys, func(k string) bool { return slices.Contains(layer.Set, k) })
	}
	if given("max_turns") && layer.Settings.MaxTurns != nil {
		if _, err := drive.RaiseTurnsTo(ctx, th, *layer.Settings.MaxTurns, by); err != nil {
			return err
		}
	}
	if given("max_cost", "max_tokens") {
		var b drive.Bounds
		if given("max_cost") {
			b.USD = layer.Settings.MaxCost
		}
		if given("max_tokens") {
			b.Tokens = layer.Settings.MaxTokens
		}
		if _, err := drive.SetBounds(ctx, th, b, by, "flag", true); err != nil {
			return err
		}
	}
	if given("approve", "allow", "deny") {
		return s.AmendPolicy(ctx, th, layer, by)
	}
	return nil
}

// NewThread is a thread a front end starts (Driver.StartThread).
type NewThread struct {
	// ID is the thread's id; "" takes the next free one, and Picked (when
	// set) is told it, and the one taken meanwhile by another process.
	ID     string
	Picked func(id, taken string)
	// Message is the user's first message; By who starts it.
	Message facts.UserMessage
	By      string
	// PolicyGiven: the command named a policy, recorded as the thread's
	// own even when no settings file names a rule.
	PolicyGiven bool
	// Plan starts the thread in plan mode.
	Plan bool
}

// StartThread starts the thread n under the progress ctx (Start), with
// the budget the session's settings give recorded in its first append,
// in plan mode when n says so.
func (d *Driver) StartThread(ctx context.Context, n NewThread) (*harness.Thread, harness.Outcome, error) {
	var also []harness.Ingress
	in, ok, err := d.s.StartingBudget(n.By)
	if err != nil {
		return nil, harness.Outcome{}, err
	}
	if ok {
		also = append(also, in)
	}
	if n.Plan {
		on, err := drive.PlanOn(n.By)
		if err != nil {
			return nil, harness.Outcome{}, err
		}
		also = append(also, on)
	}
	return d.Start(ctx, n.ID, n.Message, n.By, n.PolicyGiven, n.Picked, also...)
}
