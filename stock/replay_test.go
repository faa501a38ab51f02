package stock_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// A session tells a thread's record back and, asked to, verifies its log
// and its seals; what fails is kept in the result.
func TestSessionReplay(t *testing.T) {
	s, _ := rerunSession(t, stock.Rerun{})
	r := s.Replay(ctx, "t1", false, stock.SealCheck{}, nil)
	require.NoError(t, r.Err)
	require.False(t, r.Verified)
	require.Equal(t, "t1", r.Tree.Thread)
	require.NotEmpty(t, r.Tree.Entries)
	require.Empty(t, r.Tree.Children)

	r = s.Replay(ctx, "t1", true, stock.SealCheck{}, nil)
	require.NoError(t, r.Err)
	require.True(t, r.Verified)
	require.NoError(t, r.Verify)
	require.NoError(t, r.SealsErr)
	require.Equal(t, "t1", r.Seals.Thread)

	var told []string
	r = s.Replay(ctx, "t1", false, stock.SealCheck{}, func(ctx context.Context, store thread.Store, actor harness.Actor, id string) (audit.TreeAudit, error) {
		told = append(told, id)
		return audit.ReplayTree(ctx, store, actor, id)
	})
	require.NoError(t, r.Err)
	require.Equal(t, []string{"t1"}, told, "the replayer given tells the record")

	r = s.Replay(ctx, "t9", true, stock.SealCheck{}, nil)
	require.Error(t, r.Err)
	require.Error(t, r.Verify, "no log to verify")

	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Replay(ctx, "t1", true, stock.SealCheck{}, nil).Err, stock.ErrSessionClosed)
}
