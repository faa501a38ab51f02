package thread_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// A store opened read-only replays its write-ahead log's tail into
// memtables, which Pebble counts against the block cache: the reader's
// blocks must still get the cache it asked for, or every block is read and
// decompressed again at every look.
func TestReadOnlyCacheKeepsRoomForBlocks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := thread.OpenPebble(dir)
	require.NoError(t, err)
	var head uint64
	appendN := func(n int) {
		for i := 0; i < n; i += 100 {
			var drafts []facts.Draft
			for j := i; j < i+100 && j < n; j++ {
				d, err := facts.NewDraft(facts.KindUserMessage, fmt.Sprintf("ingress/%d-%d", head, j),
					facts.UserMessage{Text: fmt.Sprintf("note %d, padded so that the tables hold many blocks: %0200d", j, j)})
				require.NoError(t, err)
				drafts = append(drafts, d)
			}
			h, err := w.Append(ctx, "t", head, drafts...)
			require.NoError(t, err)
			head = h.Seq
		}
	}
	appendN(5000)
	require.NoError(t, thread.RawDB(w).Flush()) // the bulk in tables
	appendN(10)                                 // a tail left in the log
	require.NoError(t, w.Close())

	const asked = 256 << 10 // no more than the smallest memtable Pebble makes
	r, err := thread.OpenPebble(dir, thread.ReadOnly(), thread.WithCacheSize(asked))
	require.NoError(t, err)
	defer r.Close()
	for _, err := range r.Read(ctx, "t", 1) {
		require.NoError(t, err)
	}
	m, err := r.Memory()
	require.NoError(t, err)
	require.True(t, m.ReadOnly)
	require.EqualValues(t, asked, m.CacheLimit)
	require.Positive(t, m.MemTables, "the tail is replayed into memtables")
	require.Positive(t, m.CacheBytes, "the blocks read are cached, the memtables notwithstanding: %+v", m)
	require.Positive(t, m.CacheHits, "%+v", m)

	// A writer's store keeps the cache it is given, with no room taken.
	require.NoError(t, r.Close())
	w, err = thread.OpenPebble(dir)
	require.NoError(t, err)
	defer w.Close()
	m, err = w.Memory()
	require.NoError(t, err)
	require.False(t, m.ReadOnly)
	require.EqualValues(t, thread.DefaultCacheSize, m.CacheLimit)
}
