package serve

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/thread"
)

// The server's store keeps what the Pebble store keeps besides threads —
// its blobs, its meta space, whether it has a blob, and keeping bytes
// without looking first — so an observer behind the server writes as
// it would to the store itself.
func TestNotifyingStoreKeepsWhatTheStoreKeeps(t *testing.T) {
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	var s thread.Store = notifyAppends(store, newHub(), nil)
	for name, ok := range map[string]bool{
		"Blobs":         is[action.Blobs](s),
		"Meta":          is[action.Meta](s),
		"BlobChecker":   is[action.BlobChecker](s),
		"NewBlobPutter": is[action.NewBlobPutter](s),
	} {
		require.True(t, ok, "the server's store is not an action.%s", name)
	}
	p := s.(action.NewBlobPutter)
	d, err := p.PutNewBlob(t.Context(), []byte("kept\n"))
	require.NoError(t, err)
	again, err := s.(action.Blobs).PutBlob(t.Context(), []byte("kept\n"))
	require.NoError(t, err)
	require.Equal(t, d, again)
	has, err := s.(action.BlobChecker).HasBlob(t.Context(), d)
	require.NoError(t, err)
	require.True(t, has)
}

func is[T any](v any) bool { _, ok := v.(T); return ok }
