package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// A thread recorded on another machine is refused by the commands that
// act on it, naming both workspaces; reading it works from anywhere.
func TestAThreadOfAnotherMachineIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := workspace(t, map[string]string{"script.jsonl": writeScript})
	p, err := stock.Locate(dir, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithWorkspace("elsewhere.example:/srv/app"), harness.WithModelName("scripted:"+filepath.Join(dir, "script.jsonl")))
	require.NoError(t, err)
	st, err := stock.NewStock(p, cfg)
	require.NoError(t, err)
	m, err := model.ParseScript("s", []byte(writeScript))
	require.NoError(t, err)
	svc, err := st.Services(m, stock.BlobsOf(store))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(t, err)
	out, err := rt.Start(ctx, st.Actor, "t1", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.NoError(t, svc.Observer.(interface{ Close() error }).Close())
	require.NoError(t, store.Close())

	here, _ := os.Hostname()
	for _, args := range [][]string{{"resume", "t1"}, {"approve", "t1", "--resume"}, {"undo", "t1"}, {"continue", "t1", "go on"}} {
		_, stderr, code := harnessIn(t, dir, args...)
		require.Equal(t, exitError, code, "%v: %s", args, stderr)
		require.Contains(t, stderr, "thread t1 works in elsewhere.example:/srv/app, on another machine (this is "+here+":", "%v", args)
	}
	got, err := os.ReadFile(filepath.Join(dir, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 60\n", string(got), "nothing ran here")
	stdout, stderr, code := harnessIn(t, dir, "threads")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "t1 ")
	_, stderr, code = harnessIn(t, dir, "log", "t1")
	require.Zero(t, code, stderr)
}
