package harnesstest

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SIGTERMTook is the raw baseline a stop is measured against: the time a
// bare SIGTERM takes to end a sleeping process, from the signal to its
// reaped exit.
func SIGTERMTook(tb testing.TB) time.Duration {
	tb.Helper()
	cmd := exec.Command("sleep", "3600")
	require.NoError(tb, cmd.Start())
	begin := time.Now()
	require.NoError(tb, cmd.Process.Signal(syscall.SIGTERM))
	_ = cmd.Wait()
	return time.Since(begin)
}
