package action_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// gitDirs makes a workspace with the git directories a commondir is
// taken away from: its .git, a nested repository's (sub/.git) and a
// submodule's (.git/modules/lib), each with a HEAD and a config, and a
// directory another commondir could name (evil/).
func gitDirs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{".git", "sub/.git", ".git/modules/lib"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d, "objects"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, d, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, d, "config"), []byte("[core]\n"), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "evil"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "evil", "config"), []byte("[core]\n\tfsmonitor = touch PWNED\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644))
	return root
}

// A commondir that appears in a git directory while an action runs —
// a file, a link, a directory, in the workspace's .git, a nested
// repository's or a submodule's — is taken away before the runtime
// observes after, and the completion says so: the action made it (its
// effect is observed, not none), the runtime removed it (Removed, with
// what it named), and the reading after is the workspace without it.
func TestACommondirPlantedInAGitDirectoryIsRemoved(t *testing.T) {
	for _, tc := range []struct {
		name, path, kind, names string
		plant                   func(t *testing.T, p string)
	}{
		{"a file in .git", ".git/commondir", "a regular file", "../evil", func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte("../evil\n"), 0o644))
		}},
		{"a link in .git", ".git/commondir", "a symlink", "../evil/config", func(t *testing.T, p string) {
			require.NoError(t, os.Symlink("../evil/config", p))
		}},
		{"an empty directory in .git", ".git/commondir", "a directory", "", func(t *testing.T, p string) {
			require.NoError(t, os.Mkdir(p, 0o755))
		}},
		{"a directory with files in .git", ".git/commondir", "a directory", "", func(t *testing.T, p string) {
			require.NoError(t, os.MkdirAll(filepath.Join(p, "x"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, "x", "y"), []byte("y"), 0o644))
		}},
		{"a file in a nested repository's .git", "sub/.git/commondir", "a regular file", "../../evil", func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte("../../evil\n"), 0o644))
		}},
		{"a file in a submodule's git directory", ".git/modules/lib/commondir", "a regular file", "../../../evil", func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte("../../../evil\n"), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := gitDirs(t)
			b := observed(t, root)
			req := action.Request{ActionID: "a1", Capability: action.Execute, Adapter: "worker"}
			bg, refused := b.Begin(context.Background(), req)
			require.Nil(t, refused)
			w := &worker{name: "worker", root: root, do: func(root string) (facts.Report, error) {
				tc.plant(t, filepath.Join(root, filepath.FromSlash(tc.path)))
				return facts.Report{Status: facts.StatusSucceeded}, nil
			}}
			c := b.Finish(context.Background(), req, bg, w).Completed
			require.NotNil(t, c)
			_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(tc.path)))
			require.ErrorIs(t, err, os.ErrNotExist, "the commondir is still there")
			require.Len(t, c.Observation.Removed, 1)
			rm := c.Observation.Removed[0]
			require.Equal(t, tc.path, rm.Path)
			require.Equal(t, tc.kind, rm.Kind)
			require.Equal(t, tc.names, rm.Names)
			require.Empty(t, rm.Error)
			require.Contains(t, rm.Why, "had none when the action started")
			require.Equal(t, facts.EffectObserved, c.EffectState, "the action made it: an effect")
			require.Equal(t, c.Observation.Before, c.Observation.After, "the reading after is of the workspace without it")
			require.Empty(t, c.Observation.Changed)
			require.NoError(t, c.Validate())
		})
	}
}

// A commondir there when the action started (a linked worktree's git
// directory has one) is the action's to keep; one that appears outside a
// git directory, or in a .git's hooks or worktrees, is not git's to read
// as a commondir and is an ordinary effect.
func TestACommondirThatWasThereStays(t *testing.T) {
	root := gitDirs(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "commondir"), []byte("../evil\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "worktrees", "w"), 0o755))
	b := observed(t, root)
	req := action.Request{ActionID: "a1", Capability: action.Execute, Adapter: "worker"}
	bg, refused := b.Begin(context.Background(), req)
	require.Nil(t, refused)
	w := &worker{name: "worker", root: root, do: func(root string) (facts.Report, error) {
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "commondir"), []byte("../other\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "worktrees", "w", "commondir"), []byte("../..\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, "commondir"), []byte("../..\n"), 0o644))
		return facts.Report{Status: facts.StatusSucceeded}, nil
	}}
	c := b.Finish(context.Background(), req, bg, w).Completed
	require.Empty(t, c.Observation.Removed)
	require.FileExists(t, filepath.Join(root, ".git", "commondir"))
	var changed []string
	for _, p := range c.Observation.Changed {
		changed = append(changed, p.Path)
	}
	require.ElementsMatch(t, []string{".git/commondir", ".git/worktrees/w/commondir", "commondir"}, changed)
}

// An action cancelled while it works is taken away from as one that
// ends: what it planted is gone before the runtime looks, and the
// interruption says so.
func TestACommondirPlantedByACancelledActionIsRemoved(t *testing.T) {
	root := gitDirs(t)
	b := observed(t, root)
	req := action.Request{ActionID: "a1", Capability: action.Execute, Adapter: "worker"}
	bg, refused := b.Begin(context.Background(), req)
	require.Nil(t, refused)
	ctx, cancel := context.WithCancel(context.Background())
	a := cancelledAdapter{root: root, path: ".git/commondir", started: make(chan struct{})}
	go func() {
		<-a.started
		cancel()
	}()
	end := b.Finish(ctx, req, bg, a)
	require.NotNil(t, end.Interrupted)
	require.Len(t, end.Interrupted.Removed, 1)
	require.Equal(t, ".git/commondir", end.Interrupted.Removed[0].Path)
	require.NoFileExists(t, filepath.Join(root, ".git", "commondir"))
}

// plantIn runs an action whose adapter writes a commondir at p (an
// absolute path) in the workspace root, and returns its completion.
func plantIn(t *testing.T, root, p string) facts.ActionCompleted {
	t.Helper()
	b := observed(t, root)
	req := action.Request{ActionID: "a1", Capability: action.Execute, Adapter: "worker"}
	bg, refused := b.Begin(context.Background(), req)
	require.Nil(t, refused)
	w := &worker{name: "worker", root: root, do: func(string) (facts.Report, error) {
		require.NoError(t, os.WriteFile(p, []byte("../evil\n"), 0o644))
		return facts.Report{Status: facts.StatusSucceeded}, nil
	}}
	return *b.Finish(context.Background(), req, bg, w).Completed
}

// gitIn runs git in dir with an identity and no config of the machine's.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// A workspace that is a linked worktree: its git directory (under the
// repository's .git/worktrees) has a commondir, its own, which is kept;
// the repository's .git, the common directory, lies outside the
// workspace and had none: one made there while the action ran (the
// person's git in the main checkout would read it) is removed, and
// recorded by its absolute path.
func TestACommondirPlantedInALinkedWorktreesCommonDirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	gitIn(t, repo, "init", "-q")
	gitIn(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(t.TempDir(), "wt")
	gitIn(t, repo, "worktree", "add", "-q", wt)
	own := filepath.Join(repo, ".git", "worktrees", "wt", "commondir")
	was, err := os.ReadFile(own)
	require.NoError(t, err)

	c := plantIn(t, wt, filepath.Join(repo, ".git", "commondir"))
	require.Len(t, c.Observation.Removed, 1)
	require.Equal(t, filepath.Join(repo, ".git", "commondir"), c.Observation.Removed[0].Path)
	require.NoFileExists(t, filepath.Join(repo, ".git", "commondir"))
	now, err := os.ReadFile(own)
	require.NoError(t, err)
	require.Equal(t, was, now, "the worktree's own commondir is kept")
	require.Equal(t, facts.EffectObserved, c.EffectState)
}

// A .git that is a link to a git directory is followed as git follows
// it: a commondir made in the directory it leads to is removed.
func TestACommondirPlantedThroughALinkedDotGit(t *testing.T) {
	root := gitDirs(t)
	require.NoError(t, os.Rename(filepath.Join(root, ".git"), filepath.Join(root, "real-git")))
	require.NoError(t, os.Symlink("real-git", filepath.Join(root, ".git")))
	c := plantIn(t, root, filepath.Join(root, "real-git", "commondir"))
	require.Len(t, c.Observation.Removed, 1)
	require.Equal(t, "real-git/commondir", c.Observation.Removed[0].Path)
	require.NoFileExists(t, filepath.Join(root, "real-git", "commondir"))
}
