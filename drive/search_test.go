package drive_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/search"
)

// Two runs of the runtime: ana approves a's write of cache.toml, which
// runs to the end; b waits for its approval. A search finds what each
// did, by the fields its facts carry and by its status.
func TestSearchFindsWhatARunDidAndWhoApprovedIt(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	for _, id := range []string{"a", "b"} {
		out, err := e.RT.Start(ctx, e.Actor, id, "Set the cache TTL to 300")
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, out.Status)
		if id == "a" {
			e.Approve(id, out.Waits[0].RequestID, true)
			out, err = e.RT.Resume(ctx, e.Actor, id)
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status)
		}
	}
	ix, err := search.Open(ctx, t.TempDir(), 0)
	require.NoError(t, err)
	defer ix.Close()

	find := func(query string) []string {
		t.Helper()
		res, err := drive.Search(ctx, e.RT, e.Actor, ix, query, drive.SearchOptions{})
		require.NoError(t, err, query)
		require.Zero(t, res.Dropped)
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.Thread+" "+string(h.Kind))
			require.NotEmpty(t, h.Excerpt)
		}
		return got
	}
	require.Equal(t, []string{"a action.completed"}, find("by:ana kind:action.completed tool:write_file path:cache.toml"))
	require.Equal(t, []string{"b confirmation.requested", "a confirmation.requested"}, find("kind:confirmation.requested"), "newest first")
	require.Equal(t, []string{"b confirmation.requested"}, find("kind:confirmation.requested status:parked"))
	require.Equal(t, []string{"a model.turn"}, find("done ttl status:done"))
	require.Empty(t, find("kind:action.completed status:parked"))

	res, err := drive.Search(ctx, e.RT, e.Actor, ix, "ttl status:done", drive.SearchOptions{})
	require.NoError(t, err)
	require.Equal(t, search.Stats{}, res.Indexed, "the index was up to date")
	require.Contains(t, res.Hits[0].Excerpt, "TTL")

	_, err = drive.Search(ctx, e.RT, e.Actor, ix, "status:asleep", drive.SearchOptions{})
	require.ErrorIs(t, err, search.ErrQuery)
	require.ErrorContains(t, err, `term 1 "status:asleep": want done, parked, failed, stopped, resumable`)

	// A new fact is found by the next search, with nothing rebuilt.
	_, err = e.Post("b", facts.KindUserMessage, facts.UserMessage{Text: "also the okapi setting"}, "more")
	require.NoError(t, err)
	res, err = drive.Search(ctx, e.RT, e.Actor, ix, "okapi", drive.SearchOptions{})
	require.NoError(t, err)
	require.Equal(t, search.Stats{Threads: 1, Facts: 1}, res.Indexed)
	require.Len(t, res.Hits, 1)
}

// status: folds each thread once, then reads the status left in the index
// while the thread stays at that head: a second search folds only the
// threads whose hits it shows (to confirm them). A hint planted in the
// index, not borne out by the fold, shows nothing (dropped); a new fact
// makes a thread's hint stale.
func TestSearchByStatusKeepsHintsAndConfirmsThem(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	ids := []string{"a", "b", "c", "d"}
	for _, id := range ids {
		out, err := e.RT.Start(ctx, e.Actor, id, "Set the cache TTL to 300")
		require.NoError(t, err)
		if id != "b" { // b stays parked; the others are done
			e.Approve(id, out.Waits[0].RequestID, true)
			_, err = e.RT.Resume(ctx, e.Actor, id)
			require.NoError(t, err)
		}
	}
	ix, err := search.Open(ctx, t.TempDir(), 0)
	require.NoError(t, err)
	defer ix.Close()
	var folded []string
	o := drive.SearchOptions{Limit: 100, Inspect: func(ctx context.Context, id string) (drive.State, error) {
		folded = append(folded, id)
		th, err := e.RT.Open(ctx, e.Actor, id)
		if err != nil {
			return drive.State{}, err
		}
		return drive.Inspect(ctx, th)
	}}
	threads := func(res drive.SearchResult) []string {
		var out []string
		for _, h := range res.Hits {
			if !slices.Contains(out, h.Thread) {
				out = append(out, h.Thread)
			}
		}
		return out
	}
	res, err := drive.Search(ctx, e.RT, e.Actor, ix, "status:parked", o)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, threads(res))
	slices.Sort(folded)
	require.Equal(t, ids, folded, "each thread folded once")

	folded = nil
	res, err = drive.Search(ctx, e.RT, e.Actor, ix, "status:parked", o)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, threads(res))
	require.Equal(t, []string{"b"}, folded, "only the thread shown, to confirm its hint")

	// A planted hint: c (done) said to be parked at its head.
	h, err := e.Store.Head(ctx, "c")
	require.NoError(t, err)
	require.NoError(t, ix.SetStatusHint("c", h, "parked"))
	folded = nil
	res, err = drive.Search(ctx, e.RT, e.Actor, ix, "status:parked", o)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, threads(res))
	require.Positive(t, res.Dropped)
	require.ElementsMatch(t, []string{"b", "c"}, folded)

	// A new fact of b: its hint is of another head, b is folded again.
	_, err = e.Post("b", facts.KindUserMessage, facts.UserMessage{Text: "and the okapi"}, "more")
	require.NoError(t, err)
	_, ok := ix.StatusHint("b")
	require.True(t, ok, "the index has not read the new fact yet")
	folded = nil
	res, err = drive.Search(ctx, e.RT, e.Actor, ix, "status:parked okapi", o)
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, threads(res))
	require.Equal(t, []string{"b"}, folded)
}
