package action_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
)

// Named says, from the last reading alone, where the entries of a name
// are: directories (empty, or holding only what the scope leaves out),
// files and links, not what lies below one, nor in a .git's working
// data; nothing before the first reading.
func TestNamed(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/.harness/db", "b/.harness/x/.harness", "c", ".git/objects/.harness", "e/.harness"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "a/.harness/db/LOG"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "c/.harness"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("/nowhere", filepath.Join(root, "d.harness")))
	require.NoError(t, os.Symlink("/nowhere", filepath.Join(root, "c/../.harness")))
	w, err := action.NewWorkspace(root)
	require.NoError(t, err)
	defer w.Close()
	names := []string{".harness"}

	_, _, ok := w.Named(names)
	require.False(t, ok, "no reading yet")
	require.Zero(t, w.Readings())

	_, err = w.Observe(context.Background())
	require.NoError(t, err)
	paths, reading, ok := w.Named(names)
	require.True(t, ok)
	require.Equal(t, uint64(1), reading)
	require.Equal(t, uint64(1), w.Readings())
	require.Equal(t, []string{".harness", "a/.harness", "b/.harness", "c/.harness", "e/.harness"}, paths)

	// What changes shows in the next reading, not before it.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "f/.harness"), 0o755))
	paths, _, _ = w.Named(names)
	require.NotContains(t, paths, "f/.harness")
	_, err = w.Observe(context.Background())
	require.NoError(t, err)
	paths, reading, _ = w.Named(names)
	require.Equal(t, uint64(2), reading)
	require.Contains(t, paths, "f/.harness")
}
