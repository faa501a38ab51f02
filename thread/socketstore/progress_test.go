package socketstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// sink is a ProgressSink that keeps what it is told. A sink with a gate
// takes nothing until the gate is closed: the server stalls in it.
type sink struct {
	gate  chan struct{} // set before the server starts, never changed
	mu    sync.Mutex    // guards got and ended
	got   []string      // "thread data dropped"
	ended []string
}

func (s *sink) Progress(id string, data []byte, dropped int) {
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, fmt.Sprintf("%s %s %d", id, data, dropped))
}

func (s *sink) Ended(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = append(s.ended, id)
}

func (s *sink) seen() ([]string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got), slices.Clone(s.ended)
}

// serveWithSink is serveDir with the server's progress going to a sink.
func serveWithSink(t *testing.T) (*served, *sink) {
	t.Helper()
	k := &sink{}
	return serveTo(t, k), k
}

// serveTo is serveDir with the server's progress going to k.
func serveTo(t *testing.T, k *sink) *served {
	t.Helper()
	dir := t.TempDir()
	store, err := thread.OpenPebble(filepath.Join(dir, "db"))
	require.NoError(t, err)
	ln, err := socketstore.Listen(dir)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(socketstore.Path(dir))) })
	s := &served{dir: dir, store: store, server: socketstore.NewServer(store, harness.Hold, socketstore.WithProgress(k)), done: make(chan error, 1)}
	go func() { s.done <- s.server.Serve(ln) }()
	t.Cleanup(s.stop)
	return s
}

// TestProgressOfLeasedThreadsOnly: the server takes a client's progress
// records only for the threads its process holds (and the threads below
// them): not for a thread another process holds, nor one nobody holds;
// and it says when the last lease of a thread ends.
func TestProgressOfLeasedThreadsOnly(t *testing.T) {
	s, k := serveWithSink(t)
	// Another process holds t1.
	cmd, out := helper(t, s.dir, nil, "")
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", line)

	c := dial(t, s.dir)
	ctx := context.Background()
	_, release, err := c.Lease(ctx, "t2")
	require.NoError(t, err)
	c.Progress("t1", []byte("not-mine"))     // another process's thread
	c.Progress("t3", []byte("nobody's"))     // held by nobody
	c.Progress("../x", []byte("not-an-id"))  // not a thread id
	c.Progress("t2", []byte("mine"))         // held by this process
	c.Progress("t2.1", []byte("my-child's")) // below it
	c.Progress("t20", []byte("a-prefix"))    // not below it
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 2 }, 20*time.Second, 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	got, ended := k.seen()
	require.Equal(t, []string{"t2 mine 0", "t2.1 my-child's 0"}, got)
	require.Empty(t, ended)

	release()
	require.Eventually(t, func() bool { _, e := k.seen(); return slices.Contains(e, "t2") }, 20*time.Second, 5*time.Millisecond)
	c.Progress("t2", []byte("after"))
	time.Sleep(200 * time.Millisecond)
	got, _ = k.seen()
	require.NotContains(t, got, "t2 after 0", "a thread let go of takes no more")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	require.Eventually(t, func() bool { _, e := k.seen(); return slices.Contains(e, "t1") }, 20*time.Second, 5*time.Millisecond,
		"a dead client's thread is let go of")
}

// TestProgressNeverWaits: Progress returns whatever the server does —
// here the server is stalled in its sink, taking nothing, until all the
// records are handed over; what does not fit is dropped, and counted
// with the next record of its thread that is sent.
func TestProgressNeverWaits(t *testing.T) {
	k := &sink{gate: make(chan struct{})}
	s := serveTo(t, k)
	c := dial(t, s.dir)
	_, release, err := c.Lease(context.Background(), "t1")
	require.NoError(t, err)
	defer release()
	big := make([]byte, 200<<10)
	for i := range big {
		big[i] = 'x'
	}
	handed := make(chan time.Duration, 1)
	go func() {
		began := time.Now()
		for range 100 {
			c.Progress("t1", big) // 20 MB: most cannot be queued
		}
		handed <- time.Since(began)
	}()
	var took time.Duration
	select {
	case took = <-handed:
	case <-time.After(30 * time.Second): // nothing is taken before the gate opens: a Progress that waited would never return
		close(k.gate)
		t.Fatal("Progress waited for a server that takes nothing")
	}
	// A record this small fits whatever is still queued (at most five of
	// 200 KiB in the queue's 1 MiB).
	c.Progress("t1", []byte("last"))
	close(k.gate)
	require.Eventually(t, func() bool {
		got, _ := k.seen()
		return len(got) > 0 && got[len(got)-1][:7] == "t1 last"
	}, 20*time.Second, 5*time.Millisecond)
	got, _ := k.seen()
	var n, dropped int
	for _, g := range got {
		var d int
		fmt.Sscan(g[strings.LastIndexByte(g, ' ')+1:], &d)
		dropped += d // the count goes with the thread's next record queued, big or last
		if g[:7] != "t1 last" {
			n++
		}
	}
	require.Equal(t, 100, n+dropped, "each record is sent or counted dropped")
	require.Positive(t, dropped)
	t.Logf("100 records of 200 KiB handed over in %v: %d sent, %d dropped", took, n, dropped)
}

// TestProgressOversizedIsCountedDropped: a record larger than a record
// may be is never sent, and is counted with the thread's next record, as
// the NATS follower counts its own.
func TestProgressOversizedIsCountedDropped(t *testing.T) {
	s, k := serveWithSink(t)
	c := dial(t, s.dir)
	_, release, err := c.Lease(context.Background(), "t1")
	require.NoError(t, err)
	defer release()
	c.Progress("t1", make([]byte, 300<<10))
	c.Progress("t1", []byte("last"))
	require.Eventually(t, func() bool {
		got, _ := k.seen()
		return len(got) > 0
	}, 20*time.Second, 5*time.Millisecond)
	got, _ := k.seen()
	require.Equal(t, []string{"t1 last 1"}, got)
}
