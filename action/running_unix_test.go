//go:build unix

package action

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// An action whose process is alive on this machine — a worker that lost
// its lease while frozen, its command still running — is not recorded as
// interrupted: a retry would run the command a second time beside the
// first. Once that process is gone, it is.
func TestInDoubtWhileItsProcessLives(t *testing.T) {
	ctx := context.Background()
	root, file := t.TempDir(), filepath.Join(t.TempDir(), "ledger")
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	b := &Boundary{Observer: ws, Granted: []Capability{Execute}, Root: root, Ledger: &Ledger{Shared: file}, Thread: "t1"}

	holder := exec.Command("sleep", "600") // the frozen worker
	require.NoError(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	require.NoError(t, withShared(file, func(f *os.File) error {
		return appendLine(f, sharedLine{Op: "b", ID: "w1/1", PID: holder.Process.Pid, Thread: "t1", Action: "1-c"})
	}))
	started := facts.ActionStarted{ActionID: "1-c"}
	_, err = b.Interrupted(ctx, started)
	require.ErrorIs(t, err, ErrStillRunning)
	require.ErrorContains(t, err, "process "+strconv.Itoa(holder.Process.Pid))

	// Another action of the thread is not held back.
	_, err = b.Interrupted(ctx, facts.ActionStarted{ActionID: "2-c"})
	require.NoError(t, err)

	require.NoError(t, holder.Process.Kill())
	_ = holder.Wait()
	rec, err := b.Interrupted(ctx, started)
	require.NoError(t, err)
	require.Equal(t, "1-c", rec.ActionID)
}
