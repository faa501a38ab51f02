package stock_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// Sampling (a server's request for a model turn) is allowed only by the
// person's own settings or a project file they trusted: an untrusted
// project can neither turn it on for a server the person declared nor
// declare a server with it; trusted, its file does.
func TestSamplingOnlyFromTrustedSettings(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	env := func(k string) string { return map[string]string{"XDG_CONFIG_HOME": home}[k] }
	p := stock.Place{Root: root, Store: filepath.Join(root, ".harness")}
	write := func(path, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	write(stock.UserSettingsFile(env), `{"mcpServers": {"a": {"command": "srv-a"}, "u": {"command": "srv-u", "sampling": true}}}`)
	write(p.SettingsFile(), `{"mcpServers": {"a": {"command": "srv-a", "sampling": true}, "b": {"command": "srv-b", "sampling": true}}}`)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	require.True(t, l.Settings.MCPServers["u"].Sampling, "the person's own file allows it")
	require.False(t, l.Settings.MCPServers["a"].Sampling, "an untrusted project does not turn it on")
	require.Equal(t, "srv-a", l.Settings.MCPServers["a"].Command)
	_, declared := l.Settings.MCPServers["b"]
	require.False(t, declared, "nor declares a server with it")
	src := l.Sources[len(l.Sources)-1]
	require.True(t, slices.Contains(src.Ignored, "mcpServers"), "%+v", src)

	require.NoError(t, p.TrustSource(env, src))
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	require.True(t, l.Settings.MCPServers["a"].Sampling, "trusted, the project's file allows it")
	require.True(t, l.Settings.MCPServers["b"].Sampling)
}
