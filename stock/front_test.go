package stock_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A Front says once that it uses a store nested inside a repository, and
// once what settings it left out as untrusted; a settings file it cannot
// read is said with the session that goes on without it. What it says is
// escaped: a directory's name is the repository's.
func TestFrontSaysWhatThePersonShouldKnow(t *testing.T) {
	repo := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
	sub := filepath.Join(repo, "sub\x1b[2J")
	require.NoError(t, os.MkdirAll(filepath.Join(sub, stock.StoreDir, "db"), 0o755))
	writeProject(t, sub, `{"approve": "all"}`)
	var said []string
	f := &stock.Front{Dir: sub, Getenv: sessionEnv(t, ""), Version: "harness/test", Warn: func(line string) { said = append(said, line) }}
	p, err := f.Place()
	require.NoError(t, err)
	require.Equal(t, repo, p.Within)
	for range 2 {
		s, err := f.NewSession(p, stock.SessionOptions{Lenient: true})
		require.NoError(t, err)
		require.NoError(t, f.Open(ctx, s))
		require.NoError(t, s.Close())
	}
	require.Len(t, said, 2, "%q", said)
	require.Contains(t, said[0], "approve", "the untrusted project file's key")
	require.Contains(t, said[1], "using the store")
	require.Contains(t, said[1], "nested inside the repository")
	for _, line := range said {
		require.NotContains(t, line, "\x1b")
		require.False(t, strings.Contains(line, "\n"), line)
	}

	said = nil
	writeProject(t, sub, `{"approve": `)
	s, err := f.NewSession(p, stock.SessionOptions{Lenient: true})
	require.NoError(t, err)
	s.Close()
	require.Len(t, said, 1, "%q", said)
	require.Contains(t, said[0], "going on without it")
}

// Who answers is the account's name, never the environment's word
// while the account has one.
func TestWhoami(t *testing.T) {
	me := stock.Whoami(func(string) string { return "" })
	require.NotEmpty(t, me)
	require.Equal(t, me, stock.Whoami(func(k string) string {
		if k == "USER" {
			return "mallory"
		}
		return ""
	}), "USER says nothing while the account has a name")
}
