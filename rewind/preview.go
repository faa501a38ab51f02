package rewind

import (
	"context"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// Previews: a front end shows a person what an undo would do to the
// workspace — each path's change, as a diff of the kept contents — and
// carries out the undo the person looked at, not another one: the plan
// of an undo is fixed by the thread's log up to its head (what the
// thread left, what was there before), so an undo confirmed from a
// preview is bound to the head the preview was made at (UndoSeen).

// Changes are the changes the plan makes to the workspace, one for each
// step, in its order: from what the thread left (Before, BeforeMode) to
// what is put back (After, AfterMode).
func (p UndoPlan) Changes() []facts.PathChange {
	out := make([]facts.PathChange, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = facts.PathChange{Path: s.Path, Before: s.Left, After: s.Restore, BeforeMode: s.LeftMode, AfterMode: s.RestoreMode}
	}
	return out
}

// Since are the changes the thread's actions made after the plan's seq
// that are still in the workspace: the plan's Changes the other way
// round (what was there at To, then what the thread left). A fork at To
// starts from a log that made none of them, in a workspace that holds
// them all (a fork does not change the workspace).
func (p UndoPlan) Since() []facts.PathChange {
	out := p.Changes()
	for i, c := range out {
		out[i] = facts.PathChange{Path: c.Path, Before: c.After, After: c.Before, BeforeMode: c.AfterMode, AfterMode: c.BeforeMode}
	}
	return out
}

// UndoSeen is Undo of the plan a person was shown: refused, changing
// nothing, with an error wrapping ErrMoved unless the thread's head is
// still seq seen (the plan's Head when it was previewed) once the undo
// holds the thread. seen must not be 0 (the head of a thread with facts).
func UndoSeen(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string, to uint64, by string, seen uint64) (UndoPlan, error) {
	if seen == 0 {
		return UndoPlan{}, ErrMoved
	}
	return undo(ctx, rt, actor, id, to, by, seen)
}
