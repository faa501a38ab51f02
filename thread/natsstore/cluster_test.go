package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
	"github.com/seed-7cc7a084/harness/thread/storetest"
)

// testCluster is three embedded nats-server nodes in this process, routed
// to each other on loopback, each with JetStream and a store directory of
// its own (natstest.Cluster).
type testCluster struct {
	nodes []*server.Server
}

// startCluster starts a cluster of three nodes keeping their data under
// dir and waits until JetStream answers on it.
func startCluster(dir string) (*testCluster, error) {
	c, err := natstest.StartCluster(dir)
	if err != nil {
		return nil, err
	}
	return &testCluster{nodes: c.Nodes}, nil
}

// url lists the client URLs of the nodes still running.
func (c *testCluster) url() string {
	var urls []string
	for _, s := range c.nodes {
		if s.Running() {
			urls = append(urls, s.ClientURL())
		}
	}
	return strings.Join(urls, ",")
}

func (c *testCluster) shutdown() {
	for _, s := range c.nodes {
		s.Shutdown()
	}
	for _, s := range c.nodes {
		s.WaitForShutdown()
	}
}

// node returns the node named name.
func (c *testCluster) node(name string) *server.Server {
	for _, s := range c.nodes {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

var (
	clusterOnce sync.Once
	cluster     *testCluster
	clusterErr  error
	clusterDir  string
)

// sharedCluster returns the cluster the cluster tests share, starting it
// on first use (TestMain shuts it down).
func sharedCluster(t testing.TB) *testCluster {
	t.Helper()
	clusterOnce.Do(func() {
		dir, err := tempDir("natsstore-cluster-")
		if err != nil {
			clusterErr = err
			return
		}
		clusterDir = dir
		cluster, clusterErr = startCluster(dir)
	})
	require.NoError(t, clusterErr)
	return cluster
}

// TestClusterConformance runs the conformance suite on a 3-node cluster,
// every stream and bucket with 3 replicas.
func TestClusterConformance(t *testing.T) {
	c := sharedCluster(t)
	opened := map[*natsstore.Store][]natsstore.Option{}
	var mu sync.Mutex
	open := func(t *testing.T, opts []natsstore.Option) *natsstore.Store {
		s, err := natsstore.Dial(context.Background(), c.url(), opts...)
		require.NoError(t, err)
		mu.Lock()
		opened[s] = opts
		mu.Unlock()
		return s
	}
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T) thread.Store {
			// Replicated appends of megabytes (LongAppend) on a loaded
			// machine under the race detector take more than the default
			// timeout; the store's answers are what is tested, not its speed.
			return open(t, append(freshStream(), natsstore.WithReplicas(3), natsstore.WithTimeout(time.Minute)))
		},
		Reopen: func(t *testing.T, s thread.Store) thread.Store {
			require.NoError(t, s.Close())
			mu.Lock()
			opts := opened[s.(*natsstore.Store)]
			mu.Unlock()
			return open(t, opts)
		},
	})
}

// TestClusterReplicas: a store opened with 3 replicas makes its stream and
// its buckets with 3.
func TestClusterReplicas(t *testing.T) {
	c := sharedCluster(t)
	ctx := context.Background()
	name, opts := freshNamed()
	s := dial(t, c.nodes[0], append(opts, natsstore.WithReplicas(3))...)
	_, err := s.Append(ctx, "t", 0, msg(t, "ingress/a", "x"))
	require.NoError(t, err)
	nc, err := nats.Connect(c.url())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for _, stream := range []string{name, "KV_" + name + "_LEASES", "KV_" + name + "_THREADS", "OBJ_" + name + "_BLOBS"} {
		st, err := js.Stream(ctx, stream)
		require.NoError(t, err, stream)
		require.Equal(t, 3, st.CachedInfo().Config.Replicas, stream)
		if !strings.HasPrefix(stream, "OBJ_") {
			require.False(t, st.CachedInfo().Config.AllowDirect, "%s: gets answered by the leader", stream)
		}
	}
}

// TestClusterNodeKilled: writers append to their threads on a 3-node
// cluster with 3 replicas; the node leading the stream is shut down
// mid-run. Every append acknowledged before or after is in the log after
// the leader change, appends go on on the two nodes left, and every log
// verifies.
func TestClusterNodeKilled(t *testing.T) {
	dir := t.TempDir()
	c, err := startCluster(dir)
	require.NoError(t, err)
	defer c.shutdown()
	ctx := context.Background()
	name, opts := freshNamed()
	opts = append(opts, natsstore.WithReplicas(3), natsstore.WithTimeout(30*time.Second))
	s := dial(t, c.nodes[0], opts...)
	// The store's connection knows every node, as a user's URL list would.
	s2, err := natsstore.Dial(ctx, c.url(), opts...)
	require.NoError(t, err)
	defer s2.Close()

	const writers, before, after = 4, 40, 40
	var (
		acked   [writers][]thread.Head // every head a writer's append returned
		counts  [writers]atomic.Int64  // len(acked[w]), for the main goroutine
		killed  atomic.Bool
		pastMu  sync.Mutex
		pastAck [writers]int // appends acknowledged after the kill
		wg      sync.WaitGroup
		errs    = make(chan error, writers)
	)
	for w := range writers {
		store := []*natsstore.Store{s, s2}[w%2]
		id := fmt.Sprintf("killed.%d", w)
		wg.Go(func() {
			var head thread.Head
			for i := 0; ; i++ {
				pastMu.Lock()
				done := pastAck[w] >= after
				pastMu.Unlock()
				if done {
					return
				}
				if i > 10_000 {
					errs <- fmt.Errorf("writer %d: no end", w)
					return
				}
				cause := fmt.Sprintf("ingress/%d", len(acked[w]))
				h, err := store.Append(ctx, id, head.Seq, msg(t, cause, cause))
				switch {
				case err == nil:
					head = h
					acked[w] = append(acked[w], h)
					counts[w].Add(1)
					if killed.Load() {
						pastMu.Lock()
						pastAck[w]++
						pastMu.Unlock()
					}
					continue
				case errors.Is(err, thread.ErrDuplicateCause):
					// An append whose answer was lost was stored after all:
					// not acknowledged, but there.
				case errors.Is(err, thread.ErrConflict):
				default:
					// The leader went away mid-append: the outcome may be
					// unknown. Look, as a caller would.
					t.Logf("writer %d: %v", w, err)
				}
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				h, herr := store.Head(rctx, id)
				cancel()
				if herr != nil && !errors.Is(herr, thread.ErrNotFound) {
					t.Logf("writer %d: head: %v", w, herr)
					time.Sleep(50 * time.Millisecond)
					continue
				}
				if errors.Is(err, thread.ErrDuplicateCause) {
					acked[w] = append(acked[w], thread.Head{}) // stored, unacknowledged
					counts[w].Add(1)
				}
				head = h
			}
		})
	}

	// Once every writer has some appends acknowledged, shut down the
	// stream's leader.
	nc, err := nats.Connect(c.url())
	require.NoError(t, err)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for w := range writers {
			if counts[w].Load() < before {
				return false
			}
		}
		return true
	}, 60*time.Second, 10*time.Millisecond)
	st, err := js.Stream(ctx, name)
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	leader := info.Cluster.Leader
	require.NotEmpty(t, leader)
	nc.Close()
	killed.Store(true)
	c.node(leader).Shutdown()
	t.Logf("shut down %s, the stream's leader", leader)

	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	// A new store on the nodes left reads every acknowledged append. (The
	// cluster may still be settling after the election: ask again until it
	// answers, as a client would.)
	var r *natsstore.Store
	require.Eventually(t, func() bool {
		r, err = natsstore.Dial(ctx, c.url(), opts...)
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "dial after the kill: %v", err)
	defer r.Close()
	nc, err = nats.Connect(c.url())
	require.NoError(t, err)
	defer nc.Close()
	js, err = jetstream.New(nc)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		if st, err = js.Stream(ctx, name); err != nil {
			return false
		}
		info, err = st.Info(ctx)
		return err == nil && info.Cluster != nil && info.Cluster.Leader != ""
	}, 30*time.Second, 100*time.Millisecond, "stream info after the kill: %v", err)
	require.NotEqual(t, leader, info.Cluster.Leader, "the stream has a new leader")
	for w := range writers {
		id := fmt.Sprintf("killed.%d", w)
		require.GreaterOrEqual(t, pastAck[w], after, "writer %d appended after the kill", w)
		var fs []facts.Fact
		for f, err := range r.Read(ctx, id, 1) {
			require.NoError(t, err)
			fs = append(fs, f)
		}
		for _, h := range acked[w] {
			if h.Seq == 0 {
				continue
			}
			require.GreaterOrEqual(t, uint64(len(fs)), h.Seq, "writer %d: acknowledged seq %d", w, h.Seq)
			require.Equal(t, h.Hash, fs[h.Seq-1].Hash(), "writer %d: acknowledged seq %d holds its fact", w, h.Seq)
		}
		require.NoError(t, r.Verify(ctx, id))
	}
}
