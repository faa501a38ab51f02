package action

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitDirsIn is gitDirs (planted_test.go) of this package's tests.
func gitDirsIn(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{".git", "sub/.git"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, d, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, d, "config"), []byte("[core]\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644))
	return root
}

// A process that died while its action ran leaves it in doubt; the resume
// that finds it takes away a commondir the reading before the action did
// not hold, before it observes, and says so.
func TestACommondirLeftByAnActionInDoubtIsRemoved(t *testing.T) {
	root := gitDirsIn(t)
	blobs := &memBlobs{m: map[string][]byte{}}
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	b := &Boundary{Observer: ws, Granted: []Capability{Execute}, Root: root, Blobs: blobs}
	req := Request{ActionID: "a1", Capability: Execute, Adapter: "worker"}
	bg, refused := b.Begin(context.Background(), req)
	require.Nil(t, refused)
	require.NotEmpty(t, bg.Started.Manifest)
	// The process dies after its command planted these.
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", ".git", "commondir"), []byte("../../evil\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("b\n"), 0o644))

	ws2, err := NewWorkspace(root)
	require.NoError(t, err)
	b2 := &Boundary{Observer: ws2, Granted: []Capability{Execute}, Root: root, Blobs: blobs}
	in, err := b2.Interrupted(context.Background(), bg.Started)
	require.NoError(t, err)
	require.Len(t, in.Removed, 1)
	require.Equal(t, "sub/.git/commondir", in.Removed[0].Path)
	require.NoFileExists(t, filepath.Join(root, "sub", ".git", "commondir"))
	require.Len(t, in.Changed, 1)
	require.Equal(t, "a.txt", in.Changed[0].Path)
}
