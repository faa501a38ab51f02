package stock_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/stock"
)

// The settings' mcpServers are read in the shape of Claude Code's
// .mcp.json, and refused, naming the file and the server, when they
// cannot work.
func TestSettingsMCPServers(t *testing.T) {
	cases := []struct {
		name, json, err string
	}{
		{"both kinds", `{"mcpServers": {"fs": {"command": "mcp-server-filesystem", "args": ["."], "env": {"K": "v"}},
			"gh": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${T}"}, "trusted": true}}}`, ""},
		{"unknown field", `{"mcpServers": {"fs": {"comand": "x"}}}`, `unknown field "comand"`},
		{"bad server", `{"mcpServers": {"fs": {"args": ["x"]}}}`, `mcpServers: mcp server settings: "fs": a stdio server needs a "command"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The store outside the workspace: its file is the person's.
			root, store := t.TempDir(), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(store, "config.json"), []byte(c.json), 0o644))
			p, err := stock.Locate(root, store)
			require.NoError(t, err)
			s, err := p.LoadSettings()
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				require.ErrorContains(t, err, p.SettingsFile())
				return
			}
			require.NoError(t, err)
			require.Equal(t, mcp.Servers{
				"fs": {Command: "mcp-server-filesystem", Args: []string{"."}, Env: map[string]string{"K": "v"}},
				"gh": {Type: "http", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${T}"}, Trusted: true},
			}, s.MCPServers)
		})
	}
}

// A server that cannot be started is not the stock's error: its status
// says why, and the toolbox holds the built-in tools alone; Close ends
// what was started.
func TestStockWithAServerThatFails(t *testing.T) {
	root := t.TempDir()
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	st, err := stock.NewStock(p, cfg, stock.WithMCP(context.Background(), mcp.Servers{"gone": {Command: filepath.Join(root, "no-such-server")}}))
	require.NoError(t, err)
	defer st.Close()
	status := st.MCP.Status()
	require.Len(t, status, 1)
	require.Equal(t, mcp.Failed, status[0].State)
	require.Contains(t, status[0].Error, "not found")
	require.Len(t, st.Toolbox.Schemas(), len(st.Tools.Tools()))

	_, err = stock.NewStock(p, cfg, stock.WithMCP(context.Background(), mcp.Servers{"bad name": {Command: "x"}}))
	require.ErrorIs(t, err, mcp.ErrConfig)
}
