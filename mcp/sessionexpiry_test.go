package mcp_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/mcp"
)

// Kept sessions past the age, and the oldest past the count, are
// forgotten; newer ones stay and still load; tokens, other files, and a
// link named as a session (and what it points to) are left alone.
func TestExpireKeptSessions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tokens")
	s := mcp.TokenStore{Dir: dir}
	n, err := s.ExpireSessions(time.Now(), time.Hour, 10)
	require.NoError(t, err, "no directory: nothing kept")
	require.Zero(t, n)

	const server = "https://mcp.example.com/mcp"
	require.NoError(t, s.Save(server, &mcp.Credential{Server: server, ClientID: "c", TokenURL: "https://x/token", AccessToken: "a"}))
	now := time.Now()
	var digests []string
	for i := range 6 {
		d, err := s.SaveSession(server, "session-"+string(rune('a'+i)))
		require.NoError(t, err)
		digests = append(digests, d)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.session-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 6)
	// Ages: sessions 0 and 1 older than the bound; 2..5 an hour apart.
	age := map[int]time.Duration{0: 9 * 24 * time.Hour, 1: 8 * 24 * time.Hour, 2: 4 * time.Hour, 3: 3 * time.Hour, 4: 2 * time.Hour, 5: time.Hour}
	for i, d := range digests {
		path := sessionPath(t, dir, d)
		require.NoError(t, os.Chtimes(path, now.Add(-age[i]), now.Add(-age[i])))
	}
	outside := filepath.Join(t.TempDir(), "target")
	require.NoError(t, os.WriteFile(outside, []byte("keep"), 0o600))
	link := filepath.Join(dir, "0123456789abcdef0123456789abcdef.session-0123456789abcdef0123456789abcdef.json")
	require.NoError(t, os.Symlink(outside, link))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600))

	n, err = s.ExpireSessions(now, mcp.KeptSessionAge, 3)
	require.NoError(t, err)
	require.Equal(t, 3, n, "two past the age, one past the count")
	for i, d := range digests {
		_, err := s.LoadSession(server, d)
		if i <= 2 {
			require.ErrorIs(t, err, mcp.ErrTokenStore, "session %d forgotten", i)
		} else {
			require.NoError(t, err, "session %d kept", i)
		}
	}
	c, err := s.Load(server)
	require.NoError(t, err)
	require.NotNil(t, c, "the token stays")
	_, err = os.Lstat(link)
	require.NoError(t, err, "a link is not a kept session")
	_, err = os.Stat(outside)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "notes.txt"))
	require.NoError(t, err)
}

// sessionPath is the file that keeps the session with digest d.
func sessionPath(t *testing.T, dir, d string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.session-"+d[:32]+".json"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return m[0]
}
