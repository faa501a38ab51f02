package sandbox_test

// sbx13: the git-control holes the sandbox still left open, each shown
// with a real sandboxed command and then the person's own git.

import (
	"io"
	"os"
	"os/exec"
	osuser "os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
			if strings.HasPrefix(c.from, ".git/modules") {
				// A worktree's git directory may be written (its HEAD,
				// index and logs), but its commondir stays: git never
				// reads a config there.
				require.NotContains(t, got, "ok")
			}
		})
	}
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
	home := personHome(t)
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
	personHome(t)
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

// What rev-sbx13 found the Go reader took otherwise than git 2.39: a
// UTF-8 byte order mark before the first section, a backslash before CR
// LF (git joins the lines), a NUL in a value (git ends the value there).
// Each is read as git reads it.
func TestHooksPathParsedAsGitDoesOddBytes(t *testing.T) {
	personHome(t)
	for name, tc := range map[string]struct{ config, want string }{
		"byte order mark": {"\xef\xbb\xbf[core]\n\thooksPath = bom\n", "bom"},
		"CR LF":           {"[core]\r\n\thooksPath = .git\\\r\nhooks2\r\n", ".githooks2"},
		"NUL":             {"[core]\n\thooksPath = nul\x00rest\n", "nul"},
	} {
		t.Run(name, func(t *testing.T) {
			ws, _ := gitRepo(t)
			writeFile(t, filepath.Join(ws, ".git/inc"), tc.config)
			cmd := exec.Command("git", "-C", ws, "config", "include.path", "inc")
			require.NoError(t, cmd.Run())
			out, _ := exec.Command("git", "-C", ws, "config", "--get-all", "core.hooksPath").CombinedOutput()
			t.Logf("git says %q", out)
			var got []string
			for _, n := range sandbox.GitPathsOf(ws).Named {
				if n.Hooks {
					got = append(got, n.Path)
				}
			}
			require.Equal(t, []string{filepath.Join(ws, tc.want)}, got)
		})
	}
}

// A workspace that is a subdirectory of a repository (harness run in a
// monorepo's frontend/): the enclosing repository's config names
// core.hooksPath frontend/.husky/_, inside the workspace. A command
// cannot write a hook there that the person's commit would run.
func TestHooksPathOfAnEnclosingRepository(t *testing.T) {
	home := realTemp(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	repo, _ := gitRepo(t)
	ws := filepath.Join(repo, "frontend")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".husky", "_"), 0o755))
	cmd := exec.Command("git", "-C", repo, "config", "core.hooksPath", "frontend/.husky/_")
	require.NoError(t, cmd.Run())
	pwned := filepath.Join(repo, "PWNED")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, plantHook(".husky/_", pwned))
	t.Log(got)
	require.Equal(t, 0, e.Code, got)
	require.NotContains(t, got, "rc=0")
	personsCommit(t, ws, pwned)
}

// From the main worktree, what git reads in a linked worktree's git
// directory to find its config is read-only, and the rest is not: git gc
// (which packs the worktrees' refs and expires their reflogs) still
// works; git worktree add does not (.git/worktrees is sealed).
func TestWorktreeHousekeepingInTheSandbox(t *testing.T) {
	ws, git := gitRepo(t)
	git(ws, "worktree", "add", "-q", filepath.Join(realTemp(t), "other"))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, e := run(t, spec, "git gc -q && echo gc-ok; git reflog expire --all && echo expire-ok; "+
		"git worktree add -q .wt/new && echo add-ok; "+
		"cd "+ws+"; for f in .git/worktrees/other/commondir .git/worktrees/other/gitdir; do echo x > $f && echo wrote-$f; done; true")
	t.Log(got)
	require.Equal(t, 0, e.Code, got)
	for _, ok := range []string{"gc-ok", "expire-ok"} {
		require.Contains(t, got, ok)
	}
	require.NotContains(t, got, "add-ok", "git worktree add inside a command: .git/worktrees is sealed")
	require.NotContains(t, got, "wrote-")
}

// The enclosing repository's git directory lies inside the workspace (its
// .git a file or a link leading there): kept as .git is (rev-sbx13b).
func TestEnclosingGitDirInsideTheWorkspace(t *testing.T) {
	for _, kind := range []string{"file", "link"} {
		t.Run(kind, func(t *testing.T) {
			p := realTemp(t)
			ws := filepath.Join(p, "ws")
			gd := filepath.Join(ws, "gd")
			require.NoError(t, os.MkdirAll(ws, 0o755))
			cmd := exec.Command("git", "init", "-q", "--separate-git-dir="+gd, p)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			if kind == "link" {
				require.NoError(t, os.Remove(filepath.Join(p, ".git")))
				require.NoError(t, os.Symlink(gd, filepath.Join(p, ".git")))
			}
			pwned := filepath.Join(p, "PWNED")
			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			got, _ := run(t, spec, "cat gd/config >/dev/null; "+evilConfig(pwned)+" >> gd/config; echo rc=$?")
			t.Log(got)
			personsGit(t, ws, pwned)
		})
	}
}

// A .git directory above the workspace that is not a repository: git goes
// on up, and so does the search for the configs it reads (rev-sbx13b).
func TestEnclosingRepositoryPastANonRepository(t *testing.T) {
	home := realTemp(t)
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	gp, g := gitRepo(t)
	p := filepath.Join(gp, "p")
	ws := filepath.Join(p, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(p, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(ws, 0o755))
	g(gp, "config", "core.hooksPath", "p/ws/.husky")
	pwned := filepath.Join(gp, "PWNED")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, _ := run(t, spec, plantHook(".husky", pwned))
	t.Log(got)
	personsCommit(t, ws, pwned)
}

// core.hooksPath spelled ~USER/… with the person's own user name: that
// home, as git takes it (rev-sbx13b).
func TestHooksPathSpelledTildeUser(t *testing.T) {
	// The user running the test, and their home as the system's user
	// database has it (what "~user" names, whatever $HOME and $USER say).
	me, err := osuser.Current()
	require.NoError(t, err)
	home, user := me.HomeDir, me.Username
	base, err := os.MkdirTemp(home, "harness-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	g := func(dir string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.MkdirAll(ws, 0o755))
	g(ws, "init", "-q")
	g(ws, "commit", "-q", "--allow-empty", "-m", "one")
	rel, _ := filepath.Rel(home, ws)
	g(ws, "config", "core.hooksPath", "~"+user+"/"+rel+"/.githooks")
	pwned := filepath.Join(ws, "PWNED")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, _ := run(t, spec, plantHook(".githooks", pwned))
	t.Log(got)
	personsCommit(t, ws, pwned)
}

// A linked worktree added while a command runs — by the harness, for a
// delegation, beside a sibling whose command runs; the command's
// workspace the main worktree, or a linked one — is out of the command's
// reach: it cannot write the new worktree's commondir, and the person's
// git there runs nothing of it (rev-sbx13b: it could, since what is
// read-only is taken when a command starts).
func TestWorktreeAddedWhileACommandRuns(t *testing.T) {
	for _, linked := range []bool{false, true} {
		t.Run(map[bool]string{false: "main worktree", true: "linked worktree"}[linked], func(t *testing.T) {
			m, g := gitRepo(t)
			ws := m
			if linked {
				ws = filepath.Join(realTemp(t), "child1")
				g(m, "worktree", "add", "-q", ws)
			}
			pwned := filepath.Join(m, "PWNED")
			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			cd := filepath.Join(m, ".git/worktrees/late/commondir")
			line := "touch ready; for i in $(seq 1200); do [ -e " + cd + " ] && break; sleep 0.1; done; " +
				plantCommon(filepath.Join(m, ".git"), ws, cd, pwned)
			c := &sandbox.Cmd{Spec: spec, Line: line, Stdout: w, Stderr: w}
			require.NoError(t, c.Start(t.Context()))
			w.Close()
			require.Eventually(t, func() bool {
				_, err := os.Stat(filepath.Join(ws, "ready"))
				return err == nil
			}, 60*time.Second, 20*time.Millisecond)
			late := filepath.Join(realTemp(t), "late")
			g(m, "worktree", "add", "-q", late)
			out, err := io.ReadAll(r)
			require.NoError(t, err)
			_, err = c.Wait()
			require.NoError(t, err)
			t.Log(string(out))
			require.NotContains(t, string(out), "rc=0")
			personsGit(t, late, pwned)
		})
	}
}

// The person's global git config inside the workspace — a workspace that
// is the home directory, or holds $XDG_CONFIG_HOME — is kept as a config
// the repository includes is: read-only to commands, made empty when
// missing. Before, a command could write an fsmonitor into ~/.gitconfig
// that the person's git then ran in every repository.
func TestGlobalConfigInsideTheWorkspace(t *testing.T) {
	for _, c := range []struct {
		name, file string // file relative to the workspace
		exists     bool
	}{
		{"home is the workspace, no .gitconfig", ".gitconfig", false},
		{"home is the workspace, a .gitconfig", ".gitconfig", true},
		{"XDG_CONFIG_HOME in the workspace", ".config/git/config", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, g := gitRepo(t)
			t.Setenv("HOME", ws)
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			if c.file == ".gitconfig" {
				t.Setenv("XDG_CONFIG_HOME", filepath.Join(realTemp(t), "xdg"))
			} else {
				t.Setenv("XDG_CONFIG_HOME", filepath.Join(ws, ".config"))
			}
			if c.exists {
				writeFile(t, filepath.Join(ws, c.file), "[user]\n\tname = person\n")
			}
			before, _ := os.ReadFile(filepath.Join(ws, c.file))
			pwned := filepath.Join(ws, "PWNED")
			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			got, _ := run(t, spec, "mkdir -p "+filepath.Dir(c.file)+"; printf '[core]\\n\\tfsmonitor = \"touch "+pwned+"; false\"\\n' >> "+c.file+"; echo rc=$?")
			require.NotContains(t, got, "rc=0", "the command wrote %s", c.file)
			after, _ := os.ReadFile(filepath.Join(ws, c.file))
			require.Equal(t, string(before), string(after))
			g(ws, "status", "--porcelain")
			_, err = os.Lstat(pwned)
			require.ErrorIs(t, err, os.ErrNotExist, "the person's git status ran the command's fsmonitor")
		})
	}
}

// A submodule's own core.hooksPath (husky installed in the submodule)
// naming a directory inside the workspace is kept as the repository's is:
// a command cannot plant a hook there that the person's git commit in the
// submodule runs.
func TestHooksPathOfASubmodule(t *testing.T) {
	personHome(t)
	lib, g := gitRepo(t)
	ws, _ := gitRepo(t)
	g(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	g(ws, "commit", "-q", "-m", "lib")
	sub := filepath.Join(ws, "lib")
	g(sub, "config", "core.hooksPath", ".husky/_")
	pwned := filepath.Join(ws, "PWNED")
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, _ := run(t, spec, plantHook("lib/.husky/_", pwned))
	require.NotContains(t, got, "rc=0", "the command planted a hook in the submodule's hooks directory")
	personsCommit(t, sub, pwned)
}

// core.hooksPath "a/../.githooks": git leaves the ".." to the system,
// which follows a, so a command that made a a link (to sub/x) would have
// git take sub/.githooks, which it can write. The a on the way is kept a
// directory (pinned; made when missing) whether or not it exists.
func TestHooksPathThroughDotDot(t *testing.T) {
	personHome(t)
	for _, exists := range []bool{true, false} {
		t.Run(map[bool]string{true: "a exists", false: "a missing"}[exists], func(t *testing.T) {
			ws, g := gitRepo(t)
			if exists {
				require.NoError(t, os.MkdirAll(filepath.Join(ws, "a"), 0o755))
				writeFile(t, filepath.Join(ws, "a", "keep"), "x")
			}
			g(ws, "config", "core.hooksPath", "a/../.githooks")
			pwned := filepath.Join(ws, "PWNED")
			spec, err := sandbox.Default(ws, "")
			require.NoError(t, err)
			got, _ := run(t, spec, "rm -rf a; mkdir -p sub/x; ln -s sub/x a; "+plantHook("sub/.githooks", pwned))
			t.Log(got)
			personsCommit(t, ws, pwned)
		})
	}
}

// The repository's own config.worktree is made (empty) and read-only
// whether or not extensions.worktreeConfig is on yet: git sparse-checkout
// init turns it on later, and the person's git would then read a
// config.worktree a command wrote before (rev-readme14: the fsmonitor
// ran). Spec.Prepare makes it before any command.
func TestWorktreeConfigKeptBeforeTheExtension(t *testing.T) {
	personHome(t)
	ws, g := gitRepo(t)
	cw := filepath.Join(ws, ".git", "config.worktree")
	require.NoFileExists(t, cw)
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	spec.Prepare()
	fi, err := os.Stat(cw)
	require.NoError(t, err, "Prepare makes it")
	require.Zero(t, fi.Size())
	pwned := filepath.Join(ws, "PWNED")
	got, _ := run(t, spec, "printf '[core]\\n\\tfsmonitor = \"touch "+pwned+"; false\"\\n' >> .git/config.worktree; echo rc=$?")
	require.NotContains(t, got, "rc=0")
	g(ws, "sparse-checkout", "init", "--no-cone")
	g(ws, "status")
	_, err = os.Lstat(pwned)
	require.ErrorIs(t, err, os.ErrNotExist, "the person's git status ran the command's fsmonitor")
}

// personHome gives the test a person of its own: an empty home directory
// (returned), its XDG config directory in it, and no system git config,
// so that no git config of the machine's takes part.
func personHome(t *testing.T) string {
	t.Helper()
	home := realTemp(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return home
}
