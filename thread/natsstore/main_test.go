package natsstore_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// shared is the embedded server most tests use; each opens a stream of its
// own on it.
var shared *server.Server

func TestMain(m *testing.M) {
	natstest.ServeNodeIfAsked() // a node of a ProcessCluster: never returns
	if dir := os.Getenv(serverChildEnv); dir != "" {
		serverChild(dir) // never returns
	}
	dir, err := os.MkdirTemp("", "natsstore-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	shared, err = startServer(dir, -1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	shared.Shutdown()
	shared.WaitForShutdown()
	_ = os.RemoveAll(dir)
	if cluster != nil {
		cluster.shutdown()
	}
	if clusterDir != "" {
		_ = os.RemoveAll(clusterDir)
	}
	if code == 0 {
		if err := leftGoroutines(30 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leftGoroutines is goleak's finding once patience ends: a client whose
// connection was reset mid-reconnect on a loaded machine takes longer to
// end its goroutines than goleak's own retries wait (about 0.4 s); a
// goroutine still there after patience is a leak.
//
// One of nats.go's own is not looked for: an object store's Put
// (jetstream/object.go, v1.55.0) makes a publisher whose first async
// publish starts resetPendingAcksOnReconnect and, deferred, cleans the
// publisher up, setting the channel that goroutine reads to nil. When the
// cleanup runs before the goroutine has read the channel, it receives
// from a nil channel for ever, whatever this package does (the blobs
// bucket is an object store). Seen once, in a -race run at load 4.
func leftGoroutines(patience time.Duration) error {
	deadline := time.Now().Add(patience)
	for {
		err := goleak.Find(goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// tempDir makes a directory for data that outlives one test.
func tempDir(pattern string) (string, error) { return os.MkdirTemp("", pattern) }

// maxPayload lets the conformance suite's 1 MiB fact fit one message; the
// server's default is 1 MiB, headers included.
const maxPayload = 8 << 20

// startServer starts an embedded JetStream server on localhost keeping its
// data in dir, on port (-1 for any free port).
func startServer(dir string, port int) (*server.Server, error) {
	return startServerWith(&server.Options{Port: port, StoreDir: dir, MaxPayload: maxPayload})
}

// startServerWith starts an embedded JetStream server on localhost with
// o (its name, host, JetStream and logging set here).
func startServerWith(o *server.Options) (*server.Server, error) {
	o.ServerName, o.Host, o.JetStream, o.NoLog, o.NoSigs = "natsstore-test", "127.0.0.1", true, true, true
	s, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("start server: not ready after 10s")
	}
	return s, nil
}

var streams atomic.Int64

// freshStream returns the options of a stream no other test uses.
func freshStream() []natsstore.Option {
	_, opts := freshNamed()
	return opts
}

// freshNamed returns the name and the options of a stream no other test
// uses.
func freshNamed() (string, []natsstore.Option) {
	n := streams.Add(1)
	name := fmt.Sprintf("T%d", n)
	return name, []natsstore.Option{natsstore.WithStream(name), natsstore.WithSubjects(fmt.Sprintf("t%d", n))}
}

// defaultServer starts a server of the test's own with the default
// max_payload (1 MiB), as most users run it.
func defaultServer(t testing.TB) *server.Server {
	t.Helper()
	srv, err := startServerWith(&server.Options{Port: -1, StoreDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv
}

// dial opens a store over a connection of its own, as another process
// would; the test closes it at the end (ignoring ErrClosed).
func dial(t testing.TB, srv *server.Server, opts ...natsstore.Option) *natsstore.Store {
	t.Helper()
	s, err := natsstore.Dial(context.Background(), srv.ClientURL(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}
