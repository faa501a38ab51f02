package worker_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
	"github.com/seed-7cc7a084/harness/worker"
)

// A worker process drains on its first SIGTERM (RunDraining), and a
// second one interrupts at once: the tool still running is cut off and
// recorded as interrupted, and the process exits long before its drain
// would have run out.
func TestSecondSignalInterrupts(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), twoCalls)
	sc.LeaseTTL, sc.AckWait, sc.Block, sc.Stoppable, sc.Drain = 30*time.Second, 60*time.Second, 1, true, 2*time.Minute
	store := sc.dial(t)
	c := startChild(t, sc)
	submit(t, sc, store, "t", 1)
	require.Eventually(t, func() bool { return exists(filepath.Join(sc.Dir, "running")) }, 20*time.Second, 10*time.Millisecond)
	start := time.Now()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	_, exited := c.wait(time.Second)
	require.False(t, exited, "the first signal drains: the running tool holds the worker")
	// The second signal is listened for once the first ended the run: sent
	// until the process exits.
	require.Eventually(t, func() bool {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		_, exited := c.wait(200 * time.Millisecond)
		return exited
	}, 30*time.Second, 10*time.Millisecond)
	require.Less(t, time.Since(start), time.Minute, "interrupted, not drained")
	require.Contains(t, kinds(t, store, "t1"), facts.KindActionInterrupted)
}

// idleQueue gives no jobs: Take waits for its context, saying it was
// asked.
type idleQueue struct{ asked chan struct{} }

func (q idleQueue) Take(ctx context.Context, _ int, _ time.Duration, _ func(worker.Job)) error {
	select {
	case q.asked <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil
}

func (q idleQueue) KeepEvery() time.Duration { return 0 }

// idleWorker is a worker on a queue that gives no jobs.
func idleWorker(t *testing.T) (*worker.Worker, idleQueue) {
	t.Helper()
	sc := newScenario(t, "nats://127.0.0.1:1", oneTurn)
	q := idleQueue{asked: make(chan struct{}, 1)}
	o, err := sc.options(nil, q, nil)
	require.NoError(t, err)
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	o.Store = store
	w, err := worker.New(o)
	require.NoError(t, err)
	return w, q
}

// Start runs a worker in the background until stop, which returns once
// it has drained; RunDraining runs beside with it, and ends beside's
// context only after the worker drained (the index keeps up with the
// last appends).
func TestStartAndBeside(t *testing.T) {
	w, q := idleWorker(t)
	stop := w.Start(context.Background())
	<-q.asked
	require.NoError(t, stop())

	w, q = idleWorker(t)
	ctx, cancel := context.WithCancel(context.Background())
	var besideEnded, ranOut atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- w.RunDraining(ctx, func(bctx context.Context) {
			<-bctx.Done()
			besideEnded.Store(true)
			ranOut.Store(ctx.Err() != nil)
		})
	}()
	<-q.asked
	cancel()
	require.NoError(t, <-done)
	require.True(t, besideEnded.Load(), "RunDraining returns once beside has")
	require.True(t, ranOut.Load())
}
