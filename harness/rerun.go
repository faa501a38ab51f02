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
	// Recorded returns the original's fact named by from: what a rerun
	// is offered after a turn (see facts.RerunTurn.Offers).
	Recorded(ctx context.Context, from facts.Served) (facts.Fact, error)
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

// offerRecorded describes offering a rerun the original's fact at
// from.Seq — a person's message, or their answer to the same question
// (answering requestID) — as a copy naming it.
func offerRecorded(from facts.Served, kind facts.Kind, requestID string) effect.Effect[Services, []facts.Draft] {
	return effect.FromAsync(func(ctx context.Context, svc Services) ([]facts.Draft, error) {
		if svc.Rerun == nil {
			return nil, fmt.Errorf("a %s is offered from %s seq %d: %w", kind, from.Thread, from.Seq, ErrNotServed)
		}
		f, err := svc.Rerun.Recorded(ctx, from)
		if err != nil {
			return nil, fmt.Errorf("offer %s seq %d: %w", from.Thread, from.Seq, err)
		}
		if f.Kind != kind {
			return nil, fmt.Errorf("offer %s seq %d: it is a %s, not the %s offered: %w", from.Thread, from.Seq, f.Kind, kind, ErrNotServed)
		}
		sv := facts.Served{Thread: from.Thread, Seq: from.Seq}
		var d facts.Draft
		switch kind {
		case facts.KindUserMessage:
			m, derr := facts.Decode[facts.UserMessage](f)
			if derr != nil {
				return nil, fmt.Errorf("offer %s seq %d: %w", from.Thread, from.Seq, derr)
			}
			d, err = facts.NewDraft(kind, "", facts.UserMessage{Text: m.Text, Served: &sv})
		case facts.KindQuestionAnswered:
			a, derr := facts.Decode[facts.QuestionAnswered](f)
			if derr != nil {
				return nil, fmt.Errorf("offer %s seq %d: %w", from.Thread, from.Seq, derr)
			}
			d, err = facts.NewDraft(kind, "", facts.QuestionAnswered{RequestID: requestID, Text: a.Text, By: a.By, Served: &sv})
		default:
			return nil, effect.Defect(fmt.Errorf("offer %s seq %d: a %s is never offered", from.Thread, from.Seq, kind))
		}
		if err != nil {
			return nil, effect.Defect(err)
		}
		return []facts.Draft{d}, nil
	})
}
