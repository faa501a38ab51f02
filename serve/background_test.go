package serve_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// A server started in the background that never answers is said, with
// its log, which holds what it printed.
func TestStartBackgroundNoAnswer(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	require.False(t, serve.Running(ctx, dir))
	_, _, err := serve.StartBackground(ctx, dir, exec.Command("sh", "-c", "echo not a server"), 300*time.Millisecond)
	require.ErrorIs(t, err, serve.ErrNoAnswer)
	run, rerr := socketstore.RunDir(dir)
	require.NoError(t, rerr)
	t.Cleanup(func() { os.RemoveAll(run) })
	logPath := filepath.Join(run, serve.LogFile)
	require.Contains(t, err.Error(), logPath)
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), "not a server")
	}, 10*time.Second, 20*time.Millisecond)

	_, _, err = serve.StartBackground(ctx, dir, exec.Command(filepath.Join(dir, "no-such-program")), time.Second)
	require.Error(t, err)
	require.False(t, errors.Is(err, serve.ErrNoAnswer), "a program that cannot start is its own error: %v", err)
}

// Once the store's socket answers, StartBackground returns the URL the
// server's info file names.
func TestStartBackgroundAnswers(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	store, err := thread.OpenPebble(filepath.Join(dir, "db"))
	require.NoError(t, err)
	defer store.Close()
	ln, err := socketstore.Listen(dir)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(socketstore.Path(dir))) })
	srv := socketstore.NewServer(store, harness.Hold)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() { srv.Close(); <-done }()
	run, err := socketstore.RunDir(dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(run, serve.InfoFile), []byte(`{"URL":"http://127.0.0.1:1/#token"}`), 0o600))

	require.True(t, serve.Running(ctx, dir))
	pid, url, err := serve.StartBackground(ctx, dir, exec.Command("true"), 10*time.Second)
	require.NoError(t, err)
	require.Positive(t, pid)
	require.Equal(t, "http://127.0.0.1:1/#token", url)
}

// AutoStart starts a server only when the settings ask for one, for a
// store in a directory that exists (or is to be made), and none answers;
// the server runs in the workspace's root.
func TestAutoStartOnlyWhenAsked(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	p := stock.Place{Root: root, Store: filepath.Join(root, stock.StoreDir), Exists: true}
	t.Cleanup(func() {
		if run, err := socketstore.RunDir(p.Store); err == nil {
			os.RemoveAll(run)
		}
	})
	auto := stock.Settings{Serve: &stock.ServeSettings{Auto: true}}
	var made []*exec.Cmd
	server := func() (*exec.Cmd, error) {
		c := exec.Command("sh", "-c", "echo not a server")
		made = append(made, c)
		return c, nil
	}
	remote := p
	remote.Remote = "nats://127.0.0.1:1"
	missing := p
	missing.Exists = false
	for _, tc := range []struct {
		name     string
		p        stock.Place
		settings stock.Settings
		create   bool
	}{
		{"not asked", p, stock.Settings{}, true},
		{"asked off", p, stock.Settings{Serve: &stock.ServeSettings{}}, true},
		{"a NATS store", remote, auto, true},
		{"no store, none to make", missing, auto, false},
	} {
		_, _, started, err := serve.AutoStart(ctx, tc.p, tc.settings, tc.create, server, time.Second)
		require.NoError(t, err, tc.name)
		require.False(t, started, tc.name)
		require.Empty(t, made, tc.name)
	}
	_, _, started, err := serve.AutoStart(ctx, missing, auto, true, server, 300*time.Millisecond)
	require.ErrorIs(t, err, serve.ErrNoAnswer)
	require.False(t, started)
	require.Len(t, made, 1)
	require.Equal(t, root, made[0].Dir)
}
