package natsstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// serverChildEnv names the store directory of a server the test binary
// runs as a child process of its own (see serverChild), so that a test
// can kill it with SIGKILL.
const serverChildEnv = "NATSSTORE_TEST_SERVER_DIR"

// serverChild runs a JetStream server with sync_interval: always (every
// write fsynced before it is acknowledged) on the port in
// NATSSTORE_TEST_SERVER_PORT and the directory dir, says "ready" on
// stdout, and serves until it is killed.
func serverChild(dir string) {
	port, err := strconv.Atoi(os.Getenv("NATSSTORE_TEST_SERVER_PORT"))
	if err == nil {
		var s *server.Server
		if s, err = startServerWith(&server.Options{Port: port, StoreDir: dir, SyncAlways: true}); err == nil {
			fmt.Println("ready")
			s.WaitForShutdown()
		}
	}
	fmt.Fprintln(os.Stderr, "server child:", err)
	os.Exit(2)
}

// startServerProcess runs a server in a child process on dir and port and
// returns it once it is ready.
func startServerProcess(t *testing.T, dir string, port int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), serverChildEnv+"="+dir, "NATSSTORE_TEST_SERVER_PORT="+strconv.Itoa(port))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the server process did not start")
	require.Equal(t, "ready\n", line)
	return cmd
}

// TestAcknowledgedAppendsSurviveAKilledServer: a server with
// sync_interval: always runs in a process of its own; writers append to
// it, and the process is killed with SIGKILL while they do. Started again
// on its directory, the server has every append that was acknowledged, and
// every log verifies.
func TestAcknowledgedAppendsSurviveAKilledServer(t *testing.T) {
	dir := t.TempDir()
	port, err := strconv.Atoi(freePort(t))
	require.NoError(t, err)
	child := startServerProcess(t, dir, port)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	ctx := context.Background()
	opts := append(freshStream(), natsstore.WithTimeout(time.Second))
	s, err := natsstore.Dial(ctx, url, opts...)
	require.NoError(t, err)

	const writers = 4
	var (
		mu    sync.Mutex
		acked = map[string][]thread.Head{}
		wg    sync.WaitGroup
		total = make(chan struct{}, 1<<16)
	)
	for w := range writers {
		id := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			var head thread.Head
			for i := 0; ; i++ {
				ds := []facts.Draft{note(t, fmt.Sprintf("ingress/%d", i))}
				if i%5 == 0 {
					ds = append(ds, notes(t, fmt.Sprintf("batch/%d", i), 3, 100)...)
				}
				h, err := s.Append(ctx, id, head.Seq, ds...)
				if err != nil {
					return // the server is gone
				}
				head = h
				mu.Lock()
				acked[id] = append(acked[id], h)
				mu.Unlock()
				total <- struct{}{}
			}
		})
	}
	for range 200 {
		<-total
	}
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	wg.Wait()
	_ = child.Wait()
	_ = s.Close()

	startServerProcess(t, dir, port)
	r, err := natsstore.Dial(ctx, url, opts...)
	require.NoError(t, err)
	defer r.Close()
	for id, heads := range acked {
		last := heads[len(heads)-1]
		h, err := r.Head(ctx, id)
		require.NoError(t, err)
		// The append in flight at the kill may have been stored without
		// its answer: one more than acknowledged, at most.
		require.GreaterOrEqual(t, h.Seq, last.Seq, id)
		fs := readAll(t, r, id)
		for _, a := range heads {
			require.Equal(t, a.Hash, fs[a.Seq-1].Hash(), "%s: acknowledged seq %d", id, a.Seq)
		}
		require.NoError(t, r.Verify(ctx, id))
		_, err = r.Append(ctx, id, h.Seq, note(t, "after the restart"))
		require.NoError(t, err)
	}
	require.Len(t, acked, writers)
	var n int
	for _, hs := range acked {
		n += len(hs)
	}
	require.GreaterOrEqual(t, n, 200)
}
