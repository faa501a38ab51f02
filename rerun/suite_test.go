package rerun_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rerun"
)

// A suite reruns each thread once per key, several at once; run again, it
// asks the model nothing, and its results are left out of a selection.
func TestSuiteOncePerKey(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("s%d", i)
		require.Equal(t, harness.StatusDone, e.RunApproved(id).Status)
		ids = append(ids, id)
	}
	rt, actor, cm, ran := rerunOn(t, e, scriptB)
	selected, err := rerun.Select(ctx, rt, actor, harness.StatusDone)
	require.NoError(t, err)
	require.Equal(t, ids, selected)

	var seen []string
	o := rerun.SuiteOptions{Options: rerun.Options{Model: "scripted:b", Runtime: rt, Actor: actor}, Threads: ids, Concurrency: 3,
		OnRow: func(r rerun.Row) { seen = append(seen, r.Thread) }}
	rows, err := rerun.Suite(ctx, o)
	require.NoError(t, err)
	require.Len(t, rows, len(ids))
	require.ElementsMatch(t, ids, seen)
	for i, r := range rows {
		require.Equal(t, ids[i], r.Thread)
		require.Empty(t, r.Err)
		require.False(t, r.Again)
		require.Equal(t, 3, r.Report.DivergedAt)
	}
	asked := cm.n.Load()
	require.Equal(t, int64(3*len(ids)), asked)

	rows, err = rerun.Suite(ctx, o)
	require.NoError(t, err)
	for _, r := range rows {
		require.True(t, r.Again)
		require.Equal(t, 3, r.Report.DivergedAt)
	}
	require.Equal(t, asked, cm.n.Load(), "run again, the suite asks the model nothing")
	require.Equal(t, int64(0), ran.Load())

	selected, err = rerun.Select(ctx, rt, actor, "")
	require.NoError(t, err)
	require.Equal(t, ids, selected, "reruns are left out")
}
