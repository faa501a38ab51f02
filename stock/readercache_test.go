package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// A session opened read-only — as `harness replay --verify` and every
// command that only reads opens one — reads through a store opened
// read-only with the reader's block cache, not a writer's; a session that
// drives keeps the writer's.
func TestReadOnlySessionReadsWithReaderCache(t *testing.T) {
	s, _ := rerunSession(t, stock.Rerun{})
	place, getenv := s.Place, sessionEnv(t, "")
	require.NoError(t, s.Close())

	r, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: getenv, Lenient: true, ReadOnly: true})
	require.NoError(t, err)
	rep := r.ReplayVerified(ctx, "t1", stock.SealCheck{}, nil)
	require.NoError(t, rep.Err)
	require.NoError(t, rep.Verify)
	p, ok := r.Store.(*thread.PebbleStore)
	require.True(t, ok, "the store is opened in this process, not through a server")
	m, err := p.Memory()
	require.NoError(t, err)
	require.True(t, m.ReadOnly)
	require.EqualValues(t, thread.ReaderCacheSize, m.CacheLimit)
	require.NoError(t, r.Close())

	w, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: getenv, Lenient: true})
	require.NoError(t, err)
	defer w.Close()
	m, err = w.Store.(*thread.PebbleStore).Memory()
	require.NoError(t, err)
	require.False(t, m.ReadOnly)
	require.EqualValues(t, thread.DefaultCacheSize, m.CacheLimit)
}
