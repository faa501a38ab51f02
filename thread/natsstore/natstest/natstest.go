// Package natstest runs real NATS servers with JetStream inside a test
// process, for the tests of what is built on package natsstore: one
// server, or a cluster of three nodes routed to each other on loopback.
// Like net/http/httptest, it is for tests — of this module, and of
// harnesses composed from it.
package natstest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MaxPayload is the max_payload of the servers started here (8 MiB).
const MaxPayload = 8 << 20

// StartServer starts a server with JetStream on a free port of
// 127.0.0.1, keeping its data in dir.
func StartServer(dir string) (*server.Server, error) {
	o := &server.Options{ServerName: "natstest", Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: dir, MaxPayload: MaxPayload, NoLog: true, NoSigs: true}
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

// Server starts a server for the test, in its temporary directory, and
// shuts it down when the test ends.
func Server(t testing.TB) *server.Server {
	t.Helper()
	s, err := StartServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// Cluster is three servers with JetStream routed to each other on
// loopback, each keeping its data in a directory of its own.
type Cluster struct {
	Nodes []*server.Server
}

// StartCluster starts a cluster of three nodes keeping their data under
// dir, and waits until JetStream answers on it.
//
// The nodes' route ports are picked before the nodes start (each node
// must know the others'), so another process may take one in between:
// a cluster whose route listener did not open is shut down and started
// again on fresh ports, up to three times.
func StartCluster(dir string) (*Cluster, error) {
	var err error
	for range 3 {
		var c *Cluster
		var retry bool
		if c, retry, err = startCluster(dir); err == nil {
			return c, nil
		}
		if !retry {
			return nil, err
		}
		for i := range 3 {
			_ = os.RemoveAll(filepath.Join(dir, fmt.Sprintf("node%d", i)))
		}
	}
	return nil, err
}

// startCluster makes one attempt at StartCluster; retry says a port was
// taken and fresh ports may do.
func startCluster(dir string) (c *Cluster, retry bool, err error) {
	ports := make([]int, 3)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, false, err
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	c = &Cluster{}
	for i := range 3 {
		o := nodeOptions(fmt.Sprintf("node%d", i), filepath.Join(dir, fmt.Sprintf("node%d", i)), ports[i])
		o.Routes = routes
		s, err := server.NewServer(o)
		if err != nil {
			c.Shutdown()
			return nil, false, fmt.Errorf("start node %d: %w", i, err)
		}
		s.Start()
		c.Nodes = append(c.Nodes, s)
	}
	for i, s := range c.Nodes {
		if !s.ReadyForConnections(10 * time.Second) {
			taken := s.ClusterAddr() == nil
			c.Shutdown()
			if taken {
				return nil, true, fmt.Errorf("node %d: its route port %d did not open (taken?)", i, ports[i])
			}
			return nil, false, fmt.Errorf("node %d not ready after 10s", i)
		}
	}
	if err := waitForJetStream(c.URL(), 30*time.Second); err != nil {
		c.Shutdown()
		return nil, false, err
	}
	return c, false, nil
}

// NewCluster starts a cluster for the test, in its temporary directory,
// and shuts it down when the test ends.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := StartCluster(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	return c
}

// waitForJetStream waits for a meta leader of the servers at url: until
// there is one, JetStream requests fail.
func waitForJetStream(url string, wait time.Duration) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster has no JetStream after %v: %w", wait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL lists the client URLs of the nodes still running, comma-separated,
// as natsstore.Dial takes them.
func (c *Cluster) URL() string {
	var urls []string
	for _, s := range c.Nodes {
		if s.Running() {
			urls = append(urls, s.ClientURL())
		}
	}
	return strings.Join(urls, ",")
}

// Node returns the node named name, or nil.
func (c *Cluster) Node(name string) *server.Server {
	for _, s := range c.Nodes {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// Leader returns the name of the node leading the stream, waiting up to
// wait for the stream to have one.
func (c *Cluster) Leader(stream string, wait time.Duration) (string, error) {
	return StreamLeader(c.URL(), stream, "", wait)
}

// Shutdown shuts every node down and waits for them.
func (c *Cluster) Shutdown() {
	for _, s := range c.Nodes {
		s.Shutdown()
	}
	for _, s := range c.Nodes {
		s.WaitForShutdown()
	}
}
