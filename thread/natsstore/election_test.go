package natsstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// TestOpenThroughAnElection: on a 3-node cluster whose nodes are processes
// of their own, the node leading the store's stream is killed with
// SIGKILL, as a machine dies (no stepping down). A store opened right
// after, over the URLs of all three nodes as a user names them, waits
// through the election and opens; it reads, appends and opens the work
// queue (what a worker does starting). With a second node killed, no
// leader can be elected: opening fails after its wait with ErrNoLeader and
// a message saying what it tried and what to check.
func TestOpenThroughAnElection(t *testing.T) {
	c := natstest.NewProcessCluster(t)
	ctx := context.Background()
	name, opts := freshNamed()
	opts = append(opts, natsstore.WithReplicas(3))
	s, err := natsstore.Dial(ctx, c.URL(), opts...)
	require.NoError(t, err)
	_, err = s.Append(ctx, "t", 0, msg(t, "ingress/a", "a"))
	require.NoError(t, err)
	_, err = s.Work(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	leader, err := c.Leader(name, "", 30*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.Kill(leader))
	killed := time.Now()

	// The default wait, 20s, is more than the raft's longest election
	// (9s); a minute leaves room for a loaded machine.
	const wait = time.Minute
	r, err := natsstore.Dial(ctx, c.AllURLs(), append(opts, natsstore.WithOpenWait(wait))...)
	took := time.Since(killed)
	require.NoError(t, err, "open %v after %s, the stream's leader, was killed", took, leader)
	defer r.Close()
	t.Logf("opened %v after %s, the stream's leader, was killed", took.Round(time.Millisecond), leader)
	h, err := r.Head(ctx, "t")
	require.NoError(t, err)
	require.EqualValues(t, 1, h.Seq)
	_, err = r.Append(ctx, "t", h.Seq, msg(t, "ingress/b", "b"))
	require.NoError(t, err)
	_, err = r.Work(ctx)
	require.NoError(t, err)

	// A second node gone: the one left cannot elect a leader alone.
	leader2, err := c.Leader(name, leader, 30*time.Second)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, c.Kill(leader2))
	const short = 2 * time.Second
	start := time.Now()
	_, err = natsstore.Dial(ctx, c.AllURLs(), append(opts, natsstore.WithOpenWait(short))...)
	took = time.Since(start)
	require.ErrorIs(t, err, natsstore.ErrNoLeader)
	t.Logf("with two nodes down, after %v: %v", took.Round(time.Millisecond), err)
	for _, want := range []string{"open store " + name, "stream " + name, "no leader answered for 2", "tries", "more than half of its nodes", "(2 of 3)", "nats server report jetstream"} {
		require.Contains(t, err.Error(), want)
	}
	require.GreaterOrEqual(t, took, short, "gave up before its wait")
	require.Less(t, took, short+10*time.Second, "gave up long after its wait") // room for a loaded machine

	// A cancelled context ends the wait at once, with its own error.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, err = natsstore.Dial(cctx, c.AllURLs(), append(opts, natsstore.WithOpenWait(time.Minute))...)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, natsstore.ErrNoLeader)
	require.Less(t, time.Since(start), 30*time.Second)
}

// BenchmarkOpenAfterLeaderKill measures how long after the SIGKILL of the
// node leading the store's stream (on a fresh 3-node cluster of processes
// each time) a store opens, and the election it waits through: the time
// until the stream and each of its buckets has a leader again, as the
// nodes left answer. The goal is open-s ≤ election-s + 1.
//
//	go test ./thread/natsstore -run '^$' -bench OpenAfterLeaderKill -benchtime 5x
func BenchmarkOpenAfterLeaderKill(b *testing.B) {
	ctx := context.Background()
	var openSum, electSum, worst time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		c := natstest.NewProcessCluster(b)
		name, opts := freshNamed()
		opts = append(opts, natsstore.WithReplicas(3))
		s, err := natsstore.Dial(ctx, c.URL(), opts...)
		require.NoError(b, err)
		_, err = s.Append(ctx, "t", 0, msg(b, "ingress/a", "a"))
		require.NoError(b, err)
		require.NoError(b, s.Close())
		leader, err := c.Leader(name, "", 30*time.Second)
		require.NoError(b, err)
		left := c.URL()
		b.StartTimer()

		require.NoError(b, c.Kill(leader))
		killed := time.Now()
		// Watch the elections from the side.
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			elected time.Duration
			werr    error
		)
		for _, st := range []string{name, "KV_" + name + "_LEASES", "KV_" + name + "_THREADS", "OBJ_" + name + "_BLOBS"} {
			wg.Go(func() {
				_, err := natstest.StreamLeader(left, st, leader, time.Minute)
				mu.Lock()
				defer mu.Unlock()
				elected = max(elected, time.Since(killed))
				if err != nil {
					werr = fmt.Errorf("%s: %w", st, err)
				}
			})
		}
		r, err := natsstore.Dial(ctx, c.AllURLs(), append(opts, natsstore.WithOpenWait(time.Minute))...)
		opened := time.Since(killed)
		require.NoError(b, err)
		b.StopTimer()
		wg.Wait()
		require.NoError(b, werr)
		require.NoError(b, r.Close())
		c.Shutdown()
		openSum += opened
		electSum += elected
		worst = max(worst, opened-elected)
		b.Logf("run %d: killed %s; elected after %v, opened after %v", i, leader, elected.Round(time.Millisecond), opened.Round(time.Millisecond))
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(openSum.Seconds()/n, "open-s")
	b.ReportMetric(electSum.Seconds()/n, "election-s")
	b.ReportMetric(worst.Seconds(), "worst-open-minus-election-s")
}
