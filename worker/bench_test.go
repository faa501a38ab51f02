package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
	"github.com/seed-7cc7a084/harness/worker"
)

// BenchmarkWorkers: how many threads a pool of workers drives to their
// end per second — scripted threads of three model turns and two tool
// calls approved by the policy, no model wait — with 3 workers, and with
// 1 in the same run (the ratio is 3 workers' rate over 1's). Each worker
// has a connection of its own, as on machines of their own; they share
// this machine's cores with the server: one embedded server, or a 3-node
// cluster with 3 replicas.
func BenchmarkWorkers(b *testing.B) {
	b.Run("server", func(b *testing.B) {
		srv, err := natstest.StartServer(b.TempDir())
		require.NoError(b, err)
		defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
		benchmarkWorkers(b, srv.ClientURL(), 1)
	})
	b.Run("cluster", func(b *testing.B) {
		c, err := natstest.StartCluster(b.TempDir())
		require.NoError(b, err)
		defer c.Shutdown()
		benchmarkWorkers(b, c.URL(), 3)
	})
}

func benchmarkWorkers(b *testing.B, url string, replicas int) {
	n := max(b.N, 200)
	rate := func(workers int) float64 {
		t := &testing.T{}
		sc := newScenario(t, url, twoCalls)
		sc.Dir, sc.Replicas, sc.Concurrency = b.TempDir(), replicas, 16
		store, err := natsstore.Dial(context.Background(), sc.URL, sc.storeOptions()...)
		require.NoError(b, err)
		defer store.Close()
		actor, cfg, err := sc.parts()
		require.NoError(b, err)
		rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
		require.NoError(b, err)
		for i := range n {
			_, err := rt.Thread(actor, fmt.Sprintf("t%d", i)).Submit(context.Background(), "Append two lines")
			require.NoError(b, err)
		}
		var (
			mu   sync.Mutex
			done = map[string]bool{}
			all  = make(chan struct{})
		)
		log := func(ev worker.Event) {
			if ev.Kind != worker.EventStopped || ev.State.Status != harness.StatusDone {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if !done[ev.Thread] {
				done[ev.Thread] = true
				if len(done) == n {
					close(all)
				}
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		start := time.Now()
		for range workers {
			s, err := natsstore.Dial(context.Background(), sc.URL, sc.storeOptions()...)
			require.NoError(b, err)
			work, err := s.Work(context.Background())
			require.NoError(b, err)
			o, err := sc.options(s, worker.FromWork(work), log)
			require.NoError(b, err)
			w, err := worker.New(o)
			require.NoError(b, err)
			wg.Go(func() {
				defer s.Close()
				_ = w.Run(ctx)
			})
		}
		select {
		case <-all:
		case <-time.After(5 * time.Minute):
			b.Fatalf("%d workers: %d of %d threads done after 5 minutes", workers, len(done), n)
		}
		elapsed := time.Since(start)
		cancel()
		wg.Wait()
		return float64(n) / elapsed.Seconds()
	}
	b.ResetTimer()
	one := rate(1)
	three := rate(3)
	b.StopTimer()
	b.ReportMetric(three, "threads/s")
	b.ReportMetric(one, "threads/s-1-worker")
	b.ReportMetric(three/one, "ratio")
}
