package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// Effect is one action of a thread as its view records it. As JSON
// (harness effects -o json, GET /api/effects) its fields are snake_case,
// State as "effect_state" (as action.completed records it), and those
// that are empty or false where nothing happened left out.
type Effect struct {
	Thread   string `json:"thread"`
	ActionID string `json:"action_id"`
	// Tool is the adapter the action ran on.
	Tool string `json:"tool"`
	// Seq is the seq of the action's latest record, and At its time.
	Seq uint64    `json:"seq"`
	At  time.Time `json:"at"`
	// Stage is where the action is: requested, started, completed,
	// interrupted or reconciled.
	Stage scheduler.Stage `json:"stage"`
	// State is the effect state of the completion ("" before one).
	State facts.EffectState `json:"effect_state,omitempty"`
	// InDoubt is true for an action that started and has no end while
	// nobody holds the thread: its process died, and the next resume
	// records it as interrupted. One that started while a runtime holds
	// the thread is running (Stage started, InDoubt false).
	InDoubt bool `json:"in_doubt,omitempty"`
	// Report is the adapter's reported status, when it completed.
	Report facts.ReportStatus `json:"report,omitempty"`
	// Check is the declared check's verdict, if one was recorded.
	Check facts.Verdict `json:"check,omitempty"`
	// Changed are the paths the runtime observed change (on completion,
	// or since it started, when found interrupted).
	Changed []string `json:"changed,omitempty"`
	// Removed are the paths the action made and the runtime removed
	// before it observed (facts.Removal): a commondir planted in a git
	// directory. Not in Changed.
	Removed []string `json:"removed,omitempty"`
	// Open is true while a person must settle the effect: unknown, or
	// interrupted, and not reconciled.
	Open bool `json:"open"`
	// Decision is how a person settled it, if they did.
	Decision facts.Decision `json:"decision,omitempty"`
	// By is set on a change of the workspace that no action of the thread
	// made (workspace.changed): who made it, as far as the record knows —
	// "unknown". ActionID is then the action before which it was found,
	// Seq where it was recorded, State observed, and Tool empty.
	By string `json:"by,omitempty"`
}

// Effects lists the actions of every thread in the runtime's store, with
// their effect state: open ones first, then by thread and seq. It reads
// the logs through the actor's components and runs nothing.
func Effects(ctx context.Context, rt *harness.Runtime, actor harness.Actor) ([]Effect, error) {
	var out []Effect
	page := thread.ThreadsPage{}
	for {
		heads, err := rt.Store.Threads(ctx, page)
		if err != nil {
			return nil, fmt.Errorf("effects: %w", err)
		}
		if len(heads) == 0 {
			break
		}
		for _, h := range heads {
			es, err := ThreadEffects(ctx, rt, actor, h.Thread)
			if err != nil {
				return nil, err
			}
			out = append(out, es...)
		}
		page.After = heads[len(heads)-1].Thread
	}
	slices.SortStableFunc(out, func(a, b Effect) int {
		if a.Open != b.Open {
			if a.Open {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Thread, b.Thread), cmp.Compare(a.Seq, b.Seq))
	})
	return out, nil
}

// ThreadEffects lists the actions of one thread, in the order they were
// requested, each after the changes of the workspace that no action made
// and that were found just before it (see Effect.By).
func ThreadEffects(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string) ([]Effect, error) {
	th, err := rt.Open(ctx, actor, id) // a child, by its own actor
	if err != nil {
		return nil, fmt.Errorf("effects of %s: %w", id, err)
	}
	r, err := th.Reading(ctx)
	if err != nil {
		return nil, fmt.Errorf("effects of %s: %w", id, err)
	}
	var out []Effect
	var asked, free bool // whether nobody holds the thread, once asked
	for _, a := range r.Actions() {
		for _, c := range r.Changed {
			if c.ActionID != a.ID {
				continue
			}
			e := Effect{Thread: id, ActionID: a.ID, Seq: c.Seq, At: a.At, State: facts.EffectObserved, By: c.By}
			for _, p := range c.Changed {
				e.Changed = append(e.Changed, p.Path)
			}
			out = append(out, e)
		}
		e := Effect{Thread: id, ActionID: a.ID, Tool: a.Requested.Adapter, Seq: a.Seq(), At: a.At, Stage: a.Stage(), Open: a.Open()}
		if c := a.Completed; c != nil {
			e.State, e.Report = c.EffectState, c.Report.Status
			for _, p := range c.Observation.Changed {
				e.Changed = append(e.Changed, p.Path)
			}
			for _, r := range c.Observation.Removed {
				e.Removed = append(e.Removed, r.Path)
			}
		}
		if i := a.Interrupted; i != nil {
			for _, p := range i.Changed {
				e.Changed = append(e.Changed, p.Path)
			}
			for _, r := range i.Removed {
				e.Removed = append(e.Removed, r.Path)
			}
		}
		if a.Check != nil {
			e.Check = a.Check.Verdict
		}
		if a.Reconciled != nil {
			e.Decision = a.Reconciled.Decision
		}
		if e.Stage == scheduler.StageStarted {
			if !asked {
				if free, err = harness.Free(ctx, rt.Store, id); err != nil {
					return nil, fmt.Errorf("effects of %s: %w", id, err)
				}
				asked = true
			}
			e.InDoubt = free
		}
		out = append(out, e)
	}
	return out, nil
}
