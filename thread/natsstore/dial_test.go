package natsstore_test

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// freePort returns a localhost port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())
	return port
}

// TestDialError: a failed Dial says where it tried to connect, without
// the password or token of the URL.
func TestDialError(t *testing.T) {
	port := freePort(t)
	for _, c := range []struct{ url, want string }{
		{"nats://me:s3cret@127.0.0.1:" + port, "connect to NATS at nats://me:xxxxx@127.0.0.1:" + port + ": "},
		{"nats://s3cret@127.0.0.1:" + port, "connect to NATS at nats://xxxxx@127.0.0.1:" + port + ": "},
		{"me:s3cret@127.0.0.1:" + port + ", nats://127.0.0.1:" + port, "connect to NATS at nats://me:xxxxx@127.0.0.1:" + port + ",nats://127.0.0.1:" + port + ": "},
	} {
		_, err := natsstore.Dial(context.Background(), c.url)
		require.ErrorContains(t, err, c.want)
		require.NotContains(t, err.Error(), "s3cret")
	}
}

// TestDialContext: Dial gives up when its context ends, even while the
// server it reached has not answered yet.
func TestDialContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := l.Accept() // and never say anything
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	defer func() {
		_ = l.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = natsstore.Dial(ctx, "nats://"+l.Addr().String())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	// The context cut the connection (its read says so), not the
	// client's own 2 s timeout, which ends the read with "i/o timeout"
	// (and the error would wrap the context's end all the same).
	require.NotContains(t, err.Error(), "i/o timeout", "the client's own timeout, not the context")

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = natsstore.Dial(cancelled, shared.ClientURL())
	require.ErrorIs(t, err, context.Canceled)
}

// TestDialConnection: the connection Dial makes reconnects for as long as
// the store is open, and buffers nothing while disconnected, so that a
// publish given up on is never sent after the reconnection.
func TestDialConnection(t *testing.T) {
	s := dial(t, shared, freshStream()...)
	o := natsstore.ConnOptions(s)
	require.Equal(t, -1, o.ReconnectBufSize)
	require.Equal(t, -1, o.MaxReconnect)
}

// TestOpenRefusesUnsafeStream: an existing stream whose settings could
// lose facts or answer gets from a replica that lags is refused, naming
// the setting.
func TestOpenRefusesUnsafeStream(t *testing.T) {
	ctx := context.Background()
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for _, c := range []struct {
		want string
		edit func(*jetstream.StreamConfig)
	}{
		{"AllowDirect", func(c *jetstream.StreamConfig) { c.AllowDirect = true }},
		{"DenyDelete", func(c *jetstream.StreamConfig) { c.DenyDelete = false }},
		{"DenyPurge", func(c *jetstream.StreamConfig) { c.DenyPurge = false }},
		{"retention", func(c *jetstream.StreamConfig) { c.Retention = jetstream.InterestPolicy }},
		{"retention", func(c *jetstream.StreamConfig) { c.Retention = jetstream.WorkQueuePolicy }},
		{"MaxAge", func(c *jetstream.StreamConfig) { c.MaxAge = time.Hour }},
		{"MaxMsgs", func(c *jetstream.StreamConfig) { c.MaxMsgs = 1000 }},
		{"MaxBytes", func(c *jetstream.StreamConfig) { c.MaxBytes = 1 << 30 }},
		{"MaxMsgsPerSubject", func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = 1 }},
		{"", func(c *jetstream.StreamConfig) {}}, // as Open makes it
	} {
		name, opts := freshNamed()
		// As Open would make it, but for one setting.
		s, err := natsstore.Open(ctx, nc, opts...)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		st, err := js.Stream(ctx, name)
		require.NoError(t, err)
		cfg := st.CachedInfo().Config
		require.NoError(t, js.DeleteStream(ctx, name))
		c.edit(&cfg)
		_, err = js.CreateStream(ctx, cfg)
		require.NoError(t, err, c.want)
		s, err = natsstore.Open(ctx, nc, opts...)
		if c.want == "" {
			require.NoError(t, err)
			require.NoError(t, s.Close())
			continue
		}
		require.ErrorContains(t, err, c.want)
		require.ErrorContains(t, err, "nats stream edit")
	}
}
