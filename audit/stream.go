package audit

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// ReplayEach is Replay told as it goes: tell is given each entry in log
// order, and the entries are not kept, so a long log is told in the
// memory its fold takes, not that and every fact besides. The Audit
// returned has no Entries; its Facts says how many were told.
//
// An action's completion is told once its check, when its request
// declared one, is recorded (the facts between are held until then), with
// what the fold says of the action there; Replay, which tells the whole
// log at once, gives each completion what the fold says at the end. The
// two differ only for a log no runtime writes (a check recorded for an
// action that declared none, or recorded twice).
func ReplayEach(ctx context.Context, store thread.Store, actor harness.Actor, id string, tell func(AuditEntry) error) (Audit, error) {
	a, _, err := replayEach(ctx, store, actor, id, tell)
	return a, err
}

// ReplayTreeEach is ReplayTree with the thread's own entries told as
// they come (see ReplayEach): only its children's audits are kept, in the
// TreeAudit returned, whose Audit has no Entries.
func ReplayTreeEach(ctx context.Context, store thread.Store, actor harness.Actor, id string, tell func(AuditEntry) error) (TreeAudit, error) {
	a, fd, err := replayEach(ctx, store, actor, id, tell)
	t := TreeAudit{Audit: a}
	if err != nil {
		return t, err
	}
	kids, err := harness.Folded{ID: id, Fold: fd}.Children()
	if err != nil {
		return t, err
	}
	t.Children, err = childAudits(ctx, store, actor, id, kids)
	return t, err
}

func replayEach(ctx context.Context, store thread.Store, actor harness.Actor, id string, tell func(AuditEntry) error) (Audit, *fold.Fold[harness.Services], error) {
	// A child is folded by the actor its parent's delegation composes.
	th, err := (&harness.Runtime{Store: store}).Open(ctx, actor, id)
	if err != nil {
		return Audit{Thread: id}, nil, err
	}
	fd := fold.New(th.Actor().New()...)
	return replayEachWith(ctx, store, id, tell, func(f facts.Fact) (*fold.Fold[harness.Services], error) {
		return fd, fd.Step(f)
	})
}

// replayEachWith is replayEach with step folding each fact, and returning
// the fold that folded it, to read its action from.
func replayEachWith(ctx context.Context, store thread.Store, id string, tell func(AuditEntry) error, step func(facts.Fact) (*fold.Fold[harness.Services], error)) (Audit, *fold.Fold[harness.Services], error) {
	a := Audit{Thread: id}
	var fd *fold.Fold[harness.Services]
	// held are the entries held back from the first completion whose
	// check is still to come; waiting are those completions, by action,
	// each with its index in held.
	var held []AuditEntry
	waiting := map[string]int{} // membership and lookup only
	flush := func() error {
		for _, e := range held {
			if err := tell(e); err != nil {
				return err
			}
		}
		held = held[:0]
		return nil
	}
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return a, nil, err
		}
		var err error
		if fd, err = step(f); err != nil {
			return a, nil, err
		}
		a.Facts++
		e := AuditEntry{Fact: f}
		switch f.Kind {
		case facts.KindActionCompleted:
			p, err := facts.Decode[facts.ActionCompleted](f)
			if err != nil {
				return a, nil, fmt.Errorf("replay %s seq %d: %w", id, f.Seq, err)
			}
			act, ok, err := harness.Folded{ID: id, Fold: fd}.Action(p.ActionID)
			if err != nil {
				return a, nil, err
			}
			if ok && act.Completed != nil && act.CompletedSeq == f.Seq {
				e.Action = actionAudit(act)
				if act.Requested.Check != nil && act.Check == nil {
					waiting[act.ID] = len(held)
				}
			}
		case facts.KindCheckRecorded:
			p, err := facts.Decode[facts.CheckRecorded](f)
			if err != nil {
				return a, nil, fmt.Errorf("replay %s seq %d: %w", id, f.Seq, err)
			}
			if i, ok := waiting[p.ActionID]; ok {
				act, found, err := harness.Folded{ID: id, Fold: fd}.Action(p.ActionID)
				if err != nil {
					return a, nil, err
				}
				if found && act.Completed != nil {
					held[i].Action = actionAudit(act)
				}
				delete(waiting, p.ActionID)
			}
		}
		held = append(held, e)
		if len(waiting) == 0 {
			if err := flush(); err != nil {
				return a, nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return a, nil, err
	}
	if a.Facts == 0 {
		return a, nil, fmt.Errorf("replay %s: %w", id, harness.ErrUnknownThread)
	}
	v, err := harness.Folded{ID: id, Fold: fd}.View()
	if err != nil {
		return a, nil, err
	}
	a.View, a.Status, a.Reason = v, v.Status, v.Reason
	if v.Status == harness.StatusParked {
		a.Waits = v.Waits
	}
	return a, fd, nil
}

// actionAudit is the audit of a completed action.
func actionAudit(act scheduler.Action) *ActionAudit {
	c := act.Completed
	aa := &ActionAudit{ActionID: act.ID, Tool: act.Requested.Adapter, Report: c.Report, Observation: c.Observation,
		EffectState: c.EffectState, Check: act.Check}
	aa.Flag = flag(aa)
	return aa
}
