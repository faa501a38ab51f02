package stock_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/stock"
)

// A process that starts with a remote server declared (a serve, a run, a
// worker) forgets the sessions kept for questions of crashed calls past
// their age; a recent one stays.
func TestStartExpiresKeptSessions(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	root := t.TempDir()
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	ts, err := p.MCPTokens(os.Getenv)
	require.NoError(t, err)
	const server = "http://127.0.0.1:1/mcp"
	old, err := ts.SaveSession(server, "crashed-long-ago")
	require.NoError(t, err)
	recent, err := ts.SaveSession(server, "crashed-lately")
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(ts.Dir, "*.session-"+old[:32]+".json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	then := time.Now().Add(-mcp.KeptSessionAge - time.Hour)
	require.NoError(t, os.Chtimes(files[0], then, then))

	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	st, err := stock.NewStock(p, cfg, stock.WithMCP(context.Background(), mcp.Servers{"remote": {Type: "http", URL: server}}))
	require.NoError(t, err)
	defer st.Close()
	_, err = ts.LoadSession(server, old)
	require.ErrorIs(t, err, mcp.ErrTokenStore, "the old session is forgotten")
	_, err = ts.LoadSession(server, recent)
	require.NoError(t, err, "a recent one stays")
}
