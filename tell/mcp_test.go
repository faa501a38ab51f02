package tell_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// A server's names and words are its own: escaped, cut, painted by state.
func TestMCPServersSaysEachServer(t *testing.T) {
	status := []mcp.Status{
		{Name: "fs", Transport: "stdio", Endpoint: "npx fs", State: mcp.Connected, Trusted: true, Protocol: "2025-11-25", Resources: true,
			Tools:   []mcp.ToolInfo{{Name: "mcp__fs__read", Description: "Reads\nmore lines"}, {Name: "mcp__fs__write\x1b[2J", Confirm: true}},
			Skipped: []string{"bad name"}, Changed: true},
		{Name: "gh", Transport: "http", Endpoint: "https://x/mcp", State: mcp.Failed, Error: "401\x07"},
	}
	var b bytes.Buffer
	tell.MCPServers(&b, status, nil, "/w/.harness/config.json", brackets)
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\x07")
	require.Contains(t, out, "[bold:fs]  stdio npx fs  [green:connected] · trusted · MCP 2025-11-25 · resources (mcp_read_resource)\n")
	require.Regexp(t, `(?m)^    mcp__fs__read\s+read-only\s+Reads$`, out)
	require.Regexp(t, `(?m)^    mcp__fs__write\\x1b\[2J\s+ask\s*$`, out)
	require.Contains(t, out, "[yellow:not offered:] bad name")
	require.Contains(t, out, "[yellow:changed:] the server changed its tool list")
	require.Contains(t, out, "[bold:gh]  http https://x/mcp  [red:failed]\n    401\\x07\n")
	require.Equal(t, 1, tell.MCPFailed(status))
	docs := tell.MCPServerDocs(status)
	require.Len(t, docs, 2)
	require.NotNil(t, docs[1].Tools, "no tools is an empty list, not null")

	b.Reset()
	tell.MCPServers(&b, nil, []stock.SettingsSource{{Path: "/w/.harness/project.json", Ignored: []string{"mcpServers"}}}, "/w/.harness/config.json", nil)
	require.Equal(t, "no MCP servers started: those of /w/.harness/project.json are left out until you trust it (harness trust)\n", b.String())
	b.Reset()
	tell.MCPServers(&b, nil, nil, "/w/.harness/config.json", nil)
	require.Contains(t, b.String(), "no MCP servers in /w/.harness/config.json")

	b.Reset()
	tell.MCPPrompts(&b, []mcp.PromptInfo{{Server: "fs", Name: "review", Description: "Review\x1b", Arguments: []mcp.PromptArgument{{Name: "pr", Required: true}, {Name: "style"}}}}, nil)
	require.Equal(t, "fs/review (pr*, style)  Review\\x1b\n", b.String())
}
