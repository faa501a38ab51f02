package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// linkedRepo makes a workspace whose git directory lies at rel inside it
// (a repository with one commit) and whose .git is a symbolic link to it.
func linkedRepo(t *testing.T, rel string) string {
	t.Helper()
	repo, _ := gitRepo(t)
	ws := realTemp(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, rel)), 0o755))
	require.NoError(t, os.Rename(filepath.Join(repo, ".git"), filepath.Join(ws, rel)))
	require.NoError(t, os.Symlink(rel, filepath.Join(ws, ".git")))
	return ws
}

// requireUnchanged checks that the file at path still holds want, or, for
// want "", does not exist.
func requireUnchanged(t *testing.T, path, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if want == "" {
		require.ErrorIs(t, err, os.ErrNotExist, "%s was written: %q", path, data)
		return
	}
	require.NoError(t, err)
	require.Equal(t, want, string(data), path)
}

// A .git that is a symbolic link to a git directory inside the workspace
// (git follows it) is that git directory: its hooks, config and info are
// read-only, it is pinned, and so are the link and the directories on
// its way, so a command can neither write a hook the person's git would
// run, through the link or around it, nor make the link lead to a
// directory of its own. git still commits.
func TestCmdGitLinkInside(t *testing.T) {
	ws := linkedRepo(t, "meta/gitstuff")
	gs := filepath.Join(ws, "meta/gitstuff")
	cfg, err := os.ReadFile(filepath.Join(gs, "config"))
	require.NoError(t, err)

	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	r := spec.Record()
	require.Empty(t, r.GitRefused)
	for _, p := range []string{"hooks", "config", "info"} {
		require.Contains(t, r.ReadOnly, filepath.Join(gs, p))
	}
	got, e := run(t, spec, strings.Join([]string{
		"echo 'touch PWNED' > .git/hooks/pre-commit",
		"echo 'touch PWNED' > meta/gitstuff/hooks/post-checkout",
		"echo '[core] fsmonitor = ./evil' >> meta/gitstuff/config",
		"echo '* filter=evil' > meta/gitstuff/info/attributes",
		"mv .git moved-link",
		"rm -f .git",
		"ln -sfn elsewhere .git",
		"mv meta/gitstuff meta/moved",
		"mv meta meta2",
		"touch f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m two && echo committed",
	}, "; "))
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "Read-only file system")
	require.Contains(t, got, "busy")
	require.Contains(t, got, "committed")
	requireUnchanged(t, filepath.Join(gs, "hooks/pre-commit"), "")
	requireUnchanged(t, filepath.Join(gs, "hooks/post-checkout"), "")
	requireUnchanged(t, filepath.Join(gs, "info/attributes"), "")
	requireUnchanged(t, filepath.Join(gs, "config"), string(cfg))
	target, err := os.Readlink(filepath.Join(ws, ".git"))
	require.NoError(t, err)
	require.Equal(t, "meta/gitstuff", target)
	require.NoDirExists(t, filepath.Join(ws, "meta2"))
	require.NoDirExists(t, filepath.Join(ws, "meta/moved"))
}

// A link on the way of the .git link is pinned too: a command cannot
// swap it for one that leads to a git directory of its own.
func TestCmdGitLinkChain(t *testing.T) {
	ws := linkedRepo(t, "real/gitstuff")
	require.NoError(t, os.Remove(filepath.Join(ws, ".git")))
	require.NoError(t, os.Symlink("real", filepath.Join(ws, "hop")))
	require.NoError(t, os.Symlink("hop/gitstuff", filepath.Join(ws, ".git")))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(ws, ".git"), filepath.Join(ws, "hop"), filepath.Join(ws, "real")}, spec.Git.Via)
	require.Equal(t, filepath.Join(ws, "real/gitstuff"), spec.Git.Pin)
	got, e := run(t, spec, "mkdir -p mine/gitstuff/hooks && ln -sfn mine hop; rm hop; mv real real2; echo done")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "done")
	target, err := os.Readlink(filepath.Join(ws, "hop"))
	require.NoError(t, err)
	require.Equal(t, "real", target)
	require.DirExists(t, filepath.Join(ws, "real/gitstuff"))
}

// A .git link to a directory of the workspace that is not a git
// directory: refused, and read-only whole, so that a command cannot make
// it one with hooks of its own.
func TestCmdGitLinkToAPlainDirectory(t *testing.T) {
	ws := realTemp(t)
	writeFile(t, filepath.Join(ws, "plain/readme"), "x\n")
	require.NoError(t, os.Symlink("plain", filepath.Join(ws, ".git")))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	r := spec.Record()
	require.Contains(t, r.GitRefused, "not a git directory")
	require.Contains(t, r.ReadOnly, filepath.Join(ws, "plain"))
	got, e := run(t, spec, "echo 'ref: refs/heads/main' > plain/HEAD; mkdir plain/hooks; echo ok > other; echo done")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "Read-only file system")
	require.Contains(t, got, "done")
	requireUnchanged(t, filepath.Join(ws, "plain/HEAD"), "")
	require.NoDirExists(t, filepath.Join(ws, "plain/hooks"))
	requireUnchanged(t, filepath.Join(ws, "other"), "ok\n")
}

// A .git link that leads nowhere, where the command could make what it
// names (in the workspace, or in the Go cache), or that leads to a
// directory the command may write outside the workspace, or to one that
// holds the workspace: no command starts, and the error says why.
func TestCmdGitLinkRefusesToStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(ws, cache string) string
		why    string
	}{
		{"nowhere in the workspace", func(ws, _ string) string { return "gitstuff" }, "passes " + "WS/gitstuff"},
		{"nowhere below a missing directory", func(ws, _ string) string { return "a/b/gitstuff" }, "passes WS/a"},
		{"into the Go cache", func(_, cache string) string {
			require.NoError(t, os.MkdirAll(filepath.Join(cache, "x"), 0o755))
			return filepath.Join(cache, "x")
		}, "whose control entries hold, the writable"},
		{"nowhere in the Go cache", func(_, cache string) string { return filepath.Join(cache, "y") }, "in the writable"},
		{"the workspace itself", func(ws, _ string) string { return "." }, "whose control entries hold, the writable WS"},
		// The parent's hooks directory is the workspace.
		{"the parent", func(ws, _ string) string { return ".." }, "whose control entries hold, the writable WS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := filepath.Join(realTemp(t), "hooks")
			require.NoError(t, os.Mkdir(ws, 0o755))
			cache, err := sandbox.WorkspaceGoCache(ws)
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(cache, 0o700))
			t.Cleanup(func() { os.RemoveAll(filepath.Dir(cache)) })
			require.NoError(t, os.Symlink(tc.target(ws, cache), filepath.Join(ws, ".git")))
			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			c := &sandbox.Cmd{Spec: spec, Line: "mkdir -p gitstuff/hooks a/b/gitstuff/hooks " + filepath.Join(cache, "y/hooks")}
			err = c.Start(context.Background())
			require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
			require.ErrorContains(t, err, strings.ReplaceAll(tc.why, "WS", ws))
			require.NoDirExists(t, filepath.Join(ws, "gitstuff"))
			require.NoDirExists(t, filepath.Join(cache, "y"))
		})
	}
}

// A .git link to a directory outside the workspace whose control entries
// hold no writable root: refused, and the command runs, unable to write
// there.
func TestCmdGitLinkOutsideHoldingTheWorkspace(t *testing.T) {
	for _, target := range []string{"..", "/"} {
		ws := realTemp(t)
		require.NoError(t, os.Symlink(target, filepath.Join(ws, ".git")))
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		require.Contains(t, spec.Record().GitRefused, "outside the workspace")
		got, e := run(t, spec, "mkdir .git/hooks; rm .git; echo done")
		require.Equal(t, 0, e.Code, got)
		require.Contains(t, got, "done")
		require.NoDirExists(t, filepath.Join(filepath.Dir(ws), "hooks"))
		got, err = os.Readlink(filepath.Join(ws, ".git"))
		require.NoError(t, err)
		require.Equal(t, target, got)
	}
}

// A .git link to a directory outside the workspace that no writable
// root holds: refused, and the command, which runs, cannot write there.
func TestCmdGitLinkOutside(t *testing.T) {
	outside, _ := gitRepo(t)
	ws := realTemp(t)
	require.NoError(t, os.Symlink(filepath.Join(outside, ".git"), filepath.Join(ws, ".git")))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	r := spec.Record()
	require.Contains(t, r.GitRefused, "outside the workspace")
	require.Equal(t, []string{ws, spec.GoCache}, r.Writable)
	got, e := run(t, spec, "echo evil > .git/hooks/pre-commit; rm .git; echo done")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "done")
	requireUnchanged(t, filepath.Join(outside, ".git/hooks/pre-commit"), "")
	require.FileExists(t, filepath.Join(ws, ".git/HEAD"), "the link is still there")
}

// A .git link to a regular file is read as a .git file is (git does so):
// the file is read-only, and what it names is not writable.
func TestCmdGitLinkToAFile(t *testing.T) {
	ws := realTemp(t)
	writeFile(t, filepath.Join(ws, "notes"), "gitdir: meta\n")
	writeFile(t, filepath.Join(ws, "meta/HEAD"), "ref: refs/heads/main\n")
	require.NoError(t, os.Symlink("notes", filepath.Join(ws, ".git")))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	r := spec.Record()
	require.NotEmpty(t, r.GitRefused)
	require.Contains(t, r.ReadOnly, filepath.Join(ws, "notes"))
	got, e := run(t, spec, "echo 'gitdir: /elsewhere' > notes; rm .git; echo done")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "done")
	requireUnchanged(t, filepath.Join(ws, "notes"), "gitdir: meta\n")
}

// A .git link a command makes in a workspace without a .git is kept from
// the next command as one there from the start is.
func TestCmdGitLinkMadeByACommand(t *testing.T) {
	spec := defaultSpec(t)
	ws := spec.Workspace
	_, e := run(t, spec, "git init -q --separate-git-dir=gs . && rm .git && ln -s gs .git")
	require.Equal(t, 0, e.Code)
	got, e := run(t, spec, "echo 'touch PWNED' > gs/hooks/pre-commit; rm .git; echo done")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "done")
	requireUnchanged(t, filepath.Join(ws, "gs/hooks/pre-commit"), "")
	fi, err := os.Lstat(filepath.Join(ws, ".git"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink)
}

// A .harness that is a symbolic link is hidden where it leads, and the
// link is pinned: a command cannot put a .harness of its own in its
// place, whose project.json the next run would read. One that leads
// nowhere the command could reach stops the command from starting.
func TestCmdStoreLink(t *testing.T) {
	ws := realTemp(t)
	writeFile(t, filepath.Join(ws, "store/project.json"), "{}\n")
	require.NoError(t, os.Symlink("store", filepath.Join(ws, ".harness")))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, `rm .harness; mv .harness h2; mkdir -p .harness && echo '{"approve":"all"}' > .harness/project.json; cat store/project.json; echo done`)
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "done")
	fi, err := os.Lstat(filepath.Join(ws, ".harness"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink)
	requireUnchanged(t, filepath.Join(ws, "store/project.json"), "{}\n")

	require.NoError(t, os.Remove(filepath.Join(ws, ".harness")))
	require.NoError(t, os.Symlink("nostore", filepath.Join(ws, ".harness")))
	spec, err = sandbox.Default(ws, "")
	require.NoError(t, err)
	c := &sandbox.Cmd{Spec: spec, Line: `mkdir nostore && echo '{"approve":"all"}' > nostore/project.json`}
	err = c.Start(context.Background())
	require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
	require.ErrorContains(t, err, filepath.Join(ws, "nostore"))
	require.NoDirExists(t, filepath.Join(ws, "nostore"))
}

// A .git file that names a git directory inside the workspace, refused
// (not a worktree's nor a submodule's) or a well-formed fake worktree:
// the directories are kept as .git is (pinned, hooks, config and info
// made and read-only), so a command cannot plant a hook the person's git
// would run through the .git file, nor move the directory away and make
// another. One that names a directory in the Go cache stops commands.
func TestCmdGitFileInside(t *testing.T) {
	ws := realTemp(t)
	writeFile(t, filepath.Join(ws, "meta/HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(ws, ".git"), "gitdir: meta\n")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	require.NotEmpty(t, spec.Record().GitRefused)
	got, e := run(t, spec, "mkdir -p meta/hooks; echo 'touch PWNED' > meta/hooks/pre-commit; echo '[core] fsmonitor = x' > meta/config; mv meta meta2; echo done")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "done")
	requireUnchanged(t, filepath.Join(ws, "meta/hooks/pre-commit"), "")
	cfg, err := os.ReadFile(filepath.Join(ws, "meta/config"))
	require.NoError(t, err, "made, empty, to be made read-only")
	require.Empty(t, cfg)
	require.NoDirExists(t, filepath.Join(ws, "meta2"))

	// A fake worktree in the workspace: its common directory too.
	ws = realTemp(t)
	writeFile(t, filepath.Join(ws, "fake/HEAD"), "ref: refs/heads/main\n")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "fake/objects"), 0o755))
	writeFile(t, filepath.Join(ws, "fake/worktrees/x/HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(ws, "fake/worktrees/x/gitdir"), filepath.Join(ws, ".git")+"\n")
	writeFile(t, filepath.Join(ws, "fake/worktrees/x/commondir"), "../..\n")
	writeFile(t, filepath.Join(ws, ".git"), "gitdir: fake/worktrees/x\n")
	spec, err = sandbox.Default(ws, "")
	require.NoError(t, err)
	require.Empty(t, spec.Record().GitRefused)
	got, e = run(t, spec, "echo 'touch PWNED' > fake/hooks/pre-commit; echo ../../../evil > fake/worktrees/x/commondir; mv fake/worktrees fake/w2; mv fake f2; echo done")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "done")
	requireUnchanged(t, filepath.Join(ws, "fake/hooks/pre-commit"), "")
	requireUnchanged(t, filepath.Join(ws, "fake/worktrees/x/commondir"), "../..\n")
	require.NoDirExists(t, filepath.Join(ws, "fake/w2"))
	require.NoDirExists(t, filepath.Join(ws, "f2"))

	// A git directory in the Go cache, or a missing one there.
	for _, sub := range []string{"present", "missing"} {
		ws = realTemp(t)
		cache, err := sandbox.WorkspaceGoCache(ws)
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(filepath.Dir(cache)) })
		require.NoError(t, os.MkdirAll(cache, 0o700))
		if sub == "present" {
			writeFile(t, filepath.Join(cache, sub, "HEAD"), "ref: refs/heads/main\n")
		}
		writeFile(t, filepath.Join(ws, ".git"), "gitdir: "+filepath.Join(cache, sub)+"\n")
		spec, err = sandbox.Default(ws, "")
		require.NoError(t, err)
		c := &sandbox.Cmd{Spec: spec, Line: "mkdir -p " + filepath.Join(cache, sub, "hooks")}
		err = c.Start(context.Background())
		require.ErrorIs(t, err, sandbox.ErrInvalidSpec, sub)
		require.ErrorContains(t, err, filepath.Join(cache, sub))
		require.NoDirExists(t, filepath.Join(cache, sub, "hooks"))
	}
}

// A real linked worktree: git commits, but the directory that holds its
// git directory in the common directory (a writable root) cannot be
// renamed, so the .git file cannot be made to lead to a git directory of
// the command's own there.
func TestCmdWorktreeWayPinned(t *testing.T) {
	main, run0 := gitRepo(t)
	wt := filepath.Join(realTemp(t), "wt")
	run0(main, "worktree", "add", "-q", wt)
	spec, err := sandbox.Default(wt, "")
	require.NoError(t, err)
	got, e := run(t, spec, strings.Join([]string{
		"mv " + main + "/.git/worktrees " + main + "/.git/w2",
		"mv " + main + "/.git/worktrees/wt " + main + "/.git/worktrees/w3",
		"touch f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m two && echo committed",
	}, "; "))
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "committed")
	require.DirExists(t, filepath.Join(main, ".git/worktrees/wt"))
	require.NoDirExists(t, filepath.Join(main, ".git/w2"))
}
