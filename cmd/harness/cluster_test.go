package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// On a cluster, HARNESS_REPLICAS makes the store the first command makes
// there with that many replicas: the stream and every bucket. A value
// that is not a count of replicas is a usage error, and nothing is made.
func TestStoreReplicasOnACluster(t *testing.T) {
	c := natstest.NewCluster(t)
	t.Chdir(t.TempDir())
	harness := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(append(args, "--store", c.URL()), strings.NewReader(""), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	t.Setenv("HARNESS_REPLICAS", "three")
	code, out := harness("submit", "Set the cache TTL to 300")
	require.Equal(t, exitUsage, code)
	require.Contains(t, out, `HARNESS_REPLICAS="three": want the replicas`)

	t.Setenv("HARNESS_REPLICAS", "3")
	code, out = harness("submit", "Set the cache TTL to 300")
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "submitted: thread t1")

	nc, err := nats.Connect(c.URL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for _, name := range []string{"HARNESS", "KV_HARNESS_LEASES", "KV_HARNESS_THREADS", "OBJ_HARNESS_BLOBS"} {
		st, err := js.Stream(context.Background(), name)
		require.NoError(t, err, name)
		require.Equal(t, 3, st.CachedInfo().Config.Replicas, name)
	}
}
