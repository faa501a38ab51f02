package stock_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tools"
)

// ownRuntime is a runtime whose threads each work in a worktree of their
// own (as a worker's do), made in dir, on the scripted model script.
func ownRuntime(t *testing.T, root, dir, script string) (*harness.Runtime, *stock.Stock) {
	t.Helper()
	return ownRuntimeWith(t, root, dir, script, func(*harness.Config) {})
}

// ownRuntimeWith is ownRuntime with its configuration changed by set.
func ownRuntimeWith(t *testing.T, root, dir, script string, set func(*harness.Config)) (*harness.Runtime, *stock.Stock) {
	t.Helper()
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	m, err := model.ParseScript("stock", []byte(script))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:stock"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	cfg.OwnWorktree = true
	set(&cfg)
	st, err := stock.NewStock(p, cfg, stock.WithWorktreeDir(dir))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	svc, err := st.Services(m, stock.BlobsOf(store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(t, err)
	return rt, st
}

// A thread that fails in its own worktree keeps it, named on its
// worktree.finished, with what it wrote committed to its branch; the
// workspace is untouched.
func TestOwnWorktreeKeptOnFailure(t *testing.T) {
	root, _ := gitRepo(t)
	rt, st := ownRuntime(t, root, t.TempDir(), `{"text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"ttl = 300\\n\"}"}]}`)
	th := rt.Thread(st.Actor, "t1")
	_, err := th.Submit(ctx, "Set the TTL")
	require.NoError(t, err)
	out, err := th.Resume(ctx) // parks on the write
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	_, err = th.Post(ctx, mustDraft(t, facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: out.Waits[0].RequestID, Approved: true, By: "tester"}), "a1")
	require.NoError(t, err)
	out, err = th.Resume(ctx) // the script runs out: the turn fails
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status)

	log := readLog(t, rt.Store, "t1")
	sys := decode[facts.SystemConfigured](t, log[1])
	require.NotNil(t, sys.Worktree)
	last := log[len(log)-1]
	require.Equal(t, facts.KindWorktreeFinished, last.Kind)
	res := decode[facts.WorktreeResult](t, last)
	require.Equal(t, sys.Worktree.Path, res.Kept, "a failed thread's worktree is kept, and named")
	require.DirExists(t, res.Kept)
	require.Equal(t, []string{"a.txt"}, res.Changed)
	require.Equal(t, "ttl = 300\n", read(t, sys.Worktree.Root, "a.txt"))
	require.Equal(t, "ttl = 60\n", read(t, root, "a.txt"))

	// Resumed again, the turn is tried once more and fails again: that
	// end finishes the worktree again (kept, the same branch), once.
	_, err = th.Resume(ctx)
	require.NoError(t, err)
	again := readLog(t, rt.Store, "t1")
	var finished int
	for _, f := range again {
		if f.Kind == facts.KindWorktreeFinished {
			finished++
		}
	}
	require.Equal(t, 2, finished)
	require.Equal(t, res, decode[facts.WorktreeResult](t, again[len(again)-1]))
	require.NoError(t, audit.VerifyLog(ctx, rt.Store, st.Actor, "t1"))
}

// A worktree that cannot be made (here: its directory is inside the
// workspace) is recorded with why, and the thread works in the
// workspace, as its record says.
func TestOwnWorktreeThatCannotBeMade(t *testing.T) {
	root, _ := gitRepo(t)
	rt, st := ownRuntime(t, root, filepath.Join(root, "trees"), `{"text": "Done."}`)
	th := rt.Thread(st.Actor, "t1")
	_, err := th.Start(ctx, "Nothing")
	require.NoError(t, err)
	log := readLog(t, rt.Store, "t1")
	sys := decode[facts.SystemConfigured](t, log[1])
	require.Nil(t, sys.Worktree)
	require.Contains(t, sys.WorktreeError, "worktrees inside the workspace")
	require.NotEqual(t, facts.KindWorktreeFinished, log[len(log)-1].Kind)
	require.NoError(t, audit.VerifyLog(ctx, rt.Store, st.Actor, "t1"))
}

func mustDraft(t *testing.T, k facts.Kind, p any) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(k, "", p)
	require.NoError(t, err)
	return d
}

// A child in a worktree asks to write: the preview a person is shown is
// the diff against the child's copy (the file it will change), not the
// workspace's, which has changed since the worktree was made.
func TestChildPreviewDiffsItsWorktree(t *testing.T) {
	root, _ := gitRepo(t)
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	m, err := model.ParseScript("stock", []byte(`{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL to 300\",\"tools\":[\"write_file\"]}"}]}
{"thread": "p.1-d1", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"ttl = 300\\n\"}"}]}`))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:stock"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	cfg.Worktrees = facts.WorktreesAlways
	st, err := stock.NewStock(p, cfg, stock.WithWorktreeDir(t.TempDir()))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	svc, err := st.Services(m, stock.BlobsOf(store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(t, err)
	th := rt.Thread(st.Actor, "p")
	out, err := th.Start(ctx, "Set the TTL")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("ttl = 70\n"), 0o644))

	s, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	s.Preview(root, tools.Preview)
	require.Len(t, s.Waits, 1)
	require.Equal(t, "p.1-d1", s.Waits[0].Thread)
	require.Contains(t, s.Waits[0].Preview, "-ttl = 60")
	require.NotContains(t, s.Waits[0].Preview, "ttl = 70")
	require.Equal(t, s.Children[0].Worktree.Root, s.PreviewRoot(s.Waits[0], root))
}

// The ledger file the processes of a workspace share is outside it, where
// no sandboxed command writes; a cache directory inside the workspace
// gives none (the ledger is then the process's own).
func TestLedgerFileOutsideTheWorkspace(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	f := stock.LedgerFile(root)
	require.True(t, strings.HasPrefix(f, filepath.Join(cache, "harness", "ledgers")+string(filepath.Separator)), f)
	require.NotEqual(t, f, stock.LedgerFile(t.TempDir()), "one per workspace")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	require.Empty(t, stock.LedgerFile(root))
}

// A fork of a thread that worked in its own worktree copies its
// configuration, worktree and all: it does not run there (nor in the
// workspace) — ids a branch name cannot hold as they are (whose branch
// names are changed, with a digest) too, while the thread the worktree
// was made for runs in it.
func TestForkOfAWorktreeThreadDoesNotRunInIt(t *testing.T) {
	for _, ids := range [][2]string{{"t1", "t2"}, {"t1-", "t2-"}} {
		root, _ := gitRepo(t)
		rt, st := ownRuntime(t, root, t.TempDir(), `{"text": "Done."}`)
		_, err := rt.Thread(st.Actor, ids[0]).Start(ctx, "Nothing")
		require.NoError(t, err)
		_, err = rewind.Fork(ctx, rt.Store, ids[0], 2, ids[1])
		require.NoError(t, err)
		_, err = rt.Thread(st.Actor, ids[1]).Resume(ctx)
		require.ErrorIs(t, err, harness.ErrNotItsWorktree, ids[1])
	}
}
