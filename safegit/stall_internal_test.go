package safegit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stallRepo makes a repository with one commit.
func stallRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return root
}

// fifo replaces p by a FIFO nobody writes to.
func fifo(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.RemoveAll(p))
	require.NoError(t, syscall.Mkfifo(p, 0o644))
}

// A command in the workspace may leave a FIFO where git reads a file; the
// harness's own git calls then fail, saying so, instead of waiting for a
// writer that never comes.
func TestAFIFOInTheGitDirectoryDoesNotHoldGit(t *testing.T) {
	ctx := context.Background()
	for _, at := range []string{".git/HEAD", ".git/commondir"} {
		t.Run(at, func(t *testing.T) {
			root := stallRepo(t)
			fifo(t, filepath.Join(root, filepath.FromSlash(at)))
			done := make(chan error, 1)
			go func() { _, err := Run(ctx, root, "rev-parse", "HEAD"); done <- err }()
			select {
			case err := <-done:
				require.ErrorIs(t, err, ErrStalled)
				require.ErrorContains(t, err, "FIFO")
			case <-time.After(time.Minute):
				t.Fatal("git waits on the FIFO")
			}
		})
	}
	t.Run("a .git file", func(t *testing.T) {
		root := stallRepo(t)
		sub := filepath.Join(root, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		fifo(t, filepath.Join(sub, ".git"))
		_, err := Run(ctx, sub, "status")
		require.ErrorIs(t, err, ErrStalled)
	})
	t.Run("packed-refs, past the call's time", func(t *testing.T) {
		old := callLimit
		callLimit = 2 * time.Second
		t.Cleanup(func() { callLimit = old })
		root := stallRepo(t)
		fifo(t, filepath.Join(root, ".git", "packed-refs"))
		_, err := Run(ctx, root, "rev-parse", "--verify", "-q", "refs/heads/nothing-here")
		require.ErrorIs(t, err, ErrStalled)
		require.ErrorContains(t, err, "did not finish in 2s")
	})
}
