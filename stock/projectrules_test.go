package stock_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// ruleEnv is a person's environment whose configuration (and trust file)
// lies in its own directory, outside any workspace.
func ruleEnv(t *testing.T) (getenv func(string) string, trustFile string) {
	t.Helper()
	xdg := t.TempDir()
	return func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}, filepath.Join(xdg, "harness", stock.TrustFileName)
}

// allowsHere reports whether the settings read at root allow rule, and
// checks that the workspace scope is named then.
func allowsHere(t *testing.T, root string, getenv func(string) string, rule string) bool {
	t.Helper()
	l, err := stock.Place{Root: root, Store: filepath.Join(root, ".harness")}.LoadLayered(getenv)
	require.NoError(t, err)
	in := slices.Contains(l.Settings.Allow, rule)
	if in {
		require.Contains(t, l.From["allow"], stock.ScopeWorkspace, "the rule's scope is named")
	}
	return in
}

// TestProjectRuleBoundToTheDirectory: a rule kept for a workspace
// applies there, and through a symlink to it; the directory removed and
// made again at the same path, or another clone moved to that path,
// inherits none; a rule given there again keeps the new one and drops
// the old directory's, which can never apply.
func TestProjectRuleBoundToTheDirectory(t *testing.T) {
	getenv, file := ruleEnv(t)
	parent := t.TempDir()
	ws := filepath.Join(parent, "repo")
	require.NoError(t, os.Mkdir(ws, 0o755))

	kept, err := stock.Place{Root: ws}.KeepProjectRule(getenv, "run_command:go test *", "person")
	require.NoError(t, err)
	require.Equal(t, stock.ScopeWorkspace, kept.Scope)
	require.Equal(t, file, kept.Path)
	require.True(t, allowsHere(t, ws, getenv, "run_command:go test *"))

	// The same directory through a symlink: the same workspace.
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(ws, link))
	require.True(t, allowsHere(t, link, getenv, "run_command:go test *"))

	var trust stock.Trust
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &trust))
	require.Len(t, trust.Rules, 1)
	require.NotEmpty(t, trust.Rules[0].Dir, "the rule names the directory")
	real, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	require.Equal(t, real, trust.Rules[0].Workspace)

	// Removed and made again at the same path: not the directory the
	// person gave the rule for. (The pause: birth times come from the
	// file system's coarse clock; see TestSameDir.)
	require.NoError(t, os.RemoveAll(ws))
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.False(t, allowsHere(t, ws, getenv, "run_command:go test *"), "a directory made again inherits no rule")
	require.False(t, allowsHere(t, link, getenv, "run_command:go test *"))
	elsewhere, from := stock.Place{Root: ws}.ProjectRulesElsewhere(getenv)
	require.Equal(t, file, from)
	require.Len(t, elsewhere, 1, "config can say why the rule does not apply")
	require.Equal(t, "run_command:go test *", elsewhere[0].Allow)

	// Another clone moved to that path.
	clone := filepath.Join(parent, "clone")
	require.NoError(t, os.Mkdir(clone, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(clone, "go.mod"), []byte("module x\n"), 0o644))
	require.NoError(t, os.RemoveAll(ws))
	require.NoError(t, os.Rename(clone, ws))
	require.False(t, allowsHere(t, ws, getenv, "run_command:go test *"), "another clone at the path inherits no rule")

	// A rule given for this directory: it applies, the old one is gone.
	_, err = stock.Place{Root: ws}.KeepProjectRule(getenv, "run_command:make *", "person")
	require.NoError(t, err)
	require.True(t, allowsHere(t, ws, getenv, "run_command:make *"))
	require.False(t, allowsHere(t, ws, getenv, "run_command:go test *"))
	b, err = os.ReadFile(file)
	require.NoError(t, err)
	trust = stock.Trust{}
	require.NoError(t, json.Unmarshal(b, &trust))
	require.Len(t, trust.Rules, 1, "the old directory's rule is dropped: %s", b)
	elsewhere, _ = stock.Place{Root: ws}.ProjectRulesElsewhere(getenv)
	require.Empty(t, elsewhere)
	require.Equal(t, "run_command:make *", trust.Rules[0].Allow)

	// The directory moved elsewhere: its rule stays with the path it was
	// given for, and does not follow it.
	moved := filepath.Join(parent, "moved")
	require.NoError(t, os.Rename(ws, moved))
	require.False(t, allowsHere(t, moved, getenv, "run_command:make *"))
	require.NoError(t, os.Rename(moved, ws))
	require.True(t, allowsHere(t, ws, getenv, "run_command:make *"), "moved back: the same directory at the same path")
}

// TestProjectRuleKeptBeforeRulesWereBound: a rule recorded without the
// directory it was given for (before rules were bound) applies by its
// path, as it did; a rule bound to another directory does not.
func TestProjectRuleKeptBeforeRulesWereBound(t *testing.T) {
	getenv, file := ruleEnv(t)
	ws := t.TempDir()
	real, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o700))
	legacy := `{"trusted": [], "rules": [` +
		`{"workspace": ` + quote(real) + `, "allow": "run_command:go vet *", "by": "person"},` +
		`{"workspace": ` + quote(real) + `, "allow": "run_command:rm *", "dir": "1:2:3.4", "by": "person"}]}`
	require.NoError(t, os.WriteFile(file, []byte(legacy), 0o600))
	require.True(t, allowsHere(t, ws, getenv, "run_command:go vet *"), "a rule without a directory applies by path")
	require.False(t, allowsHere(t, ws, getenv, "run_command:rm *"), "a rule of another directory does not")
	// Another path: neither.
	require.False(t, allowsHere(t, t.TempDir(), getenv, "run_command:go vet *"))
}

// TestProjectRuleThroughARetargetedSymlink: a workspace reached through
// a symlink is the directory it leads to; the symlink pointed at
// another directory (a repository that moves a link it controls) brings
// none of the first directory's rules.
func TestProjectRuleThroughARetargetedSymlink(t *testing.T) {
	getenv, _ := ruleEnv(t)
	parent := t.TempDir()
	first, second := filepath.Join(parent, "first"), filepath.Join(parent, "second")
	require.NoError(t, os.Mkdir(first, 0o755))
	require.NoError(t, os.Mkdir(second, 0o755))
	link := filepath.Join(parent, "ws")
	require.NoError(t, os.Symlink(first, link))
	_, err := stock.Place{Root: link}.KeepProjectRule(getenv, "write_file:*.md", "person")
	require.NoError(t, err)
	require.True(t, allowsHere(t, link, getenv, "write_file:*.md"))
	require.True(t, allowsHere(t, first, getenv, "write_file:*.md"))

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(second, link))
	require.False(t, allowsHere(t, link, getenv, "write_file:*.md"))
	require.False(t, allowsHere(t, second, getenv, "write_file:*.md"))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
