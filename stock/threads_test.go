package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
)

// A session lists its threads, the one active last first, with their
// depth in their trees, and reads a thread's actions, which complete by
// prefix.
func TestSessionThreadsAndReading(t *testing.T) {
	s, r := rerunSession(t, stock.Rerun{Threads: []string{"t1"}})
	res, err := s.Rerun(ctx, r) // a second thread, active last
	require.NoError(t, err)

	rows, depth, err := s.Threads(ctx, drive.ListOptions{})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, []int{0, 0}, depth)
	require.Equal(t, res.Report.Rerun, rows[0].Thread, "the rerun was active last")
	require.Equal(t, "t1", rows[1].Thread)

	rows, _, err = s.Threads(ctx, drive.ListOptions{Status: harness.StatusParked})
	require.NoError(t, err)
	require.Empty(t, rows)

	rd, err := s.Reading(ctx, "t1")
	require.NoError(t, err)
	cs := drive.ActionCompletions(rd, "")
	require.Len(t, cs, 1, "t1 wrote one file")
	require.Contains(t, cs[0].About, "write_file at seq ")
	require.Empty(t, drive.ActionCompletions(rd, "zz"))

	require.NoError(t, s.Close())
	_, _, err = s.Threads(ctx, drive.ListOptions{})
	require.ErrorIs(t, err, stock.ErrSessionClosed)
}
