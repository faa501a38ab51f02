package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
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

// Every command that opens the store survives the loss of a node of a
// 3-node cluster: right after the node leading the store's stream is
// killed (SIGKILL, as a machine dies), a worker starting up, threads and
// submit, given every node's URL as a person configures them, wait
// through the election and succeed; the worker drives the threads.
func TestCommandsAfterTheLeaderIsKilled(t *testing.T) {
	c := natstest.NewProcessCluster(t)
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("script.jsonl", []byte(`{"text": "Done."}`+"\n"), 0o644))
	t.Setenv("HARNESS_REPLICAS", "3")
	harness := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(append(args, "--store", c.AllURLs()), strings.NewReader(""), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	code, out := harness("submit", "Set the cache TTL to 300")
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "submitted: thread t1")

	leader, err := c.Leader("HARNESS", "", 30*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.Kill(leader))
	killed := time.Now()

	// A worker starts as the cluster elects.
	w := exec.Command(harnessBin(t), "worker", "--store", c.AllURLs(), "--model", "scripted:script.jsonl")
	w.Dir = dir
	w.Env = append(os.Environ(), "NO_COLOR=1")
	var werr harnesstest.LockedBuffer // read while the worker writes it
	w.Stderr = &werr
	stdout, err := w.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	code, out = harness("threads")
	require.Equal(t, exitOK, code, "threads %v after the kill of %s: %s", time.Since(killed), leader, out)
	require.Contains(t, out, "t1")
	t.Logf("threads exited %v after the kill of %s, the stream's leader", time.Since(killed).Round(time.Millisecond), leader)
	code, out = harness("submit", "Set the cache TTL to 600")
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "submitted: thread t2")

	done := map[string]bool{}
	timeout := time.After(2 * time.Minute) // a bound, not a pace: the worker ends it long before
	for !done["t1"] || !done["t2"] {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the worker exited: %s", werr.String())
			}
			t.Logf("worker: %s", line)
			if f := strings.Fields(line); len(f) >= 3 && f[2] == "done" {
				done[f[1]] = true
			}
		case <-timeout:
			t.Fatalf("the worker drove %v in 2m; stderr: %s", done, werr.String())
		}
	}
	require.NoError(t, w.Process.Signal(syscall.SIGTERM))
	for range lines { // to the end of its output
	}
	require.NoError(t, w.Wait(), werr.String())
}
