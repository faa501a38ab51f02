package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A session tells a thread's record back and, asked to, verifies its log
// and its seals; what fails is kept in the result.
func TestSessionReplay(t *testing.T) {
	s, _ := rerunSession(t, stock.Rerun{})
	r := s.Replay(ctx, "t1", false, stock.SealCheck{})
	require.NoError(t, r.Err)
	require.False(t, r.Verified)
	require.Equal(t, "t1", r.Tree.Thread)
	require.NotEmpty(t, r.Tree.Entries)
	require.Empty(t, r.Tree.Children)

	r = s.Replay(ctx, "t1", true, stock.SealCheck{})
	require.NoError(t, r.Err)
	require.True(t, r.Verified)
	require.NoError(t, r.Verify)
	require.NoError(t, r.SealsErr)
	require.Equal(t, "t1", r.Seals.Thread)

	r = s.Replay(ctx, "t9", true, stock.SealCheck{})
	require.Error(t, r.Err)
	require.Error(t, r.Verify, "no log to verify")

	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Replay(ctx, "t1", true, stock.SealCheck{}).Err, stock.ErrSessionClosed)
}
