package serve_test

import (
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// TestPageAnswersAThreadsOfferedMerge: a thread that works in a worktree
// of its own (as a worker's) and ends done with a change offers its
// merge; the page shows it — what offered it, the branch's diff — and
// the API's answer approves it like any write: the change comes into
// the workspace, and the thread is done.
func TestPageAnswersAThreadsOfferedMerge(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	script := `{"text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Done."}`
	scriptFile := filepath.Join(t.TempDir(), "script.jsonl")
	require.NoError(t, os.WriteFile(scriptFile, []byte(script), 0o644))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgSign=false"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.HoldStore(context.Background(), 0, true)
	require.NoError(t, err)
	f := &fixture{t: t, root: root, script: "scripted:" + scriptFile, place: p, store: store}
	cfg, err := harness.NewConfig(harness.WithModelName(f.script), harness.WithModelBackoff(0))
	require.NoError(t, err)
	cfg.OwnWorktree = true
	f.stock, err = stock.NewStock(p, cfg, stock.WithWorktreeDir(t.TempDir()))
	require.NoError(t, err)
	f.serve()
	t.Cleanup(func() {
		f.close()
		require.NoError(t, store.Close())
	})

	f.start("t1") // parks on the write
	d := f.detail("t1")
	resp, b := f.do("POST", "/api/threads/t1/answer", approveBody(d, true, true))
	require.Equal(t, 201, resp.StatusCode, string(b))
	d = f.waitFor("t1", "the merge offered", func(d serve.ThreadDetail) bool {
		return len(d.Waits) == 1 && strings.HasPrefix(d.Waits[0].RequestID, "merge-") && !d.Resuming
	})
	require.NotNil(t, d.Waits[0].Offer)
	require.Equal(t, "harness/t1", d.Waits[0].Offer.Branch)
	require.Contains(t, d.Waits[0].Preview, "+ttl_seconds = 300")
	require.Equal(t, "ttl_seconds = 60\n", read(t, root, "cache.toml"), "nothing merged before the answer")

	_, get := f.browser(t)
	get("/?token=" + token)
	page := html.UnescapeString(get("/t/t1"))
	require.Contains(t, page, "offered by the thread's end: its work in its own worktree, on branch <code>harness/t1</code>, changing <code>cache.toml</code>")
	require.Contains(t, page, "+ttl_seconds = 300")

	resp, b = f.do("POST", "/api/threads/t1/answer", approveBody(d, true, true))
	require.Equal(t, 201, resp.StatusCode, string(b))
	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
	require.Equal(t, "ttl_seconds = 300\n", read(t, root, "cache.toml"))
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	return string(b)
}
