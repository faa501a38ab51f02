package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/stock"
)

// A session searches its threads through the index beside its store,
// brought up to date first; reindexing with no query only builds it and
// says what it indexed; a bad query is search.ErrQuery; a closed session
// searches nothing.
func TestSessionSearch(t *testing.T) {
	s, _ := rerunSession(t, stock.Rerun{})
	res, stats, err := s.Search(ctx, "kind:action.completed tool:write_file", stock.Search{SearchOptions: drive.SearchOptions{Limit: 5}})
	require.NoError(t, err)
	require.Nil(t, stats, "no reindex: no stats")
	require.Len(t, res.Hits, 1, "%+v", res)
	require.Equal(t, "t1", res.Hits[0].Thread)
	require.Equal(t, facts.KindActionCompleted, res.Hits[0].Kind)

	res, stats, err = s.Search(ctx, "", stock.Search{Reindex: true})
	require.NoError(t, err)
	require.NotNil(t, stats)
	require.Equal(t, 1, stats.Threads)
	require.Empty(t, res.Hits)

	res, stats, err = s.Search(ctx, "kind:user.message", stock.Search{Reindex: true, SearchOptions: drive.SearchOptions{Limit: 5}})
	require.NoError(t, err)
	require.NotNil(t, stats)
	require.Len(t, res.Hits, 1)

	_, _, err = s.Search(ctx, "since:yesterdayish", stock.Search{SearchOptions: drive.SearchOptions{Limit: 5}})
	require.ErrorIs(t, err, search.ErrQuery)

	require.NoError(t, s.Close())
	_, _, err = s.Search(ctx, "kind:action", stock.Search{})
	require.ErrorIs(t, err, stock.ErrSessionClosed)
}
