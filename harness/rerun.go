package harness

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
)

// Rerunner is what a rerun (package rerun) adds to the services: it
// compares each model turn with the original thread's same turn, and
// serves the original's recorded results for the calls that match —
// nothing runs and nobody is asked. Nil for a runtime that reruns
// nothing.
type Rerunner interface {
	// Compare returns the rerun.turn of thread's model turn mt, or nil to
	// record none.
	Compare(ctx context.Context, thread string, turn int, mt facts.ModelTurn) (*facts.RerunTurn, error)
	// Serve returns the original's completion named by from and its
	// check, if it had one: the recorded result of req.
	Serve(ctx context.Context, req action.Request, from facts.Served) (facts.ActionCompleted, *facts.CheckRecorded, error)
}

// compareRerun describes comparing a model turn with the original's,
// when the services rerun a thread.
func compareRerun(thread string, turn int, mt facts.ModelTurn) effect.Effect[Services, *facts.RerunTurn] {
	return effect.FromAsync(func(ctx context.Context, svc Services) (*facts.RerunTurn, error) {
		if svc.Rerun == nil {
			return nil, nil
		}
		return svc.Rerun.Compare(ctx, thread, turn, mt)
	})
}

// serveRecorded describes serving req the original's recorded result:
// its completion (and check) copied, each naming what it copies.
func serveRecorded(req action.Request, from facts.Served) effect.Effect[Services, []facts.Draft] {
	return effect.FromAsync(func(ctx context.Context, svc Services) ([]facts.Draft, error) {
		if svc.Rerun == nil {
			return nil, fmt.Errorf("action %s is served from %s seq %d: %w", req.ActionID, from.Thread, from.Seq, ErrNotServed)
		}
		done, check, err := svc.Rerun.Serve(ctx, req, from)
		if err != nil {
			return nil, fmt.Errorf("serve action %s from %s seq %d: %w", req.ActionID, from.Thread, from.Seq, err)
		}
		done.ActionID = req.ActionID
		sv := from
		done.Served = &sv
		d, err := facts.NewDraft(facts.KindActionCompleted, "", done)
		if err != nil {
			return nil, effect.Defect(err)
		}
		out := []facts.Draft{d}
		if check != nil && from.Check != nil {
			c := *check
			c.ActionID = req.ActionID
			cd, err := facts.NewDraft(facts.KindCheckRecorded, "", c)
			if err != nil {
				return nil, effect.Defect(err)
			}
			out = append(out, cd)
		}
		return out, nil
	})
}
