package tools_test

// The review of branch sbx10 (a .git that is a symbolic link): the file
// tools' side, each test an attack it found, kept as a regression test.

import (
	"os"
	"os/exec"
	"path/filepath"
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
