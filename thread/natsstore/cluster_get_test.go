package natsstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// A get sent while the stream elects a new leader is answered by no one;
// the store sends it again, so that Head answers soon after the stream has
// a leader again rather than when its timeout runs out.
func TestGetDuringALeaderElection(t *testing.T) {
	c, err := startCluster(t.TempDir())
	require.NoError(t, err)
	defer c.shutdown()
	ctx := context.Background()
	name, opts := freshNamed()
	opts = append(opts, natsstore.WithReplicas(3), natsstore.WithTimeout(30*time.Second))
	s, err := natsstore.Dial(ctx, c.url(), opts...)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Append(ctx, "t", 0, msg(t, "ingress/a", "x"))
	require.NoError(t, err)

	nc, err := nats.Connect(c.url())
	require.NoError(t, err)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	st, err := js.Stream(ctx, name)
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	nc.Close()
	c.node(info.Cluster.Leader).Shutdown()

	start := time.Now()
	h, err := s.Head(ctx, "t")
	require.NoError(t, err)
	require.EqualValues(t, 1, h.Seq)
	require.Less(t, time.Since(start), 15*time.Second, "answered once there is a leader, not after the 30s timeout")
}
