package sandbox_test

// sbx13: the git-control holes the sandbox still left open, each shown
// with a real sandboxed command and then the person's own git.

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// evilConfig is a shell command that writes, to the file it is
// redirected to, a git config whose fsmonitor touches pwned.
func evilConfig(pwned string) string {
	return "printf '[core]\\n\\tfsmonitor = \"touch " + pwned + "; false\"\\n'"
}

// personsGit runs the person's git status in dir, outside the sandbox,
// and fails the test when it ran the command's fsmonitor (pwned exists).
func personsGit(t *testing.T, dir, pwned string) {
	t.Helper()
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	t.Logf("the person's git status in %s: %s", dir, out)
	_, err := os.Lstat(pwned)
	require.ErrorIs(t, err, os.ErrNotExist, "the person's git in %s ran the command's fsmonitor", dir)
}

// plantCommon is a command line that makes dir/evil a common directory
// (objects and refs copied from the git directory from, a config with an
// fsmonitor that touches pwned), then writes its path into commondir.
func plantCommon(from, dir, commondir, pwned string) string {
	evil := filepath.Join(dir, "evil")
	return "mkdir -p " + evil + " && cp -r " + from + "/objects " + from + "/refs " + evil + "/ && " +
		evilConfig(pwned) + " > " + evil + "/config && echo " + evil + " > " + commondir + "; echo rc=$?"
}

// A git directory without a commondir: git reads one as soon as it
// exists, and a command could make one that names a directory of its own,
// whose config runs a program in the person's next git. Each git
// directory a command can write in has a commondir the command cannot
// write while it runs (a placeholder, ".", removed once no command runs),
// so that nothing of the command's is left for the person's git. git
// still works in the sandbox, and no placeholder is left behind.
func TestMissingCommondirCannotBeMade(t *testing.T) {
	t.Run("plain .git", func(t *testing.T) {
		ws, _ := gitRepo(t)
		pwned := filepath.Join(ws, "PWNED")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, e := run(t, spec, plantCommon(".git", ws, ".git/commondir", pwned)+
			"; git rev-parse --git-common-dir && touch f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m two && echo committed")
		t.Log(got)
		require.Equal(t, 0, e.Code, got)
		require.Contains(t, got, "committed")
		personsGit(t, ws, pwned)
		require.NotContains(t, got, "rc=0")
		requireUnchanged(t, filepath.Join(ws, ".git/commondir"), "")
	})
	t.Run("git directory a .git link leads to", func(t *testing.T) {
		ws := linkedRepo(t, "gs")
		pwned := filepath.Join(ws, "PWNED")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, plantCommon("gs", ws, "gs/commondir", pwned))
		t.Log(got)
		personsGit(t, ws, pwned)
		require.NotContains(t, got, "rc=0")
		requireUnchanged(t, filepath.Join(ws, "gs/commondir"), "")
	})
	t.Run("another worktree's git directory", func(t *testing.T) {
		// From the main worktree, a linked worktree's commondir under
		// .git/worktrees.
		ws, g := gitRepo(t)
		wt := filepath.Join(realTemp(t), "wt")
		g(ws, "worktree", "add", "-q", wt)
		pwned := filepath.Join(wt, "PWNED")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, plantCommon(".git", ws, ".git/worktrees/wt/commondir", pwned))
		t.Log(got)
		personsGit(t, wt, pwned)
		require.NotContains(t, got, "rc=0")
		requireUnchanged(t, filepath.Join(ws, ".git/worktrees/wt/commondir"), "../..\n")
	})
	t.Run("a submodule's git directory", func(t *testing.T) {
		lib, _ := gitRepo(t)
		ws, g := gitRepo(t)
		g(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
		pwned := filepath.Join(ws, "PWNED")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, plantCommon(".git/modules/lib", ws, ".git/modules/lib/commondir", pwned))
		t.Log(got)
		personsGit(t, filepath.Join(ws, "lib"), pwned)
		require.NotContains(t, got, "rc=0")
		requireUnchanged(t, filepath.Join(ws, ".git/modules/lib/commondir"), "")
	})
	t.Run("the submodule's own", func(t *testing.T) {
		// The workspace is the submodule: its git directory, outside the
		// workspace, is a writable root.
		lib, _ := gitRepo(t)
		super, g := gitRepo(t)
		g(super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
		ws := filepath.Join(super, "lib")
		gitdir := filepath.Join(super, ".git/modules/lib")
		pwned := filepath.Join(super, "PWNED")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		require.Empty(t, spec.Record().GitRefused)
		got, e := run(t, spec, plantCommon(gitdir, ws, gitdir+"/commondir", pwned)+
			"; touch f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m two && echo committed")
		t.Log(got)
		require.Equal(t, 0, e.Code, got)
		require.Contains(t, got, "committed")
		personsGit(t, ws, pwned)
		require.NotContains(t, got, "rc=0")
		requireUnchanged(t, filepath.Join(gitdir, "commondir"), "")
	})
	t.Run("a linked worktree's repository", func(t *testing.T) {
		// The workspace is a linked worktree: the repository's git
		// directory is a writable root, and the person's git in the main
		// worktree reads its commondir.
		repo, g := gitRepo(t)
		ws := filepath.Join(realTemp(t), "wt")
		g(repo, "worktree", "add", "-q", ws)
		R := filepath.Join(repo, ".git")
		pwned := filepath.Join(repo, "PWNED")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, e := run(t, spec, plantCommon(R, ws, R+"/commondir", pwned)+
			"; touch f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m two && echo committed")
		t.Log(got)
		require.Equal(t, 0, e.Code, got)
		require.Contains(t, got, "committed")
		personsGit(t, repo, pwned)
		require.NotContains(t, got, "rc=0")
		requireUnchanged(t, filepath.Join(R, "commondir"), "")
	})
}

// The linked worktrees' and the submodules' git directories under .git
// cannot be renamed away and made anew by a command (with a config, or a
// commondir, of its own), nor can the directories that hold them.
func TestGitDirsUnderDotGitCannotBeReplaced(t *testing.T) {
	for _, c := range []struct{ name, from, to string }{
		{"a submodule's", ".git/modules/lib", ".git/modules/lib"},
		{"modules", ".git/modules", ".git/modules/lib"},
		{"a worktree's", ".git/worktrees/wt", ".git/worktrees/wt"},
		{"worktrees", ".git/worktrees", ".git/worktrees/wt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib, _ := gitRepo(t)
			ws, g := gitRepo(t)
			g(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
			g(ws, "commit", "-q", "-m", "lib")
			wt := filepath.Join(realTemp(t), "wt")
			g(ws, "worktree", "add", "-q", wt)
			pwned := filepath.Join(ws, "PWNED")
			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			got, _ := run(t, spec, "mv "+c.from+" "+c.from+".old && mkdir -p "+c.to+" && cp -r "+c.from+".old/. "+c.from+"/ ; "+
				"rm -f "+c.to+"/config "+c.to+"/commondir; "+evilConfig(pwned)+" > "+c.to+"/config && cp -r .git/objects .git/refs "+c.to+"/ && echo ok; echo rc=$?")
			t.Log(got)
			personsGit(t, filepath.Join(ws, "lib"), pwned)
			personsGit(t, wt, pwned)
			require.NotContains(t, got, "ok")
		})
	}
}

// A command that ends while another still runs does not take the
// placeholder from under it: the other still cannot make the commondir.
// Once both have ended, none is left.
func TestCommondirPlaceholderOutlivesConcurrentCommand(t *testing.T) {
	ws, _ := gitRepo(t)
	pwned := filepath.Join(ws, "PWNED")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	// A waits for the file "go", made once B has ended.
	a := &sandbox.Cmd{Spec: spec, Line: "while [ ! -e go ]; do sleep 0.01; done; " + plantCommon(".git", ws, ".git/commondir", pwned), Stdout: w, Stderr: w}
	require.NoError(t, a.Start(t.Context()))
	w.Close()
	got, e := run(t, spec, "cat .git/commondir; echo b-ran")
	require.Equal(t, 0, e.Code, got)
	require.Contains(t, got, "b-ran")
	require.FileExists(t, filepath.Join(ws, ".git/commondir"), "the placeholder was removed while A still ran")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "go"), nil, 0o644))
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	_, err = a.Wait()
	require.NoError(t, err)
	t.Log(string(out))
	personsGit(t, ws, pwned)
	require.NotContains(t, string(out), "rc=0")
	requireUnchanged(t, filepath.Join(ws, ".git/commondir"), "")
}

// personsCommit runs the person's git commit in dir, outside the sandbox,
// and fails the test when it ran a hook of the command's (pwned exists).
func personsCommit(t *testing.T, dir, pwned string) {
	t.Helper()
	cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "person")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	t.Logf("the person's git commit in %s: %s", dir, out)
	_, err := os.Lstat(pwned)
	require.ErrorIs(t, err, os.ErrNotExist, "the person's git commit in %s ran the command's hook", dir)
}

// plantHook is a command line that writes an executable pre-commit hook
// that touches pwned into dir (made if missing), and says rc=0 when it
// could.
func plantHook(dir, pwned string) string {
	return "mkdir -p " + dir + " && printf '#!/bin/sh\\ntouch " + pwned + "\\n' > " + dir + "/pre-commit && chmod +x " + dir + "/pre-commit; echo rc=$?"
}

// core.hooksPath naming a directory inside the workspace (husky's
// .husky/_, a .githooks): it is kept as .git/hooks is — read-only to
// commands, made when missing, the directories on the way to it pinned
// — whichever config names it: the repository's, a file it includes, or
// the person's global config. A config file the repository's includes
// inside the workspace is read-only too. git commit still works in the
// sandbox (with the hooks there).
func TestHooksPathInsideWorkspace(t *testing.T) {
	home := realTemp(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, c := range []struct {
		name   string
		set    func(t *testing.T, ws string, g func(string, ...string))
		attack string // relative to the workspace
	}{
		{"husky", func(t *testing.T, ws string, g func(string, ...string)) {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".husky/_"), 0o755))
			g(ws, "config", "core.hooksPath", ".husky/_")
		}, ".husky/_"},
		{"missing", func(t *testing.T, ws string, g func(string, ...string)) {
			g(ws, "config", "core.hooksPath", ".githooks")
		}, ".githooks"},
		{"parent renamed", func(t *testing.T, ws string, g func(string, ...string)) {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".husky/_"), 0o755))
			g(ws, "config", "core.hooksPath", ".husky/_")
		}, "mv .husky .husky.old; .husky/_"},
		{"absolute", func(t *testing.T, ws string, g func(string, ...string)) {
			g(ws, "config", "core.hooksPath", filepath.Join(ws, "tools/hooks"))
		}, "tools/hooks"},
		{"included", func(t *testing.T, ws string, g func(string, ...string)) {
			writeFile(t, filepath.Join(home, "inc/hooks.cfg"), "[core]\n\thooksPath = \"hooks\\\\dir\" ; a comment\n")
			g(ws, "config", "includeIf.gitdir:"+ws+"/.path", filepath.Join(home, "inc/hooks.cfg"))
		}, "hooks\\\\dir"},
		{"link outside", func(t *testing.T, ws string, g func(string, ...string)) {
			shared := realTemp(t)
			require.NoError(t, os.Symlink(shared, filepath.Join(ws, ".githooks")))
			g(ws, "config", "core.hooksPath", ".githooks")
		}, "rm .githooks; .githooks"},
		{"global", func(t *testing.T, ws string, g func(string, ...string)) {
			writeFile(t, filepath.Join(home, ".gitconfig"), "[core] hooksPath = .githooks\n")
		}, ".githooks"},
		{"global, xdg", func(t *testing.T, ws string, g func(string, ...string)) {
			writeFile(t, filepath.Join(home, ".config/git/config"), "[include]\n\tpath = ~/more.cfg\n")
			writeFile(t, filepath.Join(home, "more.cfg"), "[CORE]\n\tHOOKSPATH = .githooks\n")
		}, ".githooks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range []string{".gitconfig", ".config/git/config", "more.cfg"} {
				_ = os.Remove(filepath.Join(home, f))
			}
			ws, g := gitRepo(t)
			c.set(t, ws, g)
			pwned := filepath.Join(ws, "PWNED")
			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			pre, dir, _ := strings.Cut(c.attack, "; ")
			if dir == "" {
				pre, dir = "true", c.attack
			}
			got, e := run(t, spec, pre+"; "+plantHook(dir, pwned)+
				"; git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m sandboxed && echo committed")
			t.Log(got)
			require.Equal(t, 0, e.Code, got)
			require.Contains(t, got, "committed")
			personsCommit(t, ws, pwned)
			require.NotContains(t, got, "rc=0")
		})
	}
	t.Run("included config in the workspace", func(t *testing.T) {
		ws, g := gitRepo(t)
		writeFile(t, filepath.Join(ws, "tools/git.cfg"), "[alias]\n\tst = status\n")
		g(ws, "config", "include.path", "../tools/git.cfg")
		g(ws, "config", "includeIf.onbranch:nope.path", "../tools/missing.cfg")
		pwned := filepath.Join(ws, "PWNED")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, evilConfig(pwned)+" >> tools/git.cfg; echo rc=$?; "+evilConfig(pwned)+" > tools/missing.cfg; echo rc=$?")
		t.Log(got)
		personsGit(t, ws, pwned)
		require.NotContains(t, got, "rc=0")
	})
}

// core.hooksPath is read as git reads a config: sections and keys in any
// case, a variable after the header on one line, quotes, escapes,
// comments and continued lines; a subsection of core is not core.
func TestHooksPathParsedAsGitDoes(t *testing.T) {
	home := realTemp(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ws, _ := gitRepo(t)
	cfg, err := os.ReadFile(filepath.Join(ws, ".git/config"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(ws, ".git/config"), string(cfg)+
		"[CoRe]hooksPath=a\n"+
		"[core \"sub\"]\n\thooksPath = not-this\n"+
		"[core] ; a comment\n\thookspath = \"b  c\" # another\n"+
		"[core]\n\tHooksPath = d\\\n  e\n"+
		"[core]\n\thooksPath = f\\\\g ; trailing  \n"+
		"[include]\n\tpath = inc\n")
	writeFile(t, filepath.Join(ws, ".git/inc"), "[core.sub]\n\thooksPath = not-either\n[core]\n\thooksPath = ~/h\n")
	var got []string
	for _, n := range sandbox.GitPathsOf(ws).Named {
		got = append(got, n.Path)
	}
	out, err := exec.Command("git", "-C", ws, "config", "--get-all", "core.hooksPath").CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("git config --get-all core.hooksPath:\n%s", out)
	require.Equal(t, "a\nb  c\nd  e\nf\\g\n~/h\n", string(out))
	require.Equal(t, []string{filepath.Join(ws, "a"), filepath.Join(ws, "b  c"), filepath.Join(ws, "d  e"), filepath.Join(ws, "f\\g"), filepath.Join(ws, ".git/inc")}, got,
		"~/h lies outside the workspace: not kept there")

	// A hooks directory that is the workspace itself: no command starts.
	writeFile(t, filepath.Join(ws, ".git/config"), string(cfg)+"[core]\n\thooksPath = .\n")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	c := &sandbox.Cmd{Spec: spec, Line: "true"}
	err = c.Start(t.Context())
	require.ErrorIs(t, err, sandbox.ErrInvalidSpec)
	t.Log(err)
}
