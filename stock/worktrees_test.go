package stock_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/tools"
	"github.com/seed-7cc7a084/harness/worktree"
)

// gitRepo makes a workspace that is a git repository with a.txt
// committed, and returns it with its HEAD.
func gitRepo(t *testing.T) (root, head string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root = t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgSign=false"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("ttl = 60\n"), 0o644))
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	return root, git("rev-parse", "HEAD")
}

// Two children delegated in one turn each work in a worktree of their
// own: both write a.txt differently, each observes only its own change,
// the workspace is untouched until the parent merges; each merge is a
// write parked for a person, its preview the branch's diff; the first
// applies, the second conflicts — reported, the workspace keeping the
// first, the second's branch keeping its change — and the log verifies.
func TestParallelChildrenInWorktrees(t *testing.T) {
	root, head := gitRepo(t)
	b1, b2 := worktree.Branch("p.1-d1"), worktree.Branch("p.1-d2")
	merge := func(id, branch string) string {
		return fmt.Sprintf(`{"id": %q, "name": "merge_worktree", "args": %q}`, id, fmt.Sprintf(`{"branch":%q,"base":%q,"head":"@head:%s@"}`, branch, head, branch))
	}
	script := `{"text": "Two at once.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL to 300\",\"tools\":[\"write_file\"]}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"Set the TTL to 600\",\"tools\":[\"write_file\"]}"}]}
{"text": "Merging both.", "tool_calls": [` + merge("m1", b1) + `, ` + merge("m2", b2) + `]}
{"text": "One merged; the other conflicts."}
{"thread": "p.1-d1", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"ttl = 300\\n\"}"}]}
{"thread": "p.1-d1", "text": "Done: 300."}
{"thread": "p.1-d2", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"ttl = 600\\n\"}"}]}
{"thread": "p.1-d2", "text": "Done: 600."}`

	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	sm, err := model.ParseScript("stock", []byte(script))
	require.NoError(t, err)
	m := headsOf{sm, root}
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:stock"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	st, err := stock.NewStock(p, cfg, stock.WithWorktreeDir(t.TempDir()))
	require.NoError(t, err)
	svc, err := st.Services(m, stock.BlobsOf(store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(t, err)
	th := rt.Thread(st.Actor, "p")
	_, err = th.Start(ctx, "Set the TTL")
	require.NoError(t, err)

	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	var previews []string
	for range 20 {
		s, err := drive.Inspect(ctx, th)
		require.NoError(t, err)
		if s.Status != harness.StatusParked {
			break
		}
		s.Preview(root, tools.Preview)
		for _, w := range s.Waits {
			if w.Kind == fold.WaitConfirmation && w.Tool == tools.MergeWorktree {
				previews = append(previews, w.Preview)
			}
			if w.Kind == fold.WaitConfirmation && w.Tool == "write_file" {
				require.Equal(t, "ttl = 60\n", read(t, root, "a.txt"), "a child's write never reaches the workspace")
			}
		}
		_, posted, err := drive.ApplyApproval(ctx, th, all, s.Waits)
		require.NoError(t, err)
		require.NotZero(t, posted)
		_, err = th.Resume(ctx)
		require.NoError(t, err)
	}
	v, err := th.View(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, v.Status)

	// Each child observed only its own change, in its own worktree.
	for _, c := range []struct{ id, ttl string }{{"p.1-d1", "300"}, {"p.1-d2", "600"}} {
		log := readLog(t, store, c.id)
		spawn := decode[facts.ThreadSpawned](t, log[0])
		require.NotNil(t, spawn.Worktree, "the child's spawn records its worktree")
		require.NotEqual(t, root, spawn.Worktree.Root)
		var done []facts.ActionCompleted
		for _, f := range log {
			if f.Kind == facts.KindActionCompleted {
				done = append(done, decode[facts.ActionCompleted](t, f))
			}
		}
		require.Len(t, done, 1)
		obs := done[0].Observation
		require.NotNil(t, obs)
		var paths []string
		for _, ch := range obs.Changed {
			paths = append(paths, ch.Path)
		}
		require.Equal(t, []string{"a.txt"}, paths, "child %s observes its own change and nothing else", c.id)
		require.Nil(t, obs.Others, "nobody else works in its worktree")
		end := decode[facts.ThreadEnded](t, log[len(log)-1])
		require.NotNil(t, end.Worktree)
		require.Equal(t, []string{"a.txt"}, end.Worktree.Changed)
		require.Empty(t, end.Worktree.Kept, "a finished child's worktree is removed")
		require.NoDirExists(t, spawn.Worktree.Path)
	}

	// Both merges were parked writes whose previews are the diffs.
	require.Len(t, previews, 2)
	require.Contains(t, previews[0]+previews[1], "+ttl = 300")
	require.Contains(t, previews[0]+previews[1], "+ttl = 600")
	// The first applied; the second conflicted, was reported, changed
	// nothing, and its branch keeps its change.
	require.Equal(t, "ttl = 300\n", read(t, root, "a.txt"))
	var reports []facts.Report
	for _, f := range readLog(t, store, "p") {
		if f.Kind == facts.KindActionCompleted {
			reports = append(reports, decode[facts.ActionCompleted](t, f).Report)
		}
	}
	require.Len(t, reports, 2)
	require.Equal(t, facts.StatusSucceeded, reports[0].Status)
	require.Equal(t, facts.StatusFailed, reports[1].Status)
	require.Contains(t, reports[1].Error, "conflicts")
	require.Contains(t, reports[1].Error, "a.txt")
	diff, err := worktree.Diff(ctx, root, b2, head, "")
	require.NoError(t, err)
	require.Contains(t, diff, "+ttl = 600")
	require.NoError(t, audit.VerifyLog(ctx, store, st.Actor, "p"))

	// A finished child, whose worktree is gone, still opens and reads
	// (its tree, a replay), through a runtime that only reads too.
	for _, id := range []string{"p.1-d1", "p.1-d2"} {
		kid, err := th.Open(ctx, id)
		require.NoError(t, err)
		kv, err := kid.View(ctx)
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, kv.Status)
	}
	tree, err := th.Tree(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, tree.Status)
}

// headsOf is a scripted model whose calls name a branch's head as
// "@head:BRANCH@", filled in when the turn is taken from the branch as it
// is then: what a model copies from a child's report.
type headsOf struct {
	model.Model
	root string
}

func (h headsOf) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	d, err := h.Model.Turn(ctx, req)
	for i, c := range d.ToolCalls {
		for {
			at := strings.Index(c.Args, "@head:")
			if at < 0 {
				break
			}
			end := strings.Index(c.Args[at+1:], "@") + at + 1
			out, gerr := exec.Command("git", "-C", h.root, "rev-parse", "refs/heads/"+c.Args[at+6:end]).Output()
			if gerr != nil {
				return d, gerr
			}
			c.Args = c.Args[:at] + strings.TrimSpace(string(out)) + c.Args[end+1:]
		}
		d.ToolCalls[i] = c
	}
	return d, err
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	return string(b)
}

func readLog(t *testing.T, store thread.Store, id string) []facts.Fact {
	t.Helper()
	var out []facts.Fact
	for f, err := range store.Read(ctx, id, 1) {
		require.NoError(t, err)
		out = append(out, f)
	}
	return out
}

func decode[T any](t *testing.T, f facts.Fact) T {
	t.Helper()
	p, err := facts.Decode[T](f)
	require.NoError(t, err)
	return p
}

// A merge applies exactly the change a person was shown: the head is in
// the arguments approved, and a branch moved between the approval and
// the merge (a sibling, a command with git) is refused, nothing applied.
func TestMergeAppliesTheHeadThatWasShown(t *testing.T) {
	root, head := gitRepo(t)
	branch := worktree.Branch("p.1-d1")
	script := `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL to 300\",\"tools\":[\"write_file\"]}"}]}
{"text": "Merging.", "tool_calls": [{"id": "m1", "name": "merge_worktree", "args": "{\"branch\":\"` + branch + `\",\"base\":\"` + head + `\",\"head\":\"@head:` + branch + `@\"}"}]}
{"text": "The merge was refused."}
{"thread": "p.1-d1", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"a.txt\",\"content\":\"ttl = 300\\n\"}"}]}
{"thread": "p.1-d1", "text": "Done: 300."}`
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	sm, err := model.ParseScript("stock", []byte(script))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:stock"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	cfg.Worktrees = facts.WorktreesAlways
	st, err := stock.NewStock(p, cfg, stock.WithWorktreeDir(t.TempDir()))
	require.NoError(t, err)
	svc, err := st.Services(headsOf{sm, root}, stock.BlobsOf(store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(t, err)
	th := rt.Thread(st.Actor, "p")
	_, err = th.Start(ctx, "Set the TTL")
	require.NoError(t, err)

	git := func(env []string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	var shown, moved string
	for range 20 {
		s, err := drive.Inspect(ctx, th)
		require.NoError(t, err)
		if s.Status != harness.StatusParked {
			break
		}
		s.Preview(root, tools.Preview)
		_, _, err = drive.ApplyApproval(ctx, th, all, s.Waits)
		require.NoError(t, err)
		for _, w := range s.Waits {
			if w.Kind == fold.WaitConfirmation && w.Tool == tools.MergeWorktree {
				shown = w.Preview
				// Approved as shown; now the branch moves before the
				// merge runs: a commit that sets the TTL to 999.
				index := filepath.Join(t.TempDir(), "index")
				env := []string{"GIT_INDEX_FILE=" + index, "GIT_AUTHOR_NAME=x", "GIT_AUTHOR_EMAIL=x@x.invalid", "GIT_COMMITTER_NAME=x", "GIT_COMMITTER_EMAIL=x@x.invalid"}
				tip := git(nil, "rev-parse", "refs/heads/"+branch)
				git(env, "read-tree", tip)
				cmd := exec.Command("git", "hash-object", "-w", "--stdin")
				cmd.Dir, cmd.Stdin = root, strings.NewReader("ttl = 999\n")
				out, err := cmd.Output()
				require.NoError(t, err)
				git(env, "update-index", "--cacheinfo", "100644,"+strings.TrimSpace(string(out))+",a.txt")
				tree := git(env, "write-tree")
				moved = git(env, "commit-tree", tree, "-p", tip, "-m", "moved")
				git(nil, "update-ref", "refs/heads/"+branch, moved)
			}
		}
		_, err = th.Resume(ctx)
		require.NoError(t, err)
	}
	require.NotEmpty(t, moved, "the merge was put to a person")
	require.Contains(t, shown, "+ttl = 300")
	require.Equal(t, "ttl = 60\n", read(t, root, "a.txt"), "nothing applied: neither what was shown nor what the branch moved to")
	var reports []facts.Report
	for _, f := range readLog(t, store, "p") {
		if f.Kind == facts.KindActionCompleted {
			reports = append(reports, decode[facts.ActionCompleted](t, f).Report)
		}
	}
	require.Len(t, reports, 1)
	require.Equal(t, facts.StatusFailed, reports[0].Status)
	require.Contains(t, reports[0].Error, "not at the head that was shown")
	require.Contains(t, reports[0].Error, moved[:12])
	// Shown again now, the call says the branch moved.
	args := fmt.Sprintf(`{"branch":%q,"base":%q,"head":%q}`, branch, head, git(nil, "rev-parse", "refs/heads/"+branch+"~1"))
	require.Contains(t, tools.Preview(root, tools.MergeWorktree, args), "moved")
	require.NoError(t, audit.VerifyLog(ctx, store, st.Actor, "p"))
}
