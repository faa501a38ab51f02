package stock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A session lists the store's effects (none open after a write the
// runtime observed), plans an undo without changing anything, then undoes
// the thread's write.
func TestSessionEffectsAndUndo(t *testing.T) {
	s, _ := rerunSession(t, stock.Rerun{})
	file := filepath.Join(s.Place.Root, "a.txt")
	require.FileExists(t, file)

	es, err := s.Effects(ctx, false)
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, "t1", es[0].Thread)
	open, err := s.Effects(ctx, true)
	require.NoError(t, err)
	require.Empty(t, open, "an observed write is no open effect")

	plan, err := s.Undo(ctx, "t1", 0, true, "ana")
	require.NoError(t, err)
	require.NotEmpty(t, plan.Steps)
	require.FileExists(t, file, "a dry run changes nothing")

	_, err = s.Undo(ctx, "t1", 0, false, "ana")
	require.NoError(t, err)
	_, err = os.Stat(file)
	require.True(t, os.IsNotExist(err), "the file the thread made is gone")
}
