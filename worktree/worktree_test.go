package worktree_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/worktree"
)

// repo makes a git repository with a.txt committed, returning its root.
func repo(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	gitIn(t, root, "init", "-q")
	write(t, root, "a.txt", "one\ntwo\nthree\n")
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "base")
	return root
}

func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func write(t testing.TB, root, name, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
}

func read(t testing.TB, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	return string(b)
}

// Two threads' worktrees of one workspace: each begins from the workspace
// as it is (an uncommitted change and an untracked file too, not the
// store), each sees only its own change; the first applies, the second,
// which changed the same line otherwise, conflicts and changes nothing;
// its branch keeps its change.
func TestTwoTreesEditTheSameFile(t *testing.T) {
	ctx := context.Background()
	ws := repo(t)
	write(t, ws, "a.txt", "one\ntwo\nthree\nfour\n") // uncommitted
	write(t, ws, "new.txt", "untracked\n")
	write(t, ws, ".harness/db", "the store\n")
	opts := worktree.Options{Dir: t.TempDir(), Exclude: []string{".harness"}}

	a, err := worktree.Create(ctx, ws, "t1.a", opts)
	require.NoError(t, err)
	b, err := worktree.Create(ctx, ws, "t1.b", opts)
	require.NoError(t, err)
	require.NotEqual(t, a.Path, b.Path)
	require.Equal(t, a.Base, b.Base, "both begin from the same workspace")
	for _, tr := range []worktree.Tree{a, b} {
		require.Equal(t, "one\ntwo\nthree\nfour\n", read(t, tr.Root, "a.txt"), "the uncommitted change is in the tree")
		require.Equal(t, "untracked\n", read(t, tr.Root, "new.txt"))
		require.NoFileExists(t, filepath.Join(tr.Root, ".harness/db"), "the store is not copied")
	}
	again, err := worktree.Create(ctx, ws, "t1.a", opts)
	require.NoError(t, err)
	require.Equal(t, a, again, "made again after a crash, it is the same tree")

	write(t, a.Root, "a.txt", "one\nTWO by a\nthree\nfour\n")
	write(t, b.Root, "a.txt", "one\ntwo by b\nthree\nfour\n")
	require.Equal(t, "one\nTWO by a\nthree\nfour\n", read(t, a.Root, "a.txt"), "a sees only its own change")
	require.Equal(t, "one\ntwo\nthree\nfour\n", read(t, ws, "a.txt"), "the workspace is untouched")

	fa, err := worktree.Finish(ctx, a, "t1.a", false)
	require.NoError(t, err)
	require.Equal(t, []string{"a.txt"}, fa.Changed)
	require.Empty(t, fa.Kept)
	require.NoDirExists(t, a.Path, "a finished tree is removed")
	fb, err := worktree.Finish(ctx, b, "t1.b", true)
	require.NoError(t, err)
	require.Equal(t, b.Path, fb.Kept, "a failed thread's tree is kept")

	diff, err := worktree.Diff(ctx, ws, fa.Branch, fa.Base, "")
	require.NoError(t, err)
	require.Contains(t, diff, "-two\n+TWO by a\n")

	applied, err := worktree.Apply(ctx, ws, fa.Branch, fa.Base, "", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"a.txt"}, applied.Changed)
	require.Equal(t, "one\nTWO by a\nthree\nfour\n", read(t, ws, "a.txt"))

	_, err = worktree.Apply(ctx, ws, fb.Branch, fb.Base, "", nil)
	require.ErrorIs(t, err, worktree.ErrConflict)
	require.ErrorContains(t, err, "a.txt")
	require.Equal(t, "one\nTWO by a\nthree\nfour\n", read(t, ws, "a.txt"), "a conflict changes nothing")
	diff, err = worktree.Diff(ctx, ws, fb.Branch, fb.Base, "")
	require.NoError(t, err)
	require.Contains(t, diff, "+two by b\n", "the conflicting change is kept on its branch")
}

// What a model names is untrusted: a branch this package did not make, a
// base that is not the branch's ancestor, an option-like name.
func TestApplyRefusesOtherBranches(t *testing.T) {
	ctx := context.Background()
	ws := repo(t)
	base := gitIn(t, ws, "rev-parse", "HEAD")[:40]
	gitIn(t, ws, "branch", "feature")
	gitIn(t, ws, "branch", "harness/x")
	for _, tc := range []struct{ branch, base string }{
		{"feature", base},
		{"--output=/tmp/x", base},
		{"harness/../feature", base},
		{"harness/x", "HEAD"},
		{"harness/x", "--all"},
		{"harness/missing", base},
	} {
		_, err := worktree.Apply(ctx, ws, tc.branch, tc.base, "", nil)
		require.ErrorIs(t, err, worktree.ErrBranch, "%+v", tc)
	}
	// The head a person was shown: a full commit id, and the branch's.
	for _, head := range []string{"HEAD", "--output=/tmp/x", "harness/x", base[:12], strings.ToUpper(base)} {
		_, err := worktree.Apply(ctx, ws, "harness/x", base, head, nil)
		require.ErrorIs(t, err, worktree.ErrBranch, head)
		_, err = worktree.Diff(ctx, ws, "harness/x", base, head)
		require.ErrorIs(t, err, worktree.ErrBranch, head)
	}
	gitIn(t, ws, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "later")
	later := gitIn(t, ws, "rev-parse", "HEAD")[:40]
	_, err := worktree.Apply(ctx, ws, "harness/x", base, later, nil)
	require.ErrorIs(t, err, worktree.ErrMoved, "a commit that is not the branch's head")
}

// Worktrees inside the workspace are refused: its threads would see them.
func TestCreateRefusesInside(t *testing.T) {
	ws := repo(t)
	_, err := worktree.Create(context.Background(), ws, "t", worktree.Options{Dir: filepath.Join(ws, "trees")})
	require.ErrorIs(t, err, worktree.ErrInside)
	require.NoDirExists(t, filepath.Join(ws, "trees"), "nothing is made inside")
	_, err = worktree.Create(context.Background(), t.TempDir(), "t", worktree.Options{Dir: t.TempDir()})
	require.ErrorIs(t, err, worktree.ErrNotRepository)
}

// A hostile repository: its fsmonitor, hooks (post-checkout,
// pre-commit…), a required filter on every file and a merge driver run
// nothing when a tree is made, finished and applied.
func TestHostileRepositoryRunsNothing(t *testing.T) {
	ctx := context.Background()
	ws := repo(t)
	marks := t.TempDir()
	prog := func(name string) string {
		p := filepath.Join(marks, name+".sh")
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\ntouch '"+filepath.Join(marks, name)+"'\ncat\n"), 0o755))
		return p
	}
	for _, kv := range [][2]string{
		{"core.fsmonitor", prog("fsmonitor")},
		{"filter.evil.clean", prog("clean")},
		{"filter.evil.smudge", prog("smudge")},
		{"filter.evil.required", "true"},
		{"merge.evil.driver", prog("merge")},
		{"diff.external", prog("extdiff")},
		{"core.pager", prog("pager")},
	} {
		gitIn(t, ws, "config", kv[0], kv[1])
	}
	for _, h := range []string{"post-checkout", "pre-commit", "commit-msg", "post-commit", "post-index-change", "reference-transaction"} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".git/hooks", h), []byte("#!/bin/sh\ntouch '"+filepath.Join(marks, h)+"'\n"), 0o755))
	}
	write(t, ws, ".gitattributes", "* filter=evil merge=evil\n")
	tr, err := worktree.Create(ctx, ws, "hostile", worktree.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	write(t, tr.Root, "a.txt", "changed\n")
	f, err := worktree.Finish(ctx, tr, "hostile", false)
	require.NoError(t, err)
	_, err = worktree.Diff(ctx, ws, f.Branch, f.Base, "")
	require.NoError(t, err)
	_, err = worktree.Apply(ctx, ws, f.Branch, f.Base, "", nil)
	require.NoError(t, err)
	entries, err := os.ReadDir(marks)
	require.NoError(t, err)
	var ran []string
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".sh" {
			ran = append(ran, e.Name())
		}
	}
	require.Empty(t, ran, "a worktree's git ran what the repository named")
}

// A thread that rewrites its worktree's .git file to lead to a repository
// it made (whose config names an fsmonitor) neither runs that program nor
// moves its change there: Finish names the worktree's own git directory.
func TestFinishIgnoresARewrittenGitFile(t *testing.T) {
	ctx := context.Background()
	ws := repo(t)
	tr, err := worktree.Create(ctx, ws, "t", worktree.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	marks := t.TempDir()
	fake := filepath.Join(tr.Path, "fake")
	gitIn(t, tr.Path, "init", "-q", fake)
	gitIn(t, fake, "commit", "-q", "--allow-empty", "-m", "fake")
	prog := filepath.Join(marks, "fsmonitor.sh")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\ntouch '"+filepath.Join(marks, "ran")+"'\n"), 0o755))
	gitIn(t, fake, "config", "core.fsmonitor", prog)
	write(t, tr.Path, ".git", "gitdir: "+filepath.Join(fake, ".git")+"\n")
	write(t, tr.Root, "a.txt", "changed\n")
	f, err := worktree.Finish(ctx, tr, "t", false)
	require.NoError(t, err)
	require.Contains(t, f.Changed, "a.txt", "the change is on the thread's own branch")
	require.NoFileExists(t, filepath.Join(marks, "ran"))
}

// A thread's branch that writes the harness's own files (.harness at any
// depth) or, for a workspace below its repository's top, a file outside
// the workspace, is refused whole: nothing is applied.
func TestApplyRefusesProtectedPaths(t *testing.T) {
	ctx := context.Background()
	top := repo(t)
	ws := filepath.Join(top, "app")
	write(t, top, "app/b.txt", "b\n")
	gitIn(t, top, "add", "-A")
	gitIn(t, top, "commit", "-q", "-m", "app")
	base := gitIn(t, top, "rev-parse", "HEAD")[:40]
	for name, files := range map[string][]string{
		"store":   {"app/b.txt", "app/.harness/project.json"},
		"nested":  {"app/sub/.harness/x"},
		"outside": {"a.txt"},
	} {
		branch := "harness/" + name
		gitIn(t, top, "checkout", "-q", "-b", branch, base)
		for _, f := range files {
			write(t, top, f, "changed by "+name+"\n")
		}
		gitIn(t, top, "add", "-A")
		gitIn(t, top, "commit", "-q", "-m", name)
		gitIn(t, top, "checkout", "-q", base)
		_, err := worktree.Apply(ctx, ws, branch, base, "", nil)
		require.ErrorIs(t, err, worktree.ErrProtected, name)
		require.Equal(t, "b\n", read(t, top, "app/b.txt"), name)
		require.Equal(t, "one\ntwo\nthree\n", read(t, top, "a.txt"), name)
		require.NoFileExists(t, filepath.Join(ws, ".harness/project.json"))
	}
}

// A worktree is made with an empty config.worktree in its git directory,
// the file the sandbox keeps read-only there: made with the worktree, it
// is not made (and recorded) by the first command that runs after it. An
// empty one says nothing to git, and git works in the worktree as ever.
func TestCreateMakesAnEmptyWorktreeConfig(t *testing.T) {
	ws := repo(t)
	tr, err := worktree.Create(context.Background(), ws, "child", worktree.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tr.GitDir, filepath.Join(ws, ".git", "worktrees")), tr.GitDir)
	fi, err := os.Stat(filepath.Join(tr.GitDir, "config.worktree"))
	require.NoError(t, err)
	require.Zero(t, fi.Size())
	gitIn(t, tr.Path, "config", "extensions.worktreeConfig", "true")
	require.Empty(t, strings.TrimSpace(gitIn(t, tr.Path, "config", "--worktree", "--list")))
	require.Contains(t, gitIn(t, tr.Path, "status", "--porcelain", "--branch"), tr.Branch)
}
