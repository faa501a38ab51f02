package thread_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread"
)

func TestBlobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := thread.OpenPebble(dir)
	require.NoError(t, err)

	data := []byte("ttl_seconds = 300\n")
	sum := sha256.Sum256(data)
	d, err := s.PutBlob(ctx, data)
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(sum[:]), d)
	again, err := s.PutBlob(ctx, data)
	require.NoError(t, err)
	require.Equal(t, d, again, "the same bytes, the same blob")

	got, err := s.GetBlob(ctx, d)
	require.NoError(t, err)
	require.Equal(t, data, got)

	missing := sha256.Sum256([]byte("never kept"))
	_, err = s.GetBlob(ctx, hex.EncodeToString(missing[:]))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = s.GetBlob(ctx, "not-hex")
	require.ErrorIs(t, err, fs.ErrInvalid)

	empty, err := s.PutBlob(ctx, nil)
	require.NoError(t, err)
	got, err = s.GetBlob(ctx, empty)
	require.NoError(t, err)
	require.Empty(t, got)

	// Blobs are not threads.
	heads, err := s.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Empty(t, heads)

	// Damaged bytes are reported, never returned.
	key := append([]byte{'b'}, sum[:]...)
	require.NoError(t, thread.RawDB(s).Set(key, []byte("ttl_seconds = 3000\n"), pebble.Sync))
	_, err = s.GetBlob(ctx, d)
	require.ErrorIs(t, err, thread.ErrCorrupt)

	// Kept across a reopen (a synced append makes them durable).
	d2, err := s.PutBlob(ctx, []byte("second"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s, err = thread.OpenPebble(dir)
	require.NoError(t, err)
	defer s.Close()
	got, err = s.GetBlob(ctx, d2)
	require.NoError(t, err)
	require.Equal(t, []byte("second"), got)
}
