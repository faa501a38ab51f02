package thread

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/stretchr/testify/require"
)

// A file put back to bytes the store keeps already, once the disk is below
// the store's free-space floor, is observed: bytes kept need no room.
func TestRevertOnAFullDiskNeedsNoRoom(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	x := filepath.Join(root, "x")
	s, err := OpenPebble(dir, WithMinFree(1))
	require.NoError(t, err)
	defer s.Close()
	w, err := action.NewWorkspace(root, action.WithBlobs(s, 1<<20), action.WithChangeFeed(true))
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, os.WriteFile(x, []byte("A"), 0o644))
	_, err = w.Observe(context.Background())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(x, []byte("B"), 0o644))
	_, err = w.Observe(context.Background())
	require.NoError(t, err)

	old := statFree
	statFree = func(*os.File) (uint64, bool) { return 0, true } // the disk fills up
	defer func() { statFree = old }()
	require.NoError(t, os.WriteFile(x, []byte("A"), 0o644)) // back to bytes kept
	_, err = w.Observe(context.Background())
	require.NoError(t, err, "bytes the store keeps need no room")
}
