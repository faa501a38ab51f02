package stock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// OpenOrStop asks the holder of a directory store to stop the thread
// only when the store is held: an open that works, or fails otherwise,
// asks nobody; a held store is asked once and opened when let go; a NATS
// store is never asked through the directory.
func TestOpenOrStop(t *testing.T) {
	ctx := context.Background()
	p, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	ask := stock.StopAsk{Thread: "t1", By: "ana", Reason: "enough"}
	asked := 0
	asking := func() { asked++ }

	require.NoError(t, p.OpenOrStop(ctx, ask, func() error { return nil }, asking))
	boom := errors.New("boom")
	require.ErrorIs(t, p.OpenOrStop(ctx, ask, func() error { return boom }, asking), boom)
	require.Zero(t, asked)

	opens := 0
	held := func() error {
		opens++
		if opens == 1 {
			return fmt.Errorf("open: %w", thread.ErrLocked)
		}
		return nil // the holder let go
	}
	require.NoError(t, p.OpenOrStop(ctx, ask, held, asking))
	require.Equal(t, 1, asked)
	require.Equal(t, 2, opens)
	require.False(t, p.StopAsked("t1"), "the request is withdrawn once the store opens")

	remote := p
	remote.Remote = "nats://127.0.0.1:1"
	opens = 0
	require.ErrorIs(t, remote.OpenOrStop(ctx, ask, held, asking), thread.ErrLocked)
	require.Equal(t, 1, asked, "a NATS store is not asked through the directory")
}
