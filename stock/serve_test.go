package stock_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// serveStore holds the place's store and serves it on its socket, as a
// harness server does.
func serveStore(t *testing.T, p stock.Place) thread.Store {
	t.Helper()
	held, err := p.HoldStore(ctx, 0, true)
	require.NoError(t, err)
	ln, err := socketstore.Listen(p.Store)
	require.NoError(t, err)
	srv := socketstore.NewServer(held, harness.Hold)
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done; held.Close() })
	return held
}

// TestOpenStoreThroughAServer: while a process serves the store, every
// other open goes through it — no "in use" — and what it appends is in
// the held store.
func TestOpenStoreThroughAServer(t *testing.T) {
	p, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	held := serveStore(t, p)
	p.Exists = true

	for range 2 { // any number of them at once
		s, err := p.OpenStore(ctx, 0, false)
		require.NoError(t, err)
		defer s.Close()
		info, ok := stock.Served(s)
		require.True(t, ok, "a client of the server, not the store itself")
		require.Equal(t, os.Getpid(), info.PID)
		require.NotNil(t, stock.BlobsOf(s), "blobs through the server, for diffs and undo")
	}
	s, err := p.OpenStore(ctx, 0, false)
	require.NoError(t, err)
	defer s.Close()
	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/a", facts.UserMessage{Text: "hi"})
	require.NoError(t, err)
	_, err = s.Append(ctx, "t1", 0, d)
	require.NoError(t, err)
	h, err := held.Head(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, uint64(1), h.Seq)

	_, err = p.HoldStore(ctx, 0, false)
	require.ErrorIs(t, err, thread.ErrLocked, "the server holds it: nobody else opens it themselves")
}

// TestOpenStoreWaitsForAServer: a store another process holds without
// serving it is in use; a server that starts while a command waits is
// used.
func TestOpenStoreWaitsForAServer(t *testing.T) {
	p, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	held, err := p.HoldStore(ctx, 0, true)
	require.NoError(t, err)
	defer held.Close()
	p.Exists = true
	_, err = p.OpenStore(ctx, 0, false)
	require.ErrorIs(t, err, thread.ErrLocked)

	ln, err := socketstore.Listen(p.Store)
	require.NoError(t, err)
	srv := socketstore.NewServer(held, harness.Hold)
	go func() {
		time.Sleep(150 * time.Millisecond) // the command is waiting by now
		srv.Serve(ln)
	}()
	defer srv.Close()
	s, err := p.OpenStore(ctx, 10*time.Second, false)
	require.NoError(t, err)
	defer s.Close()
	_, ok := stock.Served(s)
	require.True(t, ok)
}

func TestServeSettings(t *testing.T) {
	cases := []struct {
		name, file, err string
	}{
		{"loopback and tokens", `{"serve": {"addr": "127.0.0.1:8470", "tokens": [{"name": "ana", "token": "0123456789abcdef"}], "auto": true}}`, ""},
		{"localhost", `{"serve": {"addr": "localhost:0"}}`, ""},
		{"beyond loopback", `{"serve": {"addr": "0.0.0.0:8470"}}`, "not a loopback address"},
		{"a short token", `{"serve": {"tokens": [{"name": "ana", "token": "short"}]}}`, "a token of 5 characters; want at least 16"},
		{"no name", `{"serve": {"tokens": [{"token": "0123456789abcdef"}]}}`, "no name"},
		{"one token twice", `{"serve": {"tokens": [{"name": "a", "token": "0123456789abcdef"}, {"name": "b", "token": "0123456789abcdef"}]}}`, "the same token as another"},
		{"an unknown field", `{"serve": {"port": 1}}`, "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The store outside the workspace: its file is the person's.
			root, store := t.TempDir(), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(store, "config.json"), []byte(tc.file), 0o644))
			p, err := stock.Locate(root, store)
			require.NoError(t, err)
			s, err := p.LoadSettings()
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, s.Serve)
		})
	}
}

// TestSocketOutsideTheStoreIsHidden: a server's socket is never in the
// store or the workspace but in the user's runtime directory, which the
// sandbox of every workspace hides, however deep the store is.
func TestSocketOutsideTheStoreIsHidden(t *testing.T) {
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	for _, root := range []string{t.TempDir(), filepath.Join(t.TempDir(), strings.Repeat("w", 90))} {
		require.NoError(t, os.MkdirAll(root, 0o755))
		p, err := stock.Locate(root, "")
		require.NoError(t, err)
		st, err := stock.NewStock(p, cfg)
		require.NoError(t, err)
		sock := socketstore.Path(p.Store)
		require.NotContains(t, sock, root)
		require.True(t, strings.HasPrefix(sock, sandbox.RuntimeDirPath()+"/"))
		require.Contains(t, st.Sandbox.Hidden, sandbox.RuntimeDirPath())
	}
}

// TestOlderServerIsNamed: a server of an older version listened in the
// store directory, where no client dials any more (a sandboxed command of
// another workspace could reach it there): a command finds the store in
// use and is told what holds it, rather than going through that socket.
func TestOlderServerIsNamed(t *testing.T) {
	p, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	held, err := p.HoldStore(ctx, 0, true)
	require.NoError(t, err)
	defer held.Close()
	old, err := net.Listen("unix", filepath.Join(p.Store, socketstore.SocketName))
	require.NoError(t, err)
	defer old.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := old.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	p.Exists = true
	_, err = p.OpenStore(ctx, 0, false)
	require.ErrorIs(t, err, thread.ErrLocked)
	require.Contains(t, err.Error(), "a harness server of an older version may hold it")
	select {
	case <-accepted:
		t.Fatal("a client dialed the old socket in the store directory")
	default:
	}
}
