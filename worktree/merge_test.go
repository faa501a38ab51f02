package worktree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/worktree"
)

// moved makes a workspace with lines.txt (six lines) and other.txt
// committed, and a thread's finished branch that changes line 2 of
// lines.txt, adds new.txt and removes other.txt; the workspace is then as
// it was when the tree was made.
func moved(t *testing.T) (ws string, f worktree.Finished) {
	t.Helper()
	ctx := context.Background()
	ws = repo(t)
	write(t, ws, "lines.txt", "1\n2\n3\n4\n5\n6\n")
	write(t, ws, "other.txt", "other\n")
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-q", "-m", "lines")
	tr, err := worktree.Create(ctx, ws, "t9", worktree.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	write(t, tr.Root, "lines.txt", "1\ntwo by the thread\n3\n4\n5\n6\n")
	write(t, tr.Root, "new.txt", "new\n")
	require.NoError(t, os.Remove(filepath.Join(tr.Root, "other.txt")))
	f, err = worktree.Finish(ctx, tr, "t9", false)
	require.NoError(t, err)
	require.Equal(t, []string{"lines.txt", "new.txt", "other.txt"}, f.Changed)
	return ws, f
}

// The workspace moved since the branch began (a person's edit, another
// thread's merge) in lines the branch did not change — two lines from
// the branch's, inside what a patch's context would want unchanged, and
// an uncommitted file elsewhere: the merge is three-way, and keeps both.
func TestApplyMergesAMovedWorkspace(t *testing.T) {
	ctx := context.Background()
	ws, f := moved(t)
	write(t, ws, "lines.txt", "1\n2\n3\nfour by a person\n5\n6\n")
	write(t, ws, "mine.txt", "a person's own\n")

	applied, err := worktree.Apply(ctx, ws, f.Branch, f.Base, f.Head, nil)
	require.NoError(t, err)
	require.Equal(t, f.Changed, applied.Changed)
	require.Equal(t, "1\ntwo by the thread\n3\nfour by a person\n5\n6\n", read(t, ws, "lines.txt"), "both changes")
	require.Equal(t, "new\n", read(t, ws, "new.txt"))
	require.NoFileExists(t, filepath.Join(ws, "other.txt"))
	require.Equal(t, "a person's own\n", read(t, ws, "mine.txt"), "a file the branch does not change is the workspace's")
	require.Equal(t, "one\ntwo\nthree\n", read(t, ws, "a.txt"))

	// Applied again: the workspace has the change already.
	_, err = worktree.Apply(ctx, ws, f.Branch, f.Base, f.Head, nil)
	require.NoError(t, err)
	require.Equal(t, "1\ntwo by the thread\n3\nfour by a person\n5\n6\n", read(t, ws, "lines.txt"))
}

// Where the workspace changed what the branch changed — the same line,
// a file the branch changes removed — the merge fails naming those
// files, and applies nothing: not even the branch's files that would
// merge. The branch keeps its change.
func TestApplyConflictAppliesNothing(t *testing.T) {
	ctx := context.Background()
	for name, edit := range map[string]func(t *testing.T, ws string) []string{
		"same line": func(t *testing.T, ws string) []string {
			write(t, ws, "lines.txt", "1\ntwo by a person\n3\n4\n5\n6\n")
			return []string{"lines.txt"}
		},
		"removed here, changed there": func(t *testing.T, ws string) []string {
			require.NoError(t, os.Remove(filepath.Join(ws, "lines.txt")))
			return []string{"lines.txt"}
		},
		"changed here, removed there": func(t *testing.T, ws string) []string {
			write(t, ws, "other.txt", "other, changed by a person\n")
			return []string{"other.txt"}
		},
		"added both sides": func(t *testing.T, ws string) []string {
			write(t, ws, "new.txt", "a person's new\n")
			return []string{"new.txt"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			ws, f := moved(t)
			want := edit(t, ws)
			before := snapshotFiles(t, ws, "lines.txt", "new.txt", "other.txt")

			_, err := worktree.Apply(ctx, ws, f.Branch, f.Base, f.Head, nil)
			require.ErrorIs(t, err, worktree.ErrConflict)
			var ce *worktree.ConflictError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, want, ce.Paths)
			require.Equal(t, f.Branch, ce.Branch)
			require.Equal(t, before, snapshotFiles(t, ws, "lines.txt", "new.txt", "other.txt"), "nothing applied")
			require.Equal(t, "1\ntwo by the thread\n3\n4\n5\n6\n", gitIn(t, ws, "show", f.Head+":lines.txt"), "the branch keeps its change")
		})
	}
}

// snapshotFiles is each name's content, "(none)" for a missing file.
func snapshotFiles(t *testing.T, root string, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(root, n))
		if errors.Is(err, os.ErrNotExist) {
			out[n] = "(none)"
			continue
		}
		require.NoError(t, err)
		out[n] = string(b)
	}
	return out
}

// The workspace is the model's: a directory the branch writes in, made a
// symlink to a directory outside that holds the same file as base, is
// not followed — neither read as the workspace's file nor written: the file conflicts.
func TestApplyFollowsNoSymlinkOut(t *testing.T) {
	ctx := context.Background()
	ws := repo(t)
	write(t, ws, "d/x.txt", "1\n2\n3\n4\n5\n")
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-q", "-m", "d")
	tr, err := worktree.Create(ctx, ws, "t8", worktree.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	write(t, tr.Root, "d/x.txt", "1\n2 by the thread\n3\n4\n5\n")
	f, err := worktree.Finish(ctx, tr, "t8", false)
	require.NoError(t, err)

	outside := t.TempDir()
	write(t, outside, "x.txt", "1\n2\n3\n4\nfive outside\n")
	require.NoError(t, os.RemoveAll(filepath.Join(ws, "d")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "d")))

	_, err = worktree.Apply(ctx, ws, f.Branch, f.Base, f.Head, nil)
	var ce *worktree.ConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, []string{"d/x.txt"}, ce.Paths)
	require.Equal(t, "1\n2\n3\n4\nfive outside\n", read(t, outside, "x.txt"), "nothing written outside")
}

// A worktree of a thread's worktree (its children's) is made in the
// repository the thread's worktree belongs to, even when the thread
// rewrote its .git file to lead to a repository it made: Relink puts it
// back first.
func TestRelinkBeforeANestedWorktree(t *testing.T) {
	ctx := context.Background()
	ws := repo(t)
	opts := worktree.Options{Dir: t.TempDir()}
	tr, err := worktree.Create(ctx, ws, "p", opts)
	require.NoError(t, err)
	fake := filepath.Join(tr.Path, "fake")
	gitIn(t, tr.Path, "init", "-q", fake)
	gitIn(t, fake, "commit", "-q", "--allow-empty", "-m", "fake")
	write(t, tr.Path, ".git", "gitdir: "+filepath.Join(fake, ".git")+"\n")
	write(t, tr.Root, "p.txt", "the parent's\n")

	require.NoError(t, worktree.Relink(tr))
	kid, err := worktree.Create(ctx, tr.Root, "p.1-d1", opts)
	require.NoError(t, err)
	require.Equal(t, "the parent's\n", read(t, kid.Root, "p.txt"), "the child begins from the parent's work")
	require.Contains(t, gitIn(t, ws, "branch", "--list", kid.Branch), kid.Branch, "the child's branch is the repository's")
	require.NotContains(t, gitIn(t, fake, "branch", "--list"), kid.Branch)
}

// BenchmarkApplyMoved: Apply of a branch whose workspace moved since its
// base (the three-way merge: the workspace's files taken, merge-tree, the
// merged patch applied) against the raw baseline, `git apply` of the
// branch's own patch to a workspace that did not move, in the same run;
// reports the ratio.
func BenchmarkApplyMoved(b *testing.B) {
	ctx := context.Background()
	ws := repo(b)
	var lines strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	original := lines.String()
	write(b, ws, "big.txt", original)
	gitIn(b, ws, "add", "-A")
	gitIn(b, ws, "commit", "-q", "-m", "big")
	tr, err := worktree.Create(ctx, ws, "t", worktree.Options{Dir: b.TempDir()})
	require.NoError(b, err)
	write(b, tr.Root, "big.txt", strings.Replace(original, "line 2\n", "line two\n", 1))
	f, err := worktree.Finish(ctx, tr, "t", false)
	require.NoError(b, err)
	patch := filepath.Join(b.TempDir(), "p.diff")
	require.NoError(b, os.WriteFile(patch, []byte(gitIn(b, ws, "diff", "--binary", f.Base, f.Head, "--")), 0o600))
	moved := strings.Replace(original, "line 500\n", "line five hundred\n", 1)
	var raw, ours time.Duration
	b.ResetTimer()
	for range b.N {
		write(b, ws, "big.txt", original)
		start := time.Now()
		gitIn(b, ws, "apply", patch)
		raw += time.Since(start)

		write(b, ws, "big.txt", moved)
		start = time.Now()
		_, err := worktree.Apply(ctx, ws, f.Branch, f.Base, f.Head, nil)
		ours += time.Since(start)
		require.NoError(b, err)
	}
	b.StopTimer()
	require.Equal(b, strings.Replace(moved, "line 2\n", "line two\n", 1), read(b, ws, "big.txt"))
	b.ReportMetric(float64(raw.Microseconds())/float64(b.N)/1000, "raw-ms/op")
	b.ReportMetric(float64(ours.Microseconds())/float64(b.N)/1000, "apply-ms/op")
	b.ReportMetric(float64(ours)/float64(raw), "ratio")
}
