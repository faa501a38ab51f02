package stock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// RevokeTrustIn forgets the trust in the files named, each said as it
// was (trusted or not), and leaves the others trusted; with all, every
// file of the workspace at once.
func TestRevokeTrustIn(t *testing.T) {
	root := filepath.Join(t.TempDir(), "w")
	xdg := t.TempDir()
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".harness", "project.json"), []byte(`{"approve": "all"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".harness", "config.json"), []byte(`{"network": true}`), 0o644))
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	files := l.Untrusted()
	require.Len(t, files, 2)
	for _, s := range files {
		require.NoError(t, p.TrustSource(env, s))
	}

	// One named: it alone is forgotten; named again, it was not trusted.
	rs, err := p.RevokeTrustIn(env, files[:1], false)
	require.NoError(t, err)
	require.Equal(t, []stock.Revocation{{Path: files[0].Path, Had: true}}, rs)
	rs, err = p.RevokeTrustIn(env, files, false)
	require.NoError(t, err)
	require.Equal(t, []stock.Revocation{{Path: files[0].Path, Had: false}, {Path: files[1].Path, Had: true}}, rs)
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	require.Len(t, l.Untrusted(), 2)

	// All: one revocation for the workspace, whatever files are given.
	require.NoError(t, p.TrustSource(env, files[1]))
	rs, err = p.RevokeTrustIn(env, nil, true)
	require.NoError(t, err)
	require.Equal(t, []stock.Revocation{{Had: true}}, rs)
	rs, err = p.RevokeTrustIn(env, files, true)
	require.NoError(t, err)
	require.Equal(t, []stock.Revocation{{Had: false}}, rs)

	// A trust file inside the workspace is refused, nothing revoked.
	inside := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(root, ".config")
		}
		return ""
	}
	_, err = p.RevokeTrustIn(inside, files, false)
	require.ErrorIs(t, err, stock.ErrTrustInWorkspace)
}
