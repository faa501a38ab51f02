package stock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
)

// A project's hooks run code: they are listed but do not run until the
// person trusts the file, and then only as declared; the user's run as
// they are. A hook's "sandbox": "off" counts only from the user's own
// settings. A hook whose declaration changed is not in force: the runner
// refuses to run it.
func TestHooksInForce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "w")
	xdg := t.TempDir()
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
	write := func(path, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	write(filepath.Join(xdg, "harness", "config.json"), `{"hooks": {"after_tool": [{"name": "mine", "command": "true", "sandbox": "off"}]}}`)
	write(filepath.Join(root, ".harness", "project.json"), `{"hooks": {"before_tool": [{"name": "theirs", "argv": ["true"], "sandbox": "off", "matcher": "run_command|mcp__*"}]}}`)
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	views := l.HookViews()
	require.Len(t, views, 2)
	require.Equal(t, stock.HookView{Event: facts.HookAfterTool, Name: "mine", Scope: stock.ScopeUser, Path: filepath.Join(xdg, "harness", "config.json"),
		Trusted: true, Command: "true", Timeout: 60, Sandbox: "off"}, views[0])
	require.False(t, views[1].Trusted)
	require.Equal(t, "theirs", views[1].Name)
	rec := l.HookRecord()
	require.Len(t, rec, 1, "the untrusted project's hook is not recorded to run")
	require.Equal(t, "mine", rec[0].Name)

	proj := slices.IndexFunc(l.Sources, func(s stock.SettingsSource) bool { return s.Scope == stock.ScopeProject })
	require.Equal(t, []string{"hooks"}, l.Sources[proj].Ignored)
	require.NoError(t, p.TrustSource(env, l.Sources[proj]))
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	views = l.HookViews()
	require.True(t, views[1].Trusted)
	require.Contains(t, views[1].Sandbox, "off ignored")
	rec = l.HookRecord()
	require.Len(t, rec, 2)
	require.Equal(t, "project", rec[1].Scope)
	require.NotEqual(t, rec[0].Digest, rec[1].Digest)

	// A hook the runner does not have in force is not run.
	st, err := stock.NewStock(p, harness.Config{}, stock.WithHooks(l.Hooks))
	require.NoError(t, err)
	stale := rec[1]
	stale.Digest = "0000"
	_, err = st.Hooks.RunHook(context.Background(), stale, nil)
	require.True(t, errors.Is(err, harness.ErrHookNotInForce), "%v", err)
}

// Hook settings that cannot work are refused, naming the key.
func TestHookSettingsRefused(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"hooks": {"pre_tool": [{"command": "true"}]}}`, `event "pre_tool"`},
		{`{"hooks": {"before_tool": [{}]}}`, "either command"},
		{`{"hooks": {"before_tool": [{"command": "x", "argv": ["x"]}]}}`, "either command"},
		{`{"hooks": {"before_tool": [{"command": "x", "timeout": -1}]}}`, "timeout -1"},
		{`{"hooks": {"before_tool": [{"command": "x", "sandbox": "read-only"}]}}`, `sandbox "read-only"`},
		{`{"hooks": {"before_tool": [{"command": "x", "matcher": "[a"}]}}`, `matcher "[a"`},
	} {
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".harness"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".harness", "project.json"), []byte(tc.json), 0o644))
		p, err := stock.Locate(root, "")
		require.NoError(t, err)
		_, err = p.LoadLayered(func(string) string { return "" })
		require.ErrorContains(t, err, tc.want)
	}
}
