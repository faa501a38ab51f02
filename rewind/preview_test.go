package rewind_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/rewind"
)

// TestUndoSeen: an undo confirmed from a preview runs only if the thread
// is still where the preview saw it, and changes nothing otherwise; the
// preview's changes are the undo's, and the thread's since the seq the
// other way round.
func TestUndoSeen(t *testing.T) {
	e := newModeEnv(t, writeRunScript, 0o644)
	plan, err := rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", 0)
	require.NoError(t, err)
	undo := []facts.PathChange{{Path: "run.sh", Before: digest("echo new\n"), After: digest("echo old\n"), BeforeMode: 0o644, AfterMode: 0o644}}
	require.Equal(t, undo, plan.Changes())
	require.Equal(t, []facts.PathChange{{Path: "run.sh", Before: digest("echo old\n"), After: digest("echo new\n"), BeforeMode: 0o644, AfterMode: 0o644}}, plan.Since())

	for _, seen := range []uint64{0, plan.Head - 1, plan.Head + 1} {
		_, err = rewind.UndoSeen(ctx, e.RT, e.Stock.Actor, "t", 0, "ana", seen)
		require.ErrorIs(t, err, rewind.ErrMoved, "seen %d", seen)
		require.Equal(t, "echo new\n", e.Read("run.sh"), "refused, it changes nothing")
	}
	done, err := rewind.UndoSeen(ctx, e.RT, e.Stock.Actor, "t", 0, "ana", plan.Head)
	require.NoError(t, err)
	require.Equal(t, undo, done.Changes())
	require.Equal(t, "echo old\n", e.Read("run.sh"))
	fi, err := os.Stat(e.Root + "/run.sh")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
}
