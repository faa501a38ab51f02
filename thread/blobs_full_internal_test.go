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

// PutNewBlob keeps new bytes as PutBlob does; bytes kept already are
// written again and stay as they were; where nothing may be written (a
// full disk, a store opened read-only) bytes kept already are still
// taken, and new ones refused.
func TestPutNewBlob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenPebble(dir, WithMinFree(1))
	require.NoError(t, err)
	a := []byte("the bytes of a file")
	d, err := s.PutNewBlob(ctx, a)
	require.NoError(t, err)
	want, err := s.PutBlob(ctx, a) // the same digest, kept once
	require.NoError(t, err)
	require.Equal(t, want, d)
	d, err = s.PutNewBlob(ctx, a) // again: nothing changes
	require.NoError(t, err)
	require.Equal(t, want, d)
	got, err := s.GetBlob(ctx, d)
	require.NoError(t, err)
	require.Equal(t, a, got)

	old := statFree
	statFree = func(*os.File) (uint64, bool) { return 0, true } // the disk fills up
	d, err = s.PutNewBlob(ctx, a)
	require.NoError(t, err, "bytes kept need no room")
	require.Equal(t, want, d)
	_, err = s.PutNewBlob(ctx, []byte("new bytes"))
	require.ErrorIs(t, err, ErrDiskFull)
	statFree = old
	_, err = s.PutNewBlob(ctx, []byte("new bytes"))
	require.NoError(t, err, "room again")
	require.NoError(t, s.Close())

	_, err = s.PutNewBlob(ctx, a)
	require.ErrorIs(t, err, ErrClosed)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r, err := OpenPebble(dir, ReadOnly())
	require.NoError(t, err)
	defer r.Close()
	_, err = r.PutNewBlob(cctx, a)
	require.ErrorIs(t, err, context.Canceled)
	d, err = r.PutNewBlob(ctx, a)
	require.NoError(t, err, "a read-only store keeps these already")
	require.Equal(t, want, d)
	_, err = r.PutNewBlob(ctx, []byte("other bytes"))
	require.ErrorIs(t, err, ErrReadOnly)
}
