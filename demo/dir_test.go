package demo_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/demo"
)

// A directory that holds anything is refused, and nothing is written in
// it; with no directory the demo makes a temporary one, removed after it
// unless kept.
func TestDemoDir(t *testing.T) {
	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "mine.txt"), []byte("keep me"), 0o644))
	_, err := demo.Run(context.Background(), demo.Options{Dir: full}, &demo.Record{})
	require.ErrorIs(t, err, demo.ErrDirNotEmpty)
	entries, err := os.ReadDir(full)
	require.NoError(t, err)
	require.Len(t, entries, 1)

	root, err := demo.Run(context.Background(), demo.Options{}, &demo.Record{})
	require.NoError(t, err)
	require.NoDirExists(t, root, "a temporary demo is removed")

	root, err = demo.Run(context.Background(), demo.Options{Keep: true}, &demo.Record{})
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(root)) })
	require.DirExists(t, root)
	require.FileExists(t, filepath.Join(root, "cache.toml"))
}
