package sandbox_test

// The review of branch sbx10 (a .git that is a symbolic link): each test
// an attack it found, kept as a regression test.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// rev-sbx10 probe 1: hooks inside the git directory a .git link leads to
// is itself a symbolic link (the person's shared hooks). The read-only
// bind follows it; the link itself is not kept, so a command replaces it
// with a directory of its own hooks.
func TestRevHooksLinkInLinkedGitDir(t *testing.T) {
	ws := linkedRepo(t, "meta/gs")
	shared := realTemp(t)
	hooks := filepath.Join(ws, "meta/gs/hooks")
	require.NoError(t, os.RemoveAll(hooks))
	require.NoError(t, os.Symlink(shared, hooks))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "rm .git/hooks; mkdir .git/hooks; printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo done")
	require.Equal(t, 0, e.Code, got)
	t.Log(got)
	requireUnchanged(t, filepath.Join(hooks, "pre-commit"), "")
}

// The same with a .git directory (as on main).
func TestRevHooksLinkInGitDir(t *testing.T) {
	ws, _ := gitRepo(t)
	shared := realTemp(t)
	hooks := filepath.Join(ws, ".git/hooks")
	require.NoError(t, os.RemoveAll(hooks))
	require.NoError(t, os.Symlink(shared, hooks))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "rm .git/hooks; mkdir .git/hooks; printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo done")
	require.Equal(t, 0, e.Code, got)
	t.Log(got)
	requireUnchanged(t, filepath.Join(hooks, "pre-commit"), "")
}

// config as a link (a dotfiles manager's): the command replaces it.
func TestRevConfigLinkInGitDir(t *testing.T) {
	ws, _ := gitRepo(t)
	other := filepath.Join(realTemp(t), "config")
	require.NoError(t, os.Rename(filepath.Join(ws, ".git/config"), other))
	require.NoError(t, os.Symlink(other, filepath.Join(ws, ".git/config")))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "rm .git/config; printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > .git/config; echo done")
	require.Equal(t, 0, e.Code, got)
	t.Log(got)
	fi, err := os.Lstat(filepath.Join(ws, ".git/config"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "config replaced")
}

// rev-sbx10 probe 2: the spec is made once per session (stock), and
// git() takes s.Git.Pin over what .git leads to now: a .git link changed
// (by the person) between Default and a command leaves its new git
// directory unpinned.
func TestRevStalePin(t *testing.T) {
	ws := linkedRepo(t, "gs1")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	// the person moves the git directory and the link
	require.NoError(t, os.Rename(filepath.Join(ws, "gs1"), filepath.Join(ws, "gs2")))
	require.NoError(t, os.Remove(filepath.Join(ws, ".git")))
	require.NoError(t, os.Symlink("gs2", filepath.Join(ws, ".git")))
	got, e := run(t, spec, "mv gs2 gsold && mkdir -p gs2/hooks && cp -r gsold/HEAD gsold/objects gsold/refs gs2/ && printf '#!/bin/sh\\ntouch PWNED\\n' > gs2/hooks/pre-commit; chmod +x gs2/hooks/pre-commit; echo done")
	require.Equal(t, 0, e.Code, got)
	t.Log(got)
	requireUnchanged(t, filepath.Join(ws, "gs2/hooks/pre-commit"), "")
}

// Legit: a submodule's workspace commits in the sandbox; a linked
// worktree too; git status of the person afterwards runs nothing.
func TestRevLegitSubmoduleAndWorktree(t *testing.T) {
	main, run0 := gitRepo(t)
	super, _ := gitRepo(t)
	run0(super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", main, "lib")
	sub := filepath.Join(super, "lib")
	spec, err := sandbox.Default(sub, "")
	require.NoError(t, err)
	require.Empty(t, spec.Record().GitRefused)
	got, e := run(t, spec, "touch f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m two && echo committed; echo x > "+filepath.Join(super, ".git/modules/lib/hooks/pre-commit; true"))
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "committed")
	require.Contains(t, got, "Read-only")

	wt := filepath.Join(realTemp(t), "wt")
	run0(main, "worktree", "add", "-q", wt)
	spec, err = sandbox.Default(wt, "")
	require.NoError(t, err)
	require.Empty(t, spec.Record().GitRefused)
	got, e = run(t, spec, "touch g && git add g && git -c user.name=t -c user.email=t@example.com commit -q -m three && echo committed")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "committed")
}

// A command writes commondir in the git directory a .git link leads to
// (kept read-only only where it exists): the person's git then reads the
// config of a directory of the command's own.
func TestRevCommondirInLinkedGitDir(t *testing.T) {
	t.Skip("known, not refused: a command that writes a new commondir where none was is observed (.git/commondir (added)) and shown in harness effects, as the README says; a placeholder kept read-only while commands run (sbx13) was taken out: one lock per user could not keep it from being removed under a running command, and it was left behind and blamed on the model")
	ws := linkedRepo(t, "gs")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "mkdir -p evil && cp -r gs/HEAD gs/objects gs/refs evil/ && printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > evil/config && echo ../evil > gs/commondir; echo done")
	require.Equal(t, 0, e.Code, got)
	t.Log(got)
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = ws
	out, _ := cmd.CombinedOutput()
	t.Log(string(out))
	_, err = os.Stat(filepath.Join(ws, "PWNED"))
	require.ErrorIs(t, err, os.ErrNotExist, "the person's git status ran the command's fsmonitor")
}

// .git -> home directory, .git -> another repository's .git, .git chain
// through an outside link.
func TestRevOutsideTargets(t *testing.T) {
	home, _ := os.UserHomeDir()
	other, _ := gitRepo(t)
	for _, target := range []string{home, filepath.Join(other, ".git"), "/"} {
		ws := realTemp(t)
		require.NoError(t, os.Symlink(target, filepath.Join(ws, ".git")))
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		c := &sandbox.Cmd{Spec: spec, Line: "echo x > .git/hooks/zz-rev; echo x > .git/zz-rev"}
		err = c.Start(context.Background())
		if err != nil {
			t.Logf("%s: refused to start: %v", target, err)
			continue
		}
		_, err = c.Wait()
		require.NoError(t, err)
		_, err = os.Stat(filepath.Join(target, "zz-rev"))
		require.Error(t, err, target)
		_, err = os.Stat(filepath.Join(target, "hooks/zz-rev"))
		require.Error(t, err, target)
		t.Logf("%s: ran, refused=%q", target, strings.SplitN(spec.Record().GitRefused, ":", 2)[0])
	}
}

// The same with a .git directory (main's case): commondir created by a
// command, then the person's git status.
func TestRevCommondirInGitDir(t *testing.T) {
	t.Skip("known, not refused: a command that writes a new commondir where none was is observed (.git/commondir (added)) and shown in harness effects, as the README says; a placeholder kept read-only while commands run (sbx13) was taken out: one lock per user could not keep it from being removed under a running command, and it was left behind and blamed on the model")
	ws, _ := gitRepo(t)
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "mkdir -p evil && cp -r .git/HEAD .git/objects .git/refs evil/ && printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > evil/config && echo ../evil > .git/commondir; echo done")
	require.Equal(t, 0, e.Code, got)
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = ws
	out, _ := cmd.CombinedOutput()
	t.Log(string(out))
	_, err = os.Stat(filepath.Join(ws, "PWNED"))
	require.ErrorIs(t, err, os.ErrNotExist, "the person's git status ran the command's fsmonitor")
}

// A .git link into a deep chain of directories: each entry would be
// pinned before every command, so a way of more than 64 is refused,
// naming the link; a short one runs.
func TestRevDeepWay(t *testing.T) {
	ws := linkedRepo(t, strings.Repeat("a/", 3)+"gs")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "true")
	require.Equal(t, 0, e.Code, got)

	ws = linkedRepo(t, strings.Repeat("a/", 1000)+"gs")
	spec, err = sandbox.Default(ws, "")
	if err == nil {
		err = (&sandbox.Cmd{Spec: spec, Line: "true"}).Start(context.Background())
	}
	require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
	require.ErrorContains(t, err, filepath.Join(ws, ".git"))
	require.ErrorContains(t, err, "more than 64")
}

// .git file forms: "./meta/", absolute, via a link in the workspace.
func TestRevGitFileForms(t *testing.T) {
	for _, form := range []string{"./meta/", "ABS", "hop/"} {
		ws := realTemp(t)
		writeFile(t, filepath.Join(ws, "meta/HEAD"), "ref: refs/heads/main\n")
		require.NoError(t, os.Symlink("meta", filepath.Join(ws, "hop")))
		gd := form
		if form == "ABS" {
			gd = filepath.Join(ws, "meta")
		}
		writeFile(t, filepath.Join(ws, ".git"), "gitdir: "+gd+"\n")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, e := run(t, spec, "mkdir -p meta/hooks; echo x > meta/hooks/pre-commit; echo '[core] fsmonitor = x' > meta/config; mv meta m2; rm hop; ln -sfn other hop; echo done")
		require.Equal(t, 0, e.Code, got)
		requireUnchanged(t, filepath.Join(ws, "meta/hooks/pre-commit"), "")
		target, err := os.Readlink(filepath.Join(ws, "hop"))
		require.NoError(t, err)
		if form == "hop/" {
			require.Equal(t, "meta", target, form)
		}
		t.Logf("%s: ok (hop -> %s)", form, target)
	}
}

// A dangling hooks link: prepare cannot make hooks, and the command could
// make what it names: no command starts while what it names lies in a
// writable root.
func TestRevDanglingHooksLink(t *testing.T) {
	for _, linked := range []bool{true, false} {
		var ws, hooks string
		if linked {
			ws = linkedRepo(t, "gs")
			hooks = filepath.Join(ws, "gs/hooks")
		} else {
			ws, _ = gitRepo(t)
			hooks = filepath.Join(ws, ".git/hooks")
		}
		require.NoError(t, os.RemoveAll(hooks))
		require.NoError(t, os.Symlink(filepath.Join(ws, "myhooks"), hooks))
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		c := &sandbox.Cmd{Spec: spec, Line: "mkdir -p myhooks && printf '#!/bin/sh\\ntouch PWNED\\n' > myhooks/pre-commit; chmod +x myhooks/pre-commit; echo done"}
		err = c.Start(context.Background())
		require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
		require.ErrorContains(t, err, filepath.Join(ws, "myhooks"))
		requireUnchanged(t, filepath.Join(ws, "myhooks/pre-commit"), "")
	}
}

// What the command's shell holds open, and the mounts it sees, with a
// .git link chain.
func TestRevFdsAndMounts(t *testing.T) {
	ws := linkedRepo(t, "real/gs")
	require.NoError(t, os.Remove(filepath.Join(ws, ".git")))
	require.NoError(t, os.Symlink("real", filepath.Join(ws, "hop")))
	require.NoError(t, os.Symlink("hop/gs", filepath.Join(ws, ".git")))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "ls -l /proc/$$/fd; grep "+ws+" /proc/self/mountinfo | cut -d' ' -f5,6")
	require.Equal(t, 0, e.Code, got)
	t.Log(got)
}

// A .git link into ANOTHER workspace's Go cache (a writable root of that
// workspace's commands, which could write the hooks this workspace's
// person's git would run): refused.
func TestRevGitLinkIntoAnotherWorkspacesCache(t *testing.T) {
	other := realTemp(t)
	oc, err := sandbox.WorkspaceGoCache(other)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(oc)) })
	writeFile(t, filepath.Join(oc, "x/HEAD"), "ref: refs/heads/main\n")
	ws := realTemp(t)
	require.NoError(t, os.Symlink(filepath.Join(oc, "x"), filepath.Join(ws, ".git")))
	spec, err := sandbox.Default(ws, "")
	if err == nil {
		err = (&sandbox.Cmd{Spec: spec, Line: "true"}).Start(context.Background())
	}
	require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
	require.ErrorContains(t, err, filepath.Join(oc, "x"))
}

// A .git link to a worktree's git directory inside the workspace: git
// reads its commondir, and takes config and hooks from the common
// directory, which the link case does not keep.
func TestRevGitLinkToWorktreeGitDir(t *testing.T) {
	ws := linkedRepo(t, "meta")
	require.NoError(t, os.Remove(filepath.Join(ws, ".git")))
	head, err := os.ReadFile(filepath.Join(ws, "meta/HEAD"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(ws, "meta/worktrees/wt/HEAD"), string(head))
	writeFile(t, filepath.Join(ws, "meta/worktrees/wt/commondir"), "../..\n")
	writeFile(t, filepath.Join(ws, "meta/worktrees/wt/gitdir"), filepath.Join(ws, ".git")+"\n")
	require.NoError(t, os.Symlink("meta/worktrees/wt", filepath.Join(ws, ".git")))
	cmd := exec.Command("git", "rev-parse", "--git-common-dir")
	cmd.Dir = ws
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("person's git: common dir %s", out)
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	t.Logf("refused=%q pin=%s ro=%v", spec.Record().GitRefused, spec.Git.Pin, spec.Git.ReadOnly)
	got, e := run(t, spec, `printf '\tfsmonitor = "touch PWNED; false"\n' >> meta/config; echo done`)
	require.Equal(t, 0, e.Code, got)
	t.Log(got)
	cmd = exec.Command("git", "status", "--short")
	cmd.Dir = ws
	out, _ = cmd.CombinedOutput()
	t.Logf("person's git status: %s", out)
	require.NoFileExists(t, filepath.Join(ws, "PWNED"), "the person's git status ran the command's fsmonitor")
}

// The same through a .git FILE whose worktree git directory is refused
// (its back-link names another place): keep() keeps it, not its common
// directory, which git still reads.
func TestRevGitFileToRefusedWorktreeGitDir(t *testing.T) {
	ws := linkedRepo(t, "meta")
	require.NoError(t, os.Remove(filepath.Join(ws, ".git")))
	head, err := os.ReadFile(filepath.Join(ws, "meta/HEAD"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(ws, "meta/worktrees/wt/HEAD"), string(head))
	writeFile(t, filepath.Join(ws, "meta/worktrees/wt/commondir"), "../..\n")
	writeFile(t, filepath.Join(ws, "meta/worktrees/wt/gitdir"), "/elsewhere/.git\n")
	writeFile(t, filepath.Join(ws, ".git"), "gitdir: meta/worktrees/wt\n")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	t.Logf("refused=%q kept=%v", spec.Record().GitRefused, spec.Git.Kept)
	got, e := run(t, spec, `printf '\tfsmonitor = "touch PWNED; false"\n' >> meta/config; echo done`)
	require.Equal(t, 0, e.Code, got)
	t.Log(got)
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = ws
	out, _ := cmd.CombinedOutput()
	t.Logf("person's git status: %s", out)
	require.NoFileExists(t, filepath.Join(ws, "PWNED"), "the person's git status ran the command's fsmonitor")
}

// A .git directory with a commondir (git honours it) naming a directory
// of the workspace: its config and hooks are read-only, as .git's.
func TestRevCommondirOfGitDirInside(t *testing.T) {
	ws, _ := gitRepo(t)
	common := filepath.Join(ws, "common")
	require.NoError(t, os.MkdirAll(common, 0o755))
	for _, f := range []string{"HEAD", "config"} {
		data, err := os.ReadFile(filepath.Join(ws, ".git", f))
		require.NoError(t, err)
		writeFile(t, filepath.Join(common, f), string(data))
	}
	writeFile(t, filepath.Join(ws, ".git/commondir"), "../common\n")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	require.Contains(t, spec.Git.Kept, common)
	require.Contains(t, spec.Git.ReadOnly, filepath.Join(common, "config"))
	got, e := run(t, spec, `printf '\tfsmonitor = "touch PWNED; false"\n' >> common/config; mkdir -p common/hooks; echo x > common/hooks/pre-commit; mv common c2; echo done`)
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "Read-only file system")
	require.Contains(t, got, "done")
	requireUnchanged(t, filepath.Join(common, "hooks/pre-commit"), "")
	require.DirExists(t, common)
	cfg, err := os.ReadFile(filepath.Join(common, "config"))
	require.NoError(t, err)
	require.NotContains(t, string(cfg), "PWNED")
}

// A commondir (of a .git directory, or of the git directory a .git link
// leads to) naming a directory outside the workspace that a command may
// write (here a Writable root): no command starts.
func TestRevCommondirOutsideInWritableRoot(t *testing.T) {
	for _, linked := range []bool{false, true} {
		var ws, gd string
		if linked {
			ws = linkedRepo(t, "gs")
			gd = filepath.Join(ws, "gs")
		} else {
			ws, _ = gitRepo(t)
			gd = filepath.Join(ws, ".git")
		}
		shared := realTemp(t)
		writeFile(t, filepath.Join(shared, "c/HEAD"), "ref: refs/heads/main\n")
		writeFile(t, filepath.Join(gd, "commondir"), filepath.Join(shared, "c")+"\n")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		require.Contains(t, spec.Git.Ends, filepath.Join(shared, "c"))
		spec.Writable = append(spec.Writable, shared)
		err = (&sandbox.Cmd{Spec: spec, Line: "true"}).Start(context.Background())
		require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
		require.ErrorContains(t, err, filepath.Join(shared, "c"))
	}
}

// A hooks link to a directory outside the workspace that a command may
// write: no command starts (the person's git would run what it put
// there); outside every writable root, the command runs and cannot
// replace the link.
func TestRevHooksLinkOutside(t *testing.T) {
	ws, _ := gitRepo(t)
	shared := realTemp(t)
	hooks := filepath.Join(ws, ".git/hooks")
	require.NoError(t, os.RemoveAll(hooks))
	require.NoError(t, os.Symlink(shared, hooks))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "echo x > .git/hooks/pre-commit; rm .git/hooks; echo done")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "done")
	requireUnchanged(t, filepath.Join(shared, "pre-commit"), "")
	target, err := os.Readlink(hooks)
	require.NoError(t, err)
	require.Equal(t, shared, target)

	spec.Writable = append(spec.Writable, shared)
	err = (&sandbox.Cmd{Spec: spec, Line: "true"}).Start(context.Background())
	require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
	require.ErrorContains(t, err, shared)
}
