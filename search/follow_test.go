package search

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A follower indexes the threads it is told moved, after its first round
// indexed everything; while another process has the index open it tries
// again (after waiting openWait), and indexes them once the index is
// free.
func TestFollowerIndexesMovedThreadsAndWaitsForTheIndex(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := fixture(t, 3)
	dir := t.TempDir()
	rounds := make(chan Stats, 100)
	f := &Follower{
		Open:    func(ctx context.Context, wait time.Duration) (*Index, error) { return Open(ctx, dir, wait) },
		Store:   store,
		Settle:  10 * time.Millisecond,
		Indexed: func(st Stats) { rounds <- st },
		Logf:    t.Logf,
	}
	done := make(chan struct{})
	go func() { defer close(done); require.NoError(t, f.Run(ctx)) }()
	require.Equal(t, Stats{Threads: 3, Facts: 3 * fxFacts}, <-rounds, "the first round: all")

	// Another process has the index: the moved thread waits for it.
	held, err := Open(ctx, dir, time.Second)
	require.NoError(t, err)
	x := fxOf(7)
	_, err = store.Append(ctx, x.id, 0, x.drafts(t)...)
	require.NoError(t, err)
	f.Moved(x.id)
	select {
	case st := <-rounds:
		t.Fatalf("indexed %v while the index was held", st)
	case <-time.After(openWait + 500*time.Millisecond): // past the round's own wait
	}
	require.NoError(t, held.Close())
	select {
	case st := <-rounds:
		require.Equal(t, Stats{Threads: 1, Facts: fxFacts}, st)
	case <-time.After(10 * time.Second):
		t.Fatal("not indexed once the index was free")
	}
	cancel()
	<-done
}
