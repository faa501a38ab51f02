package tell_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// What a settings file says is data: its paths, values, hook commands and
// agents are escaped, an ignored key says why and the defaults show.
func TestConfigSaysWhereEachKeyComesFrom(t *testing.T) {
	model := "openai:\x1b[2Jgpt"
	l := stock.Layered{
		Settings: stock.Settings{Model: model, Deny: []string{"run_command:rm *"}},
		Sources: []stock.SettingsSource{
			{Scope: stock.ScopeUser, Path: "/home/ana/.config/harness/config.json", Exists: true, Trusted: true, Set: []string{"model"}},
			{Scope: stock.ScopeProject, Path: "/w/.harness/project\x07.json", Exists: true, Inside: true, Set: []string{"allow", "deny"},
				Applied: []string{"deny"}, Ignored: []string{"allow", "mcpServers"}},
			{Scope: stock.ScopeLocal, Path: "/w/.harness/config.json", Err: errors.New("bad\njson")},
		},
		From: map[string][]stock.Scope{"model": {stock.ScopeUser}, "deny": {stock.ScopeProject}},
	}
	c := tell.Settings{Layered: l, UserInstructions: "",
		Instructions: []facts.InstructionFile{{Scope: "project", Path: "/w/AGENTS.md", Size: 12, Digest: "0123456789abcdef"}},
		Agents: []stock.AgentEntry{{Name: "rev", Agent: harness.Agent{Scope: "project", Path: "/w/.harness/agents/rev.md", Digest: "fedcba9876543210",
			Model: "anthropic:x"}}, {Name: "bad", Err: errors.New("no\x1bgood")}}}
	var b bytes.Buffer
	require.NoError(t, tell.Config(&b, c))
	out := b.String()
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\x07")
	for _, want := range []string{
		"files, weakest first:\n",
		"sets deny; ignored, not trusted: allow, mcpServers", // what applied, and what did not
		"error: bad\\njson",
		"max_turns", "(default)", "(user)", "(project)",
		"allow                   -",
		"project's ignored: not trusted",
		"mcpServers              -",
		"network: off",
		"/w/AGENTS.md: 12 bytes, sha256 0123456789ab",
		"· model anthropic:x (not trusted: used only where it is the parent's model; harness trust /w/.harness/agents/rev.md)",
		"bad: cannot be used — no\\x1bgood",
	} {
		require.Contains(t, out, want)
	}
	doc := c.Doc()
	require.Equal(t, model, doc.Settings.Model)
	require.Equal(t, []stock.Scope{stock.ScopeUser}, doc.From["model"])

	b.Reset()
	require.NoError(t, tell.Agents(&b, c.Agents, ""))
	require.Regexp(t, `(?m)^rev\s+project\s+\(the parent's\)\s+-\s+fedcba987654\s+-`, b.String())
	require.Contains(t, b.String(), "error: no\\x1bgood")
	b.Reset()
	require.NoError(t, tell.Agents(&b, nil, "/home/ana/.config/harness/agents"))
	require.Equal(t, "no agents: none in .harness/agents, nor yours (/home/ana/.config/harness/agents)\n", b.String())
}
