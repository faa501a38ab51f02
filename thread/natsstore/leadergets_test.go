package natsstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// TestLeaderGetsBindsAnew: a bucket bound while direct gets were on (a
// process that had just made it, not yet turned them off) and turned off
// by another process meanwhile is bound anew, so that its gets reach the
// leader; a binding kept as it was would ask for direct gets nobody
// answers.
func TestLeaderGetsBindsAnew(t *testing.T) {
	srv := natstest.Server(t)
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b"})
	require.NoError(t, err)
	_, err = kv.Put(ctx, "k", []byte("v"))
	require.NoError(t, err)
	direct, err := js.KeyValue(ctx, "b") // bound while direct gets are on
	require.NoError(t, err)

	// Another process turns them off.
	st, err := js.Stream(ctx, "KV_b")
	require.NoError(t, err)
	cfg := st.CachedInfo().Config
	require.True(t, cfg.AllowDirect, "a bucket is made with direct gets on")
	cfg.AllowDirect = false
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)

	got, err := natsstore.LeaderGets(ctx, js, direct)
	require.NoError(t, err)
	gctx, gcancel := context.WithTimeout(ctx, 15*time.Second) // room for a loaded machine, inside ctx
	defer gcancel()
	e, err := got.Get(gctx, "k")
	require.NoError(t, err, "a get through the binding leaderGets returned")
	require.Equal(t, "v", string(e.Value()))
}
