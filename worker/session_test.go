package worker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/worker"
)

// A worker drives the threads of a store the workers share: a session
// that opened a store in a directory itself (no harness server holds it,
// so none gives out its work) has no worker.
func TestOnSessionNeedsASharedStore(t *testing.T) {
	ctx := context.Background()
	place, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Create: true})
	require.NoError(t, err)
	defer s.Close()
	w, ns, err := worker.OnSession(ctx, s, stock.FlagSource(stock.Settings{}), worker.Options{})
	require.ErrorIs(t, err, worker.ErrNotShared)
	require.Nil(t, w)
	require.Nil(t, ns)
}
