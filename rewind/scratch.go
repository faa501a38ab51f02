package rewind

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/harness"
)

// RestoreIn puts back, in rt's workspace, the files thread id's actions
// changed after seq to, as Undo does, but records nothing: rt's
// workspace is a copy of the thread's (a live rerun's scratch copy), and
// the thread is not told. It refuses, as PlanUndo does, with an
// *UndoError (ErrUndoRefused) naming each path that no longer holds what
// the thread left there, or whose earlier bytes were not kept; then it
// changes nothing. actor folds the thread.
func RestoreIn(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string, to uint64) (UndoPlan, error) {
	plan, contents, err := planUndo(ctx, rt, actor, id, to)
	if err != nil || len(plan.Steps) == 0 {
		return plan, err
	}
	for i, s := range plan.Steps {
		mode, err := restoreFile(rt.Services.Workspace, s, contents[s.Restore])
		if err != nil {
			return plan, fmt.Errorf("restore %s in %s: %w (files before %s in the list are restored)", id, rt.Services.Workspace, err, s.Path)
		}
		if s.RestoreMode != 0 && mode != 0 {
			plan.Steps[i].RestoreMode = mode
		}
	}
	return plan, nil
}
