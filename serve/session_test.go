package serve_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// heldSession is a session of a workspace of its own that holds its
// store, with the person's settings user.
func heldSession(t *testing.T, user string) *stock.Session {
	t.Helper()
	cfg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cfg, "harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "harness", "config.json"), []byte(user), 0o644))
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}
	p, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	s, err := stock.NewSession(p, stock.SessionOptions{Getenv: getenv, Lenient: true, Hold: true, Create: true})
	require.NoError(t, err)
	require.NoError(t, s.Open(context.Background()))
	t.Cleanup(func() { s.Close() })
	return s
}

// HostSession serves a session's store where the person says, else
// where the settings say; the session's store becomes the server's. While it serves, another server
// of the store is refused (NotServed), naming the one that holds it.
func TestHostSession(t *testing.T) {
	ctx := context.Background()
	s := heldSession(t, `{}`)
	h, err := serve.HostSession(s, serve.Hosting{Addr: "127.0.0.1:0", Who: "ana"})
	require.NoError(t, err)
	require.Equal(t, h.Store(), s.Store, "the session appends through the server's store")
	require.Contains(t, h.URL, "127.0.0.1:")
	require.Equal(t, socketstore.Path(s.Place.Store), h.Socket, "a store in a directory is served on its socket")
	_, err = os.Stat(h.Socket)
	require.NoError(t, err)
	err = serve.NotServed(ctx, s.Place)
	require.ErrorIs(t, err, serve.ErrServed)
	require.ErrorContains(t, err, fmt.Sprintf("pid %d, http://%s", os.Getpid(), h.Addr()))
	h.Stop()
	require.NoError(t, serve.NotServed(ctx, s.Place))

	s = heldSession(t, `{"serve": {"addr": "127.0.0.1:0"}}`)
	h, err = serve.HostSession(s, serve.Hosting{Who: "ana"})
	require.NoError(t, err, "the settings' loopback address")
	h.Stop()
}
