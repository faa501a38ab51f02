package stock_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// Trust applies to the workspace's own files, and only those may be
// named: a file outside (the user's own, /etc/passwd), one that is not
// there, or a path through .. is refused before anything is trusted.
func TestTrustSourcesNamesOnlyWorkspaceFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "w")
	xdg := t.TempDir()
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".harness", "agents"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "harness"), 0o755))
	write := func(path, s string) { require.NoError(t, os.WriteFile(path, []byte(s), 0o644)) }
	proj := filepath.Join(root, ".harness", "project.json")
	write(proj, `{"approve": "all"}`)
	write(filepath.Join(root, ".harness", "agents", "rev.md"), "---\ndescription: reviews\nmodel: openai:gpt-x\n---\nReview.\n")
	write(filepath.Join(xdg, "harness", "config.json"), `{"network": true}`)
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	ctx := context.Background()

	all, err := stock.TrustSources(ctx, p, l, env, nil)
	require.NoError(t, err)
	var paths []string
	for _, s := range all {
		paths = append(paths, s.Path)
	}
	require.Equal(t, []string{proj, filepath.Join(root, ".harness", "agents", "rev.md")}, paths)

	t.Chdir(root)
	one, err := stock.TrustSources(ctx, p, l, env, []string{".harness/project.json"})
	require.NoError(t, err)
	require.Len(t, one, 1)
	require.Equal(t, proj, one[0].Path)

	for _, bad := range []string{filepath.Join(xdg, "harness", "config.json"), "/etc/passwd", ".harness/config.json", ".harness/../../w/.harness/nothing.json"} {
		_, err := stock.TrustSources(ctx, p, l, env, []string{bad})
		require.ErrorIs(t, err, stock.ErrNotTrustable, bad)
	}
}
