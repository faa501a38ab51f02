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
