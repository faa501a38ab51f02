package natsstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// listAll pages through s's threads limit at a time.
func listAll(t *testing.T, s *natsstore.Store, limit int) []string {
	t.Helper()
	var got []string
	after := ""
	for {
		page, err := s.Threads(context.Background(), thread.ThreadsPage{After: after, Limit: limit})
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), limit)
		if len(page) == 0 {
			return got
		}
		for _, h := range page {
			got = append(got, h.Thread)
		}
		after = page[len(page)-1].Thread
	}
}

// TestThreadIndex: 400 threads started in random order by three stores at
// once, on an index whose leaves hold 4 ids (so that they split again and
// again, and race while they do), list in order and whole, in pages of any
// size, from any store.
func TestThreadIndex(t *testing.T) {
	ctx := context.Background()
	opts := freshStream()
	stores := make([]*natsstore.Store, 3)
	for i := range stores {
		stores[i] = dial(t, shared, opts...)
		natsstore.SetLeafSize(stores[i], 4)
	}
	ids := make([]string, 400)
	for i := range ids {
		ids[i] = fmt.Sprintf("t%03d", i)
	}
	order := slices.Clone(ids)
	rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var wg sync.WaitGroup
	for w, s := range stores {
		wg.Go(func() {
			for i := w; i < len(order); i += len(stores) {
				if _, err := s.Append(ctx, order[i], 0, note(t, "ingress/start")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, limit := range []int{1, 7, 100, 1000} {
		require.Equal(t, ids, listAll(t, stores[limit%3], limit), "pages of %d", limit)
	}
	page, err := stores[0].Threads(ctx, thread.ThreadsPage{After: "t1995", Limit: 3})
	require.NoError(t, err)
	require.Equal(t, []string{"t200", "t201", "t202"}, []string{page[0].Thread, page[1].Thread, page[2].Thread})
}

// TestThreadsCostWhatTheyReturn: a page of 5 threads out of 600 reads the
// index's root and the leaf or two that hold the page, not every leaf.
func TestThreadsCostWhatTheyReturn(t *testing.T) {
	ctx := context.Background()
	s := dial(t, shared, freshStream()...)
	natsstore.SetLeafSize(s, 16)
	for i := range 600 {
		_, err := s.Append(ctx, fmt.Sprintf("t%03d", i), 0, note(t, "ingress/start"))
		require.NoError(t, err)
	}
	for _, after := range []string{"", "t123", "t450", "t598"} {
		before := natsstore.IndexReads(s)
		page, err := s.Threads(ctx, thread.ThreadsPage{After: after, Limit: 5})
		require.NoError(t, err)
		require.NotEmpty(t, page)
		require.LessOrEqual(t, natsstore.IndexReads(s)-before, int64(3), "after %q: the root and at most two leaves", after)
	}
}

// TestThreadsSkipsListedThreadsWithoutFacts: an id listed by an append
// that then failed (its process died, say) is not a thread.
func TestThreadsSkipsListedThreadsWithoutFacts(t *testing.T) {
	ctx := context.Background()
	s := dial(t, shared, freshStream()...)
	for _, id := range []string{"a", "c"} {
		_, err := s.Append(ctx, id, 0, note(t, "ingress/start"))
		require.NoError(t, err)
	}
	for _, id := range []string{"b", "b2", "d"} {
		require.NoError(t, natsstore.IndexAdd(ctx, s, id))
	}
	require.Equal(t, []string{"a", "c"}, listAll(t, s, 1))
	require.Equal(t, []string{"a", "c"}, listAll(t, s, 100))
	_, err := s.Append(ctx, "b", 0, note(t, "ingress/start"))
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, listAll(t, s, 2))
}
