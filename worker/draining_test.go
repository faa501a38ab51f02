package worker_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
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
