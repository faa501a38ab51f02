package stock_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/stock"
)

func TestParseAgent(t *testing.T) {
	ag, err := stock.ParseAgent([]byte("---\r\ndescription: \"Reads.\"\r\ntools: read_file, 'list_files'\r\nmax_turns: 3\r\n---\r\nDo it.\r\n"))
	require.NoError(t, err)
	require.Equal(t, "Reads.", ag.Description)
	require.Equal(t, []string{"read_file", "list_files"}, ag.Tools)
	require.Equal(t, 3, ag.MaxTurns)
	require.Equal(t, "Do it.", ag.Instructions)

	ag, err = stock.ParseAgent([]byte("---\ntools: []\n---"))
	require.NoError(t, err)
	require.NotNil(t, ag.Tools, "an empty list gives no tools, not all")
	require.Empty(t, ag.Tools)

	ag, err = stock.ParseAgent([]byte("---\nsandbox: read-only\n---\nRead."))
	require.NoError(t, err)
	require.Equal(t, "read-only", ag.Sandbox)
	ag, err = stock.ParseAgent([]byte("---\nsandbox: 'workspace-write'\n---\nRead."))
	require.NoError(t, err)
	require.Empty(t, ag.Sandbox, "the parent's")

	for text, want := range map[string]string{
		"no front matter":                       "no front matter",
		"---\ndescription: x\n":                 "no closing line",
		"---\nmax_turns: 0\n---\n":              "max_turns is a number ≥ 1",
		"---\nmax_turns: -1\n---\n":             "max_turns is a number ≥ 1",
		"---\nsandbox: danger-full-access\n---": `sandbox is "read-only" or "workspace-write", not "danger-full-access"`,
		"---\nsandbox: off\n---":                `not "off" (a child never runs wider than its parent)`,
		"---\nmodel:\n---\n":                    "model is a model spec",
		"---\ntools: a\ntools: b\n---\n":        "tools is set twice",
		"---\napprove: all\n---\n":              `unknown key "approve"`,
		"---\njust words\n---\n":                "want key: value",
	} {
		_, err := stock.ParseAgent([]byte(text))
		require.ErrorIs(t, err, stock.ErrAgentFile, text)
		require.ErrorContains(t, err, want, text)
	}
}

func TestAgentsRead(t *testing.T) {
	ctx := context.Background()
	root, user := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, ".harness", "agents")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	write := func(name, text string) { require.NoError(t, os.WriteFile(name, []byte(text), 0o644)) }
	write(filepath.Join(dir, "a.md"), "---\ndescription: project a\n---\nA.")
	write(filepath.Join(user, "a.md"), "---\ndescription: user a\n---\n")
	write(filepath.Join(user, "b.md"), "---\ndescription: user b\n---\n")
	write(filepath.Join(root, ".git", "config.md"), "---\n---\n")
	require.NoError(t, os.Symlink(filepath.Join(root, ".git", "config.md"), filepath.Join(dir, "git.md")))
	write(filepath.Join(root, "docs.md"), "---\ndescription: from docs\n---\n")
	require.NoError(t, os.Symlink(filepath.Join(root, "docs.md"), filepath.Join(dir, "docs.md")))
	write(filepath.Join(dir, "big.md"), "---\n---\n"+strings.Repeat("x", stock.DefaultInstructionsMax))
	a := stock.Agents{Root: root, User: user}

	ag, err := a.ReadAgent(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "project a", ag.Description, "a project file hides the user's")
	require.Equal(t, stock.AgentsProject, ag.Scope)
	require.Equal(t, ".harness/agents/a.md", ag.Path)
	require.Len(t, ag.Digest, 64)
	ag, err = a.ReadAgent(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, stock.AgentsUser, ag.Scope)
	ag, err = a.ReadAgent(ctx, "docs")
	require.NoError(t, err, "a symlink to a Markdown file in the workspace is followed")
	require.Equal(t, "from docs", ag.Description)

	_, err = a.ReadAgent(ctx, "git")
	require.ErrorContains(t, err, "it leads into a .harness or a .git")
	_, err = a.ReadAgent(ctx, "big")
	require.ErrorContains(t, err, "over the limit")
	_, err = a.ReadAgent(ctx, "nobody")
	require.ErrorIs(t, err, harness.ErrUnknownAgent)
	_, err = a.ReadAgent(ctx, "../a")
	require.ErrorIs(t, err, stock.ErrAgentName)

	names, err := a.AgentNames(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "big", "docs", "git"}, names)
}

// ListAgents lists every agent file of the workspace, as every front end
// shows it: one that cannot be used says why, escaped, and an agent that
// names no tools has the parent's (tools null).
func TestListAgents(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, stock.StoreDir, stock.AgentsDir)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rev.md"), []byte("---\ndescription: Reviews.\nmax_turns: 3\n---\nReview it.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.md"), []byte("---\nevil\x1b[2J: x\n---\n"), 0o644))
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(root, "config")
		}
		return ""
	}
	list, user, err := stock.ListAgents(ctx, p, stock.Settings{}, getenv)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "config", "harness", stock.AgentsDir), user)
	require.Len(t, list, 2)
	b, err := json.Marshal(list)
	require.NoError(t, err)
	var got []map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, "bad", got[0]["name"])
	require.Contains(t, got[0]["error"], `\x1b[2J`, "escaped")
	require.NotContains(t, string(b), "\x1b")
	require.Equal(t, "rev", got[1]["name"])
	require.Equal(t, "Reviews.", got[1]["description"])
	require.Equal(t, float64(3), got[1]["max_turns"])
	require.Contains(t, got[1], "tools")
	require.Nil(t, got[1]["tools"], "the parent's tools")
	require.NotContains(t, got[1], "error")
}

// TestAgentModelTrust checks who may choose an agent's model: the user's
// own file, and a workspace file (the project's, or a user directory the
// workspace holds) only as the person trusted its exact content.
func TestAgentModelTrust(t *testing.T) {
	ctx := context.Background()
	root, user := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, ".harness", "agents")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write := func(name, text string) { require.NoError(t, os.WriteFile(name, []byte(text), 0o644)) }
	write(filepath.Join(dir, "p.md"), "---\nmodel: scripted:s.jsonl\n---\n")
	write(filepath.Join(user, "u.md"), "---\nmodel: openai:gpt-x\n---\n")
	var asked []string
	trusted := map[string]bool{}
	a := stock.Agents{Root: root, User: user, Trusted: func(path, digest string) bool {
		asked = append(asked, path)
		return trusted[path+" "+digest]
	}}

	ag, err := a.ReadAgent(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, "scripted:"+filepath.Join(root, "s.jsonl"), ag.Model, "a script's path is the workspace's")
	require.False(t, ag.ModelTrusted, "a project file's model waits for trust")
	require.Equal(t, []string{filepath.Join(dir, "p.md")}, asked)
	trusted[filepath.Join(dir, "p.md")+" "+ag.Digest] = true
	ag, err = a.ReadAgent(ctx, "p")
	require.NoError(t, err)
	require.True(t, ag.ModelTrusted, "trusted content")
	write(filepath.Join(dir, "p.md"), "---\nmodel: scripted:s.jsonl\n---\nchanged\n")
	ag, err = a.ReadAgent(ctx, "p")
	require.NoError(t, err)
	require.False(t, ag.ModelTrusted, "changed content is untrusted again")

	ag, err = a.ReadAgent(ctx, "u")
	require.NoError(t, err)
	require.Equal(t, "openai:gpt-x", ag.Model)
	require.True(t, ag.ModelTrusted, "the user's own file chooses")

	// The user's directory inside the workspace: anyone who could write
	// the workspace could have written it.
	inside := filepath.Join(root, "cfg", "agents")
	require.NoError(t, os.MkdirAll(inside, 0o755))
	write(filepath.Join(inside, "u.md"), "---\nmodel: openai:gpt-x\n---\n")
	a.User = inside
	ag, err = a.ReadAgent(ctx, "u")
	require.NoError(t, err)
	require.False(t, ag.ModelTrusted, "a user directory inside the workspace is not the user's word")
}
