package natstest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// nodeEnv carries a node's settings (a nodeSpec, in JSON) to the test
// binary run again as that node (see ServeNodeIfAsked).
const nodeEnv = "NATSTEST_PROCESS_NODE"

// nodeSpec is what a node in a process of its own is to be.
type nodeSpec struct {
	Name        string   `json:"name"`
	Dir         string   `json:"dir"`
	ClusterPort int      `json:"cluster_port"`
	Routes      []string `json:"routes"`
}

// ServeNodeIfAsked runs a node of a ProcessCluster when this process was
// started as one, and never returns then; otherwise it returns at once.
// A test binary that starts a ProcessCluster calls it first in TestMain:
// the nodes are that binary run again.
//
// The node says "ready URL" on stdout once it takes clients, and serves
// until it is killed or its stdin closes (the test process is gone).
func ServeNodeIfAsked() {
	v := os.Getenv(nodeEnv)
	if v == "" {
		return
	}
	err := serveNode(v)
	fmt.Fprintln(os.Stderr, "natstest node:", err)
	os.Exit(2)
}

func serveNode(v string) error {
	var spec nodeSpec
	if err := json.Unmarshal([]byte(v), &spec); err != nil {
		return fmt.Errorf("%s: %w", nodeEnv, err)
	}
	o := nodeOptions(spec.Name, spec.Dir, spec.ClusterPort)
	o.Routes = server.RoutesFromStr(strings.Join(spec.Routes, ","))
	s, err := server.NewServer(o)
	if err != nil {
		return err
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		return fmt.Errorf("node %s not ready after 10s (route port %d taken?)", spec.Name, spec.ClusterPort)
	}
	fmt.Printf("ready %s\n", s.ClientURL())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0) // the test process is gone
	}()
	s.WaitForShutdown()
	return errors.New("shut down")
}

// nodeOptions are the options of a cluster node named name keeping its
// data in dir, routing on clusterPort (the routes are added by the caller).
func nodeOptions(name, dir string, clusterPort int) *server.Options {
	return &server.Options{
		ServerName: name,
		Host:       "127.0.0.1",
		Port:       -1,
		JetStream:  true,
		StoreDir:   dir,
		MaxPayload: MaxPayload,
		Cluster:    server.ClusterOpts{Name: "natstest", Host: "127.0.0.1", Port: clusterPort},
		NoLog:      true,
		NoSigs:     true,
	}
}

// ProcessCluster is a cluster of three nodes as Cluster is, each in a
// child process of its own, so that a test can kill one as the kernel
// would (SIGKILL): no stepping down, no goodbye to the others, as when a
// machine dies. The children are the test binary run again; its TestMain
// must call ServeNodeIfAsked first.
type ProcessCluster struct {
	mu    sync.Mutex // guards nodes' cmd and alive
	nodes []*processNode
}

type processNode struct {
	name  string
	url   string
	cmd   *exec.Cmd
	stdin io.Closer
	alive bool
}

// StartProcessCluster starts a cluster of three nodes, each in a child
// process, keeping their data under dir, and waits until JetStream answers
// on it. As StartCluster, it tries fresh route ports up to three times.
func StartProcessCluster(dir string) (*ProcessCluster, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	for range 3 {
		var c *ProcessCluster
		if c, err = startProcessCluster(exe, dir); err == nil {
			return c, nil
		}
		for i := range 3 {
			_ = os.RemoveAll(filepath.Join(dir, fmt.Sprintf("node%d", i)))
		}
	}
	return nil, err
}

func startProcessCluster(exe, dir string) (*ProcessCluster, error) {
	ports := make([]int, 3)
	var routes []string
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[i]))
	}
	c := &ProcessCluster{}
	for i := range 3 {
		spec, err := json.Marshal(nodeSpec{Name: fmt.Sprintf("node%d", i), Dir: filepath.Join(dir, fmt.Sprintf("node%d", i)), ClusterPort: ports[i], Routes: routes})
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), nodeEnv+"="+string(spec))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			c.Shutdown()
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			c.Shutdown()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			c.Shutdown()
			return nil, fmt.Errorf("start node %d: %w", i, err)
		}
		n := &processNode{name: fmt.Sprintf("node%d", i), cmd: cmd, stdin: stdin, alive: true}
		c.nodes = append(c.nodes, n)
		// The child says "ready URL", or exits (a closed pipe).
		line, err := bufio.NewReader(out).ReadString('\n')
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
		if err != nil || !ok {
			c.Shutdown()
			return nil, fmt.Errorf("node %d did not start (%q, %v)", i, line, err)
		}
		n.url = url
	}
	if err := waitForJetStream(c.URL(), 30*time.Second); err != nil {
		c.Shutdown()
		return nil, err
	}
	return c, nil
}

// NewProcessCluster starts a process cluster for the test, in its
// temporary directory, and kills its nodes when the test ends.
func NewProcessCluster(t testing.TB) *ProcessCluster {
	t.Helper()
	c, err := StartProcessCluster(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	return c
}

// URL lists the client URLs of the nodes not killed, comma-separated.
func (c *ProcessCluster) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var urls []string
	for _, n := range c.nodes {
		if n.alive {
			urls = append(urls, n.url)
		}
	}
	return strings.Join(urls, ",")
}

// AllURLs lists the client URLs of every node, killed or not, as a user's
// configuration would.
func (c *ProcessCluster) AllURLs() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, n.url)
	}
	return strings.Join(urls, ",")
}

// Kill kills the node named name with SIGKILL and waits for it to be gone.
func (c *ProcessCluster) Kill(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.name == name {
			if !n.alive {
				return fmt.Errorf("node %s: already killed", name)
			}
			n.alive = false
			_ = n.cmd.Process.Kill()
			_ = n.cmd.Wait()
			_ = n.stdin.Close()
			return nil
		}
	}
	return fmt.Errorf("no node %s", name)
}

// Shutdown kills every node left.
func (c *ProcessCluster) Shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.alive {
			n.alive = false
			_ = n.cmd.Process.Kill()
			_ = n.cmd.Wait()
			_ = n.stdin.Close()
		}
	}
}

// Leader returns the name of the node leading stream, as the nodes left
// answer, waiting up to wait for one other than not ("" for any).
// Each question waits at most 100ms for an answer, as one asked of a
// stream electing a leader gets none.
func (c *ProcessCluster) Leader(stream, not string, wait time.Duration) (string, error) {
	return StreamLeader(c.URL(), stream, not, wait)
}

// StreamLeader returns the name of the node leading stream on the
// servers at url, waiting up to wait for one other than not ("" for
// any). Each question waits at most 100ms for an answer, as one asked of
// a stream electing a leader gets none.
func StreamLeader(url, stream, not string, wait time.Duration) (string, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		var info *jetstream.StreamInfo
		st, err := js.Stream(ctx, stream)
		if err == nil {
			info = st.CachedInfo()
		}
		cancel()
		if info != nil && info.Cluster != nil && info.Cluster.Leader != "" && info.Cluster.Leader != not {
			return info.Cluster.Leader, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("stream %s has no leader (other than %q) after %v (%v)", stream, not, wait, err)
		}
		if err == nil {
			time.Sleep(20 * time.Millisecond) // answered, with no leader yet
		}
	}
}
