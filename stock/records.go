package stock

import (
	"context"
	"slices"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/rewind"
)

// Effects are the actions of every thread of the store with their effect
// state (audit.Effects), open ones first; open keeps only the open ones
// (unknown or in doubt, not yet reconciled).
func (s *Session) Effects(ctx context.Context, open bool) ([]audit.Effect, error) {
	rt, _, err := s.Runtime()
	if err != nil {
		return nil, err
	}
	es, err := audit.Effects(ctx, rt, s.Stock.Actor)
	if err != nil {
		return nil, err
	}
	if open {
		es = slices.DeleteFunc(es, func(e audit.Effect) bool { return !e.Open })
	}
	return es, nil
}

// Undo restores the workspace files the thread id's actions changed
// after seq to, as by's word, and records it (rewind.Undo); dryRun only
// plans it (rewind.PlanUndo) and changes nothing.
func (s *Session) Undo(ctx context.Context, id string, to uint64, dryRun bool, by string) (rewind.UndoPlan, error) {
	rt, _, err := s.Runtime()
	if err != nil {
		return rewind.UndoPlan{}, err
	}
	if dryRun {
		return rewind.PlanUndo(ctx, rt, s.Stock.Actor, id, to)
	}
	return rewind.Undo(ctx, rt, s.Stock.Actor, id, to, by)
}
