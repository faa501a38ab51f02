package stock_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/stock"
)

// A command may leave the workspace's .git leading into a writable root
// (a commondir naming a git directory in the workspace's Go build cache):
// no command runs in it any more, and a session that drives threads says
// why. A session that only reads the record (log, show, effects, replay,
// undo's plan) is not stopped by it: the person must be able to see what
// the command did, and undo it.
func TestReadingAWorkspaceTheSandboxRefuses(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	git(ws, "init", "-q")
	cache, err := sandbox.WorkspaceGoCache(ws)
	require.NoError(t, err)
	planted := filepath.Join(cache, "g")
	require.NoError(t, os.MkdirAll(cache, 0o755))
	git(cache, "init", "-q", "--bare", planted)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git", "commondir"), []byte(planted+"\n"), 0o644))

	place, err := stock.Locate(ws, "")
	require.NoError(t, err)
	_, err = stock.NewSession(place, stock.SessionOptions{Getenv: sessionEnv(t, ""), Drive: true})
	require.ErrorIs(t, err, sandbox.ErrInvalidSpec, "no command runs in it")

	for _, o := range []stock.SessionOptions{{Lenient: true, ReadOnly: true}, {Lenient: true}} {
		o.Getenv = sessionEnv(t, "")
		s, err := stock.NewSession(place, o)
		require.NoError(t, err, "a session that drives nothing is not stopped")
		require.ErrorIs(t, s.Stock.Tools.SandboxErr(), sandbox.ErrInvalidSpec)
		tool, ok := s.Stock.Tools.Lookup("run_command")
		require.True(t, ok)
		rep, err := tool.Execute(context.Background(), action.Request{Adapter: "run_command", Payload: json.RawMessage(`{"command": "true"}`)})
		require.NoError(t, err)
		require.Equal(t, facts.StatusFailed, rep.Status)
		require.Contains(t, rep.Error, "no command runs")
		require.NoError(t, s.Close())
	}
}
