package harnesstest

import (
	"os"
	"path/filepath"

	"github.com/stretchr/testify/require"
)

// Workspace is a new directory of the test holding files: each name a
// slash-separated path inside it (its directories made), each value the
// file's content. It is removed when the test ends.
func Workspace(t T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.True(t, filepath.IsLocal(filepath.FromSlash(name)), "%q is not a path inside the workspace", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}
