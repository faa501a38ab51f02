package tools_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// symlinks makes the links (link → target) in root.
func symlinks(t *testing.T, root string, links map[string]string) {
	t.Helper()
	for link, target := range links {
		full := filepath.Join(root, filepath.FromSlash(link))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.Symlink(filepath.FromSlash(target), full))
	}
}

// tree is every regular file under root (symlinks not followed), by
// slash-separated path, with its content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		out[filepath.ToSlash(rel)] = readFile(t, root, rel)
		return nil
	}))
	return out
}

// requireRefusedWrite runs a write_file or edit_file call that must be
// refused, by both Check and Execute, for reaching a protected entry, and
// checks that no file changed.
func requireRefusedWrite(t *testing.T, s *tools.Set, root, name, args, want string) {
	t.Helper()
	before := tree(t, root)
	tool, _ := s.Lookup(name)
	_, err := tool.Check([]byte(args))
	require.Error(t, err)
	require.Contains(t, err.Error(), want)
	rep := call(t, s, name, args)
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Contains(t, rep.Error, want)
	require.Contains(t, rep.Error, "which the runtime keeps")
	require.Equal(t, before, tree(t, root), "a refused write changed the workspace")
}

// write_file and edit_file refuse .git and the root's .harness reached
// through symlinks that stay inside the workspace — which os.Root follows.
func TestProtectedThroughSymlinks(t *testing.T) {
	s, root := workspace(t, map[string]string{
		".git/config":          "[core]\n",
		".git/hooks/README":    "hooks\n",
		".harness/config.json": "{}\n",
		"sub/.git/config":      "[sub]\n",
		"sub/file.txt":         "plain\n",
	})
	symlinks(t, root, map[string]string{
		"g":         ".git",               // a symlinked .git
		"hz":        ".harness",           // a symlinked .harness
		"cfg":       ".git/config",        // a symlinked file inside .git
		"a/b/up":    "../../.git",         // nested, climbing back up
		"chain1":    "chain2",             // a chain of links
		"chain2":    "g",                  // ... ending at a link to .git
		"dot":       ".",                  // the root again: dot/.harness is the root's .harness
		"sublink":   "sub",                // a directory whose .git is nested
		"subgit":    "sub/.git",           // a nested .git, symlinked
		"a/deep":    "../sublink/.git/..", // through a link, into sub/.git and out: sub
		"a/via-sub": "../sublink/.git",    // a nested .git through two links
	})
	for _, tc := range []struct{ name, args, want string }{
		{tools.WriteFile, `{"path": "g/hooks/pre-commit", "content": "x"}`, `path "g/hooks/pre-commit" leads through a symlink to .git/hooks/pre-commit, inside .git`},
		{tools.WriteFile, `{"path": "g/config", "content": "x"}`, `inside .git`},
		{tools.EditFile, `{"path": "g/config", "old": "[core]", "new": "[x]"}`, `inside .git`},
		{tools.WriteFile, `{"path": "hz/config.json", "content": "x"}`, `path "hz/config.json" leads through a symlink to .harness/config.json, inside .harness`},
		{tools.EditFile, `{"path": "hz/config.json", "old": "{}", "new": "[]"}`, `inside .harness`},
		{tools.WriteFile, `{"path": "hz/new/file", "content": "x"}`, `inside .harness`},
		{tools.WriteFile, `{"path": "cfg", "content": "x"}`, `leads through a symlink to .git/config, inside .git`},
		{tools.EditFile, `{"path": "cfg", "old": "[core]", "new": "[x]"}`, `inside .git`},
		{tools.WriteFile, `{"path": "a/b/up/hooks/post-checkout", "content": "x"}`, `inside .git`},
		{tools.WriteFile, `{"path": "chain1/hooks/pre-push", "content": "x"}`, `inside .git`},
		// A .harness is refused at any depth as written, before its link
		// is followed (it was refused, through the link, at the root).
		{tools.WriteFile, `{"path": "dot/.harness/db", "content": "x"}`, `path "dot/.harness/db" is inside dot/.harness`},
		{tools.WriteFile, `{"path": "subgit/hooks/pre-commit", "content": "x"}`, `inside sub/.git`},
		{tools.EditFile, `{"path": "subgit/config", "old": "[sub]", "new": "[x]"}`, `inside sub/.git`},
		{tools.WriteFile, `{"path": "a/via-sub/config", "content": "x"}`, `inside sub/.git`},
	} {
		t.Run(tc.name+" "+tc.args, func(t *testing.T) {
			requireRefusedWrite(t, s, root, tc.name, tc.args, tc.want)
		})
	}
	require.NoDirExists(t, filepath.Join(root, ".harness", "new"))

	// Links that lead somewhere ordinary still work, and write where they
	// lead.
	for _, tc := range []struct{ args, file, want string }{
		{`{"path": "sublink/new.txt", "content": "new\n"}`, "sub/new.txt", "new\n"},
		{`{"path": "a/deep/deep.txt", "content": "deep\n"}`, "sub/deep.txt", "deep\n"},
		{`{"path": "dot/top.txt", "content": "top\n"}`, "top.txt", "top\n"},
	} {
		rep := call(t, s, tools.WriteFile, tc.args)
		require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
		require.Equal(t, tc.want, readFile(t, root, tc.file))
	}
	rep := call(t, s, tools.EditFile, `{"path": "sublink/file.txt", "old": "plain", "new": "edited"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "edited\n", readFile(t, root, "sub/file.txt"))
}

// A .harness that is itself a symlink protects where it leads.
func TestProtectedStoreIsASymlink(t *testing.T) {
	s, root := workspace(t, map[string]string{"store/db": "db\n"})
	symlinks(t, root, map[string]string{".harness": "store"})
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "store/db", "content": "x"}`, `inside store`)
	requireRefusedWrite(t, s, root, tools.EditFile, `{"path": ".harness/db", "old": "db", "new": "x"}`, `inside .harness`)
}

// A .git that is itself a symlink (git follows it) protects where it
// leads: the directory, one that does not exist yet, or the root's
// control entries when it leads to the root.
func TestProtectedGitIsASymlink(t *testing.T) {
	s, root := workspace(t, map[string]string{"meta/HEAD": "ref: refs/heads/main\n", "meta/config": "[core]\n", "free.txt": "f\n"})
	symlinks(t, root, map[string]string{".git": "meta"})
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "meta/hooks/pre-commit", "content": "x"}`, `inside meta`)
	requireRefusedWrite(t, s, root, tools.EditFile, `{"path": "meta/config", "old": "[core]", "new": "[x]"}`, `inside meta`)
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": ".git/hooks/pre-commit", "content": "x"}`, `inside .git`)

	require.NoError(t, os.Remove(filepath.Join(root, ".git")))
	symlinks(t, root, map[string]string{".git": "later/meta"})
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "later/meta/hooks/pre-commit", "content": "x"}`, `inside later/meta`)
	require.NoDirExists(t, filepath.Join(root, "later"))

	require.NoError(t, os.Remove(filepath.Join(root, ".git")))
	symlinks(t, root, map[string]string{".git": "."})
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "hooks/pre-commit", "content": "x"}`, `inside hooks`)
	requireRefusedWrite(t, s, root, tools.WriteFile, `{"path": "config", "content": "x"}`, `inside config`)
	rep := call(t, s, tools.WriteFile, `{"path": "free.txt", "content": "ok\n"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
}

// WithProtected adds paths refused as .git and .harness are: as written,
// absolute, through a symlink, and where a protected symlink leads; the
// defaults stay.
func TestWithProtected(t *testing.T) {
	files := map[string]string{
		"state/db":         "db\n",
		"nested/keep/x":    "x\n",
		"real-store/y":     "y\n",
		".harness/log":     "log\n",
		".git/config":      "[core]\n",
		"free/ordinary.md": "free\n",
	}
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	symlinks(t, root, map[string]string{"st": "state", "linked-store": "real-store", "hz": ".harness"})
	outside := t.TempDir()
	s, err := tools.New(root,
		tools.WithProtected("state", "nested/keep/"),
		tools.WithProtected(filepath.Join(root, "linked-store"), filepath.Join(outside, "elsewhere")))
	require.NoError(t, err)
	for _, tc := range []struct{ name, args, want string }{
		{tools.WriteFile, `{"path": "state/db", "content": "x"}`, `path "state/db" is inside state`},
		{tools.WriteFile, `{"path": "state", "content": "x"}`, `inside state`},
		{tools.EditFile, `{"path": "state/db", "old": "db", "new": "x"}`, `inside state`},
		{tools.WriteFile, `{"path": "st/db", "content": "x"}`, `leads through a symlink to state/db, inside state`},
		{tools.WriteFile, `{"path": "nested/keep/x", "content": "y"}`, `inside nested/keep`},
		{tools.WriteFile, `{"path": "linked-store/y", "content": "x"}`, `inside linked-store`},
		{tools.WriteFile, `{"path": "real-store/y", "content": "x"}`, `inside real-store`},
		{tools.WriteFile, `{"path": "hz/log", "content": "x"}`, `inside .harness`},
		{tools.WriteFile, `{"path": ".git/config", "content": "x"}`, `inside .git`},
	} {
		t.Run(tc.name+" "+tc.args, func(t *testing.T) {
			requireRefusedWrite(t, s, root, tc.name, tc.args, tc.want)
		})
	}
	rep := call(t, s, tools.WriteFile, `{"path": "free/ordinary.md", "content": "ok\n"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	rep = call(t, s, tools.WriteFile, `{"path": "nested/other", "content": "ok\n"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	// Reading stays allowed.
	rep = call(t, s, tools.ReadFile, `{"path": "st/db"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)

	for _, bad := range []string{"", "../x", ".", root} {
		_, err := tools.New(root, tools.WithProtected(bad))
		require.Error(t, err, "WithProtected(%q)", bad)
		require.Contains(t, err.Error(), "WithProtected")
	}
}

// Any .harness is a store — a later harness run in that directory would
// adopt it, settings and all ({"approve": "all"}) — so write_file and
// edit_file refuse a .harness component at any depth, as written and where
// a path leads; nothing is created on the way to a refused path.
func TestNestedStoreIsRefused(t *testing.T) {
	s, root := workspace(t, map[string]string{
		"sub/.harness/config.json": "{}\n",
		"sub/file.txt":             "f\n",
	})
	symlinks(t, root, map[string]string{
		"store-link": "sub/.harness",         // a link to a nested store
		"sub-link":   "sub",                  // a link to a directory holding one
		"to-be":      "fresh/.harness",       // a dangling link into a store that does not exist yet
		"deep":       "sub/../sub/.harness/", // climbing about on the way
	})
	for _, tc := range []struct{ name, args, want string }{
		{tools.WriteFile, `{"path": "sub/.harness/config.json", "content": "{\"approve\":\"all\"}"}`, `path "sub/.harness/config.json" is inside sub/.harness`},
		{tools.WriteFile, `{"path": "sub/.harness/db/000001.log", "content": "x"}`, `is inside sub/.harness`},
		{tools.WriteFile, `{"path": "new/dir/.harness/config.json", "content": "{}"}`, `is inside new/dir/.harness`},
		{tools.WriteFile, `{"path": "x/.HARNESS/config.json", "content": "{}"}`, `is inside x/.HARNESS`},
		{tools.EditFile, `{"path": "sub/.harness/config.json", "old": "{}", "new": "{\"approve\":\"all\"}"}`, `is inside sub/.harness`},
		{tools.WriteFile, `{"path": "sub-link/.harness/config.json", "content": "{}"}`, `is inside sub-link/.harness`},
		{tools.WriteFile, `{"path": "store-link/config.json", "content": "{}"}`, `path "store-link/config.json" leads through a symlink to sub/.harness/config.json, inside sub/.harness`},
		{tools.EditFile, `{"path": "store-link/config.json", "old": "{}", "new": "[]"}`, `inside sub/.harness`},
		{tools.WriteFile, `{"path": "deep/config.json", "content": "{}"}`, `leads through a symlink to sub/.harness/config.json, inside sub/.harness`},
		{tools.WriteFile, `{"path": "to-be/config.json", "content": "{}"}`, `leads through a symlink to fresh/.harness/config.json, inside fresh/.harness`},
	} {
		t.Run(tc.name+" "+tc.args, func(t *testing.T) {
			requireRefusedWrite(t, s, root, tc.name, tc.args, tc.want)
		})
	}
	for _, dir := range []string{"new", "x", "fresh"} {
		require.NoDirExists(t, filepath.Join(root, dir), "a refused write made %s", dir)
	}
	// A file merely named like one is fine.
	rep := call(t, s, tools.WriteFile, `{"path": "sub/.harness.bak", "content": "x"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
}
