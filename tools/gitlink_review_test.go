package tools_test

// The review of branch sbx10 (a .git that is a symbolic link): the file
// tools' side, each test an attack it found, kept as a regression test.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/tools"
)

// rev-sbx10: a .git FILE naming a git directory inside the workspace
// (git follows it: hooks there run in the person's git). The sandbox
// keeps that directory (TestCmdGitFileInside); write_file must too.
func TestRevGitFileInsideProtected(t *testing.T) {
	s, root := workspace(t, map[string]string{".git": "gitdir: meta\n", "meta/HEAD": "ref: refs/heads/main\n", "meta/config": "[core]\n"})
	_ = root
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "meta/hooks/pre-commit", "content": "touch PWNED"}`, `meta`)
}

// A .git link to a file that names a git directory inside the workspace.
func TestRevGitLinkToFileProtected(t *testing.T) {
	s, root := workspace(t, map[string]string{"notes": "gitdir: meta\n", "meta/HEAD": "ref: refs/heads/main\n"})
	symlinks(t, root, map[string]string{".git": "notes"})
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "meta/hooks/pre-commit", "content": "touch PWNED"}`, `meta`)
}

// A .git link that leaves the root and comes back (../ROOT/meta) or is
// absolute: git follows it to meta inside the workspace.
func TestRevGitLinkOutAndBackProtected(t *testing.T) {
	for _, abs := range []bool{false, true} {
		t.Run(map[bool]string{false: "relative", true: "absolute"}[abs], func(t *testing.T) {
			s, root := workspace(t, map[string]string{"meta/HEAD": "ref: refs/heads/main\n", "meta/config": "[core]\n"})
			target := "../" + filepath.Base(root) + "/meta"
			if abs {
				target = filepath.Join(root, "meta")
			}
			symlinks(t, root, map[string]string{".git": target})
			requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "meta/hooks/pre-commit", "content": "touch PWNED"}`, `meta`)
		})
	}
}

// Same escape-and-return for a .harness link (pre-existing on main), and
// an absolute one, and one to a store not made yet.
func TestRevStoreLinkOutAndBackProtected(t *testing.T) {
	for _, form := range []string{"relative", "absolute", "missing"} {
		t.Run(form, func(t *testing.T) {
			s, root := workspace(t, map[string]string{"store/project.json": "{}\n"})
			target := "../" + filepath.Base(root) + "/store"
			switch form {
			case "absolute":
				target = filepath.Join(root, "store")
			case "missing":
				target = filepath.Join(root, "later")
			}
			symlinks(t, root, map[string]string{".harness": target})
			dir := filepath.Base(target)
			requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "`+dir+`/project.json", "content": "{\"approve\":\"all\"}"}`, dir)
		})
	}
}

// A .git file that names a directory outside the root protects nothing
// inside it: a write to a directory that looks like a git directory but
// is not the one git takes goes through.
func TestRevGitFileOutsideWrites(t *testing.T) {
	s, root := workspace(t, map[string]string{".git": "gitdir: /etc\n", "meta/HEAD": "x\n"})
	rep := call(t, s, tools.WriteFile, `{"path": "meta/hooks/x", "content": "ok"}`)
	require.Empty(t, rep.Error)
	data, err := os.ReadFile(filepath.Join(root, "meta/hooks/x"))
	require.NoError(t, err)
	require.Equal(t, "ok", string(data))
}

// End to end: git init --separate-git-dir=meta (git writes ".git" as a
// file "gitdir: /ROOT/meta"); the model's edit_file on meta/config; the
// person's git status runs what it named.
func TestRevSeparateGitDirEndToEnd(t *testing.T) {
	s, root := workspace(t, map[string]string{"a.txt": "a\n"})
	out, err := exec.Command("git", "-C", root, "init", "-q", "--separate-git-dir="+filepath.Join(root, "meta")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	cfg, err := os.ReadFile(filepath.Join(root, "meta/config"))
	require.NoError(t, err)
	rep := call(t, s, tools.WriteFile, js(t, map[string]string{"path": "meta/config", "content": string(cfg) + "\tfsmonitor = \"touch PWNED; false\"\n"}))
	t.Logf("write_file meta/config: %s %s", rep.Status, rep.Error)
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = root
	out, _ = cmd.CombinedOutput()
	t.Logf("person's git status: %s", out)
	require.NoFileExists(t, filepath.Join(root, "PWNED"), "the person's git status ran what write_file put in meta/config")
}

// rev-sbx11: a control entry of .git that is a symbolic link into the
// workspace (a dotfiles manager's .git/config -> ../dot/gitconfig, a
// person's shared hooks, a commondir link): write_file refuses where it
// leads, existing or not, as the sandbox's read-only bind does, and the
// person's git never runs what a write there would name.
func TestRevControlLinkTargetsProtected(t *testing.T) {
	s, root := workspace(t, map[string]string{"a.txt": "a\n", "free.txt": "f\n"})
	out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dot"), 0o755))
	require.NoError(t, os.Rename(filepath.Join(root, ".git/config"), filepath.Join(root, "dot/gitconfig")))
	require.NoError(t, os.Symlink("../dot/gitconfig", filepath.Join(root, ".git/config")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "shared-hooks"), 0o755))
	require.NoError(t, os.RemoveAll(filepath.Join(root, ".git/hooks")))
	require.NoError(t, os.Symlink("../shared-hooks", filepath.Join(root, ".git/hooks")))
	// info leads nowhere yet: what it names is protected all the same.
	require.NoError(t, os.RemoveAll(filepath.Join(root, ".git/info")))
	require.NoError(t, os.Symlink("../later-info", filepath.Join(root, ".git/info")))
	cfg, err := os.ReadFile(filepath.Join(root, "dot/gitconfig"))
	require.NoError(t, err)

	requireRefusedWrite(t, s, root, tools.WriteFile, js(t, map[string]string{"path": "dot/gitconfig", "content": string(cfg) + "\tfsmonitor = \"touch PWNED; false\"\n"}), `dot/gitconfig`)
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "shared-hooks/post-checkout", "content": "touch PWNED"}`, `shared-hooks`)
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "later-info/exclude", "content": "x"}`, `later-info`)
	require.NoDirExists(t, filepath.Join(root, "later-info"))
	rep := call(t, s, tools.WriteFile, `{"path": "free.txt", "content": "ok\n"}`)
	require.Equal(t, "", rep.Error)
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = root
	out, _ = cmd.CombinedOutput()
	t.Logf("git status: %s", out)
	require.NoFileExists(t, filepath.Join(root, "PWNED"))

	// A commondir that is a link to a file in the workspace: that file
	// names the common directory, where the config is.
	s, root = workspace(t, map[string]string{"a.txt": "a\n", "cd.txt": "../c1\n"})
	out, err = exec.Command("git", "-C", root, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.Mkdir(filepath.Join(root, "c1"), 0o755))
	for _, n := range []string{"objects", "refs", "config", "hooks", "info"} {
		require.NoError(t, os.Rename(filepath.Join(root, ".git", n), filepath.Join(root, "c1", n)))
	}
	require.NoError(t, os.Symlink("../cd.txt", filepath.Join(root, ".git/commondir")))
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "cd.txt", "content": "../evil\n"}`, `cd.txt`)
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "c1/config", "content": "x"}`, `c1`)
}

// sbx13: a hooks directory core.hooksPath names inside the workspace
// (husky's .husky/_), in the repository's config, a file it includes or
// the person's global config, and a config file the repository's config
// includes inside the workspace: write_file and edit_file refuse them as
// .git/hooks, through a link too, and say why.
func TestHooksPathAndIncludesProtected(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	git := map[string]string{".git/HEAD": "ref: refs/heads/main\n"}
	with := func(more map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range git {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}
	t.Run("local", func(t *testing.T) {
		s, root := workspace(t, with(map[string]string{".git/config": "[core]\n\thooksPath = .husky/_\n", ".husky/_/h": "x\n"}))
		requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": ".husky/_/pre-commit", "content": "touch PWNED"}`, "the hooks directory core.hooksPath names in "+filepath.Join(root, ".git/config"))
		requireRefusedWrite(t, s, root, tools.EditFile, `{"path": ".husky/_/h", "old": "x", "new": "touch PWNED"}`, ".husky/_")
		symlinks(t, root, map[string]string{"h": ".husky/_"})
		requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "h/pre-commit", "content": "touch PWNED"}`, "core.hooksPath")
		// Missing: refused all the same.
		requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": ".husky/_/sub/x", "content": "touch PWNED"}`, "core.hooksPath")
	})
	t.Run("missing", func(t *testing.T) {
		s, root := workspace(t, with(map[string]string{".git/config": "[core]\n\thooksPath = .githooks\n"}))
		requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": ".githooks/pre-commit", "content": "touch PWNED"}`, "core.hooksPath")
	})
	t.Run("global", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\thooksPath = .githooks\n"), 0o644))
		defer os.Remove(filepath.Join(home, ".gitconfig"))
		s, root := workspace(t, with(map[string]string{".git/config": "[core]\n"}))
		requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": ".githooks/pre-commit", "content": "touch PWNED"}`, "core.hooksPath names in "+filepath.Join(home, ".gitconfig"))
	})
	t.Run("included config", func(t *testing.T) {
		s, root := workspace(t, with(map[string]string{".git/config": "[include]\n\tpath = ../tools/git.cfg\n", "tools/git.cfg": "[alias]\n"}))
		requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "tools/git.cfg", "content": "[core]\n\tfsmonitor = touch PWNED\n"}`, "a config file "+filepath.Join(root, ".git/config")+" includes")
		requireRefusedWrite(t, s, root, tools.EditFile, `{"path": "tools/git.cfg", "old": "[alias]", "new": "[core]\n\tfsmonitor = touch PWNED"}`, "tools/git.cfg")
	})
	t.Run("plain files still written", func(t *testing.T) {
		s, root := workspace(t, with(map[string]string{".git/config": "[core]\n\thooksPath = .husky/_\n"}))
		rep := call(t, s, tools.WriteFile, `{"path": ".husky/other", "content": "ok"}`)
		require.Empty(t, rep.Error)
		data, err := os.ReadFile(filepath.Join(root, ".husky/other"))
		require.NoError(t, err)
		require.Equal(t, "ok", string(data))
	})
}

// sbx13: a nested repository whose .git is a link, or a file
// ("gitdir: ..."), to a git directory elsewhere in the workspace (git
// init --separate-git-dir in a subdirectory, a submodule made by hand):
// the person's git in that subdirectory reads that git directory's config
// and runs its hooks. write_file and edit_file refuse its control entries
// as they refuse the top .git's, and the person's git runs nothing the
// model wrote.
func TestNestedGitLinkTargetsProtected(t *testing.T) {
	for _, form := range []string{"file", "link"} {
		t.Run(form, func(t *testing.T) {
			s, root := workspace(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "meta/README": "m\n"})
			for _, args := range [][]string{{"-C", root, "init", "-q"}, {"-C", filepath.Join(root, "sub"), "init", "-q", "--separate-git-dir=" + filepath.Join(root, "meta/subgit")}} {
				out, err := exec.Command("git", args...).CombinedOutput()
				require.NoError(t, err, "%s", out)
			}
			if form == "link" {
				require.NoError(t, os.Remove(filepath.Join(root, "sub/.git")))
				require.NoError(t, os.Symlink("../meta/subgit", filepath.Join(root, "sub/.git")))
			}
			cfg, err := os.ReadFile(filepath.Join(root, "meta/subgit/config"))
			require.NoError(t, err)
			var written []string
			evil := string(cfg) + "\tfsmonitor = \"touch " + filepath.Join(root, "PWNED") + "; false\"\n"
			for _, w := range []struct{ tool, args string }{
				{tools.WriteFile, js(t, map[string]string{"path": "meta/subgit/config", "content": evil})},
				{tools.EditFile, js(t, map[string]string{"path": "meta/subgit/config", "old": "[core]", "new": "[core]\n\tfsmonitor = \"touch " + filepath.Join(root, "PWNED") + "; false\""})},
				{tools.WriteFile, `{"path": "meta/subgit/hooks/pre-commit", "content": "touch PWNED"}`},
				{tools.WriteFile, `{"path": "meta/subgit/info/attributes", "content": "* filter=x"}`},
				{tools.WriteFile, `{"path": "meta/subgit/commondir", "content": "."}`}, // harmless, for the test's git status
			} {
				rep := call(t, s, w.tool, w.args)
				t.Logf("%s: %s %s", w.tool, rep.Status, rep.Error)
				if !strings.Contains(rep.Error, "a control entry of the git directory meta/subgit") {
					written = append(written, w.tool+" "+w.args)
				}
			}
			cmd := exec.Command("git", "status", "--short")
			cmd.Dir = filepath.Join(root, "sub")
			out, _ := cmd.CombinedOutput()
			t.Logf("the person's git status in sub: %s", out)
			require.NoFileExists(t, filepath.Join(root, "PWNED"), "the person's git status ran what a file tool wrote")
			require.Empty(t, written, "not refused")
			// The rest of the git directory's neighbourhood is written.
			rep := call(t, s, tools.WriteFile, `{"path": "meta/notes.txt", "content": "ok"}`)
			require.Empty(t, rep.Error)
		})
	}
}
