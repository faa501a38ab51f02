package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/mcp"
)

// A kept session is read back only by its own digest: a digest a forged
// fact names that is not 64 hex digits (a path, "..", upper case) names
// no file, and a file that does not hold the session its name says is
// refused. Sessions are kept 0600, apart from the server's token, and
// forgotten.
func TestKeptSessionsByDigestOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcp-tokens")
	store := mcp.TokenStore{Dir: dir}
	const url = "https://mcp.example/mcp?key=secret"
	digest, err := store.SaveSession(url, "sess-1")
	require.NoError(t, err)
	require.Equal(t, mcp.SessionDigest("sess-1"), digest)
	got, err := store.LoadSession(url, digest)
	require.NoError(t, err)
	require.Equal(t, "sess-1", got)
	_, err = store.LoadSession("https://other.example/mcp", digest)
	require.ErrorIs(t, err, mcp.ErrTokenStore, "kept for one server only")

	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	info, err := os.Stat(files[0])
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.NotContains(t, string(b), "secret", "the URL's query is not kept")

	for _, bad := range []string{"", "../../../etc/passwd", strings.Repeat("A", 64), strings.Repeat("a", 63), strings.Repeat("a", 64) + "/..", digest[:32]} {
		_, err := store.LoadSession(url, bad)
		require.ErrorIs(t, err, mcp.ErrTokenStore, bad)
		_, err = store.SaveSession(url, "x")
		require.NoError(t, err)
		require.ErrorIs(t, store.DeleteSession(url, bad), mcp.ErrTokenStore, bad)
	}

	// A file swapped for another session's is refused.
	other, err := store.SaveSession(url, "sess-2")
	require.NoError(t, err)
	files, err = filepath.Glob(filepath.Join(dir, "*.session-"+other[:32]+".json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	b, err = os.ReadFile(files[0])
	require.NoError(t, err)
	mine, err := filepath.Glob(filepath.Join(dir, "*.session-"+digest[:32]+".json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mine[0], b, 0o600))
	_, err = store.LoadSession(url, digest)
	require.ErrorIs(t, err, mcp.ErrTokenStore)

	require.NoError(t, store.DeleteSession(url, other))
	_, err = store.LoadSession(url, other)
	require.ErrorIs(t, err, mcp.ErrTokenStore)
}
