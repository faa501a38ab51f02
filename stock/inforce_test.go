package stock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// InForce reads what applies in a workspace: the settings and their
// sources, the instruction files (the user's and the workspace root's),
// the agents of files; a settings file that cannot be read is said, and
// the rest is read still.
func TestPlaceInForce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "w")
	xdg := t.TempDir()
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
	write := func(path, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	write(filepath.Join(root, "AGENTS.md"), "Run the tests.\n")
	write(filepath.Join(xdg, "harness", "AGENTS.md"), "Be brief.\n")
	write(filepath.Join(root, ".harness", "agents", "rev.md"), "---\ndescription: Reviews.\n---\nReview it.\n")
	write(filepath.Join(xdg, "harness", "config.json"), `{"max_turns": 7}`)
	p, err := stock.Locate(root, "")
	require.NoError(t, err)

	in, loadErr, err := p.InForce(t.Context(), env)
	require.NoError(t, err)
	require.NoError(t, loadErr)
	require.Equal(t, 7, *in.Layered.Settings.MaxTurns)
	require.Len(t, in.Instructions, 2)
	var scopes []string
	for _, f := range in.Instructions {
		scopes = append(scopes, string(f.Scope))
	}
	require.ElementsMatch(t, []string{"user", "project"}, scopes)
	require.Len(t, in.Agents, 1)
	require.Equal(t, "rev", in.Agents[0].Name)
	require.Equal(t, filepath.Join(xdg, "harness", "AGENTS.md"), in.UserInstructions)
	require.Zero(t, in.RulesElsewhere)

	// A project file that is no JSON: said, and the rest read.
	write(filepath.Join(root, ".harness", "project.json"), `{"approve": `)
	in, loadErr, err = p.InForce(t.Context(), env)
	require.NoError(t, err)
	require.Error(t, loadErr)
	require.Equal(t, 7, *in.Layered.Settings.MaxTurns)
	require.Len(t, in.Instructions, 2)
	require.Len(t, in.Agents, 1)
}
