package stock_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A Front says, a line each, which of a session's MCP servers could not
// be started: escaped, as the server's command is the settings' text.
func TestFrontWarnMCP(t *testing.T) {
	root := t.TempDir()
	gone := filepath.Join(root, "no-such-server\x1b[2J")
	getenv := sessionEnv(t, `{"mcpServers": {"gone": {"command": "`+strings.ReplaceAll(gone, "\x1b", `\u001b`)+`"}, "also": {"command": "/nonexistent/x"}}}`)
	var said []string
	f := &stock.Front{Dir: root, Getenv: getenv, Warn: func(line string) { said = append(said, line) }}
	p, err := f.Place()
	require.NoError(t, err)
	s, err := f.NewSession(p, stock.SessionOptions{Drive: true, MCP: ctx})
	require.NoError(t, err)
	defer s.Close()
	said = nil
	f.WarnMCP(s)
	require.Len(t, said, 2, "%q", said)
	require.Contains(t, said[0], "MCP server also")
	require.Contains(t, said[1], "MCP server gone")
	for _, line := range said {
		require.Contains(t, line, "its tools are not offered")
		require.NotContains(t, line, "\x1b")
	}

	// A session with no servers, or none started, says nothing.
	s2, err := f.NewSession(p, stock.SessionOptions{Lenient: true})
	require.NoError(t, err)
	defer s2.Close()
	said = nil
	f.WarnMCP(s2)
	require.Empty(t, said)
}

// MCPServer finds a server of the settings in force: the person's own; a
// server of a project file the person has not trusted is not there, and
// the error says why, escaped (the directory's name is the repository's).
func TestPlaceMCPServer(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws\x1b[2J")
	getenv := sessionEnv(t, `{"mcpServers": {"fs": {"command": "mcp-server-filesystem"}}}`)
	writeProject(t, root, `{"mcpServers": {"gh": {"type": "http", "url": "https://example.com/mcp"}}}`)
	p, err := stock.Locate(root, "")
	require.NoError(t, err)

	srv, err := p.MCPServer(getenv, "fs")
	require.NoError(t, err)
	require.Equal(t, "mcp-server-filesystem", srv.Command)

	_, err = p.MCPServer(getenv, "gh")
	require.ErrorIs(t, err, stock.ErrNoMCPServer)
	require.ErrorContains(t, err, "left out until you trust it")
	require.NotContains(t, err.Error(), "\x1b")

	// Without an untrusted file, the server is simply not there.
	bare, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	_, err = bare.MCPServer(getenv, "gh")
	require.ErrorIs(t, err, stock.ErrNoMCPServer)
	require.NotContains(t, err.Error(), "trust")
}
