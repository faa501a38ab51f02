package harness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
)

// removeScript has a command remove d/f.txt, which an undo puts back.
const removeScript = `{"tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"rm d/f.txt\"}"}]}
{"text": "Done."}`

// newRemovedEnv runs a thread that removed d/f.txt ("mine").
func newRemovedEnv(t *testing.T) *stockEnv {
	t.Helper()
	e := newStockEnv(t, removeScript)
	require.NoError(t, os.Mkdir(filepath.Join(e.root, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "d", "f.txt"), []byte("mine\n"), 0o644))
	require.Equal(t, harness.StatusDone, e.runApproved("t").Status)
	require.Equal(t, "(absent)", e.read("d/f.txt"))
	return e
}

// An undo never writes through a parent directory that became a symbolic
// link: not outside the workspace, and not over another file inside it.
func TestUndoRefusesALinkedParent(t *testing.T) {
	t.Run("outside", func(t *testing.T) {
		e := newRemovedEnv(t)
		outside := t.TempDir()
		require.NoError(t, os.Remove(filepath.Join(e.root, "d")))
		require.NoError(t, os.Symlink(outside, filepath.Join(e.root, "d")))

		_, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.ErrorIs(t, err, harness.ErrUndoRefused)
		require.ErrorContains(t, err, "d/f.txt: its parent directory d is a symbolic link")
		_, err = os.Lstat(filepath.Join(outside, "f.txt"))
		require.ErrorIs(t, err, os.ErrNotExist, "nothing was written outside the workspace")
	})
	t.Run("inside", func(t *testing.T) {
		e := newRemovedEnv(t)
		require.NoError(t, os.Mkdir(filepath.Join(e.root, "e"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.root, "e", "f.txt"), []byte("someone else's\n"), 0o644))
		require.NoError(t, os.Remove(filepath.Join(e.root, "d")))
		require.NoError(t, os.Symlink("e", filepath.Join(e.root, "d")))

		head, err := e.store.Head(ctx, "t")
		require.NoError(t, err)
		_, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.ErrorIs(t, err, harness.ErrUndoRefused)
		require.ErrorContains(t, err, "d/f.txt: its parent directory d is a symbolic link")
		require.Equal(t, "someone else's\n", e.read("e/f.txt"))
		after, err := e.store.Head(ctx, "t")
		require.NoError(t, err)
		require.Equal(t, head.Seq, after.Seq, "nothing was appended")
	})
	t.Run("plain", func(t *testing.T) {
		e := newRemovedEnv(t)
		_, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
		require.NoError(t, err)
		require.Equal(t, "mine\n", e.read("d/f.txt"))
	})
}
