package natsstore_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// progressSink is a ProgressSink that keeps what it is told.
type progressSink struct {
	mu    sync.Mutex // guards got and ended
	got   []string   // "thread data dropped"
	ended []string
}

func (s *progressSink) Progress(id string, data []byte, dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, fmt.Sprintf("%s %s %d", id, data, dropped))
}

func (s *progressSink) Ended(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = append(s.ended, id)
}

func (s *progressSink) seen() ([]string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got), slices.Clone(s.ended)
}

// TestProgressOfTheLeaseHolderOnly: a follower of the store takes the
// progress records its holder publishes for a thread and the threads
// below it, and none from a process that does not hold the thread — a
// forged or stale lease id, another thread's lease, a thread not below
// the one held, a subject that names no thread, an oversized record, a
// bad count — and it says when the lease ends, after which nothing of
// the old holder is taken. Nothing of it is in the stream.
func TestProgressOfTheLeaseHolderOnly(t *testing.T) {
	name, stores := leaseStores(t, 3)
	holder, other, watcher := stores[0], stores[1], stores[2]
	prefix := "t" + strings.TrimPrefix(name, "T")
	ctx := context.Background()

	k := &progressSink{}
	stop, err := watcher.FollowProgress(ctx, k)
	require.NoError(t, err)
	defer stop()

	require.Nil(t, holder.Progress(ctx, "t1"), "no lease, no publisher")
	held, release, err := holder.Lease(ctx, "t1")
	require.NoError(t, err)
	defer release()
	require.Nil(t, other.Progress(held, "t1"), "another store's lease is not its own")
	oheld, orelease, err := other.Lease(ctx, "t2")
	require.NoError(t, err)
	defer orelease()

	var holding struct {
		ID string `json:"id"`
	}
	e, err := rawLeases(t, name).Get(ctx, hex.EncodeToString([]byte("t1")))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(e.Value(), &holding))
	var t2 struct {
		ID string `json:"id"`
	}
	e, err = rawLeases(t, name).Get(ctx, hex.EncodeToString([]byte("t2")))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(e.Value(), &t2))

	// A hostile publisher on the same NATS.
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	forge := func(subjectID, root, lease, dropped string, data []byte) {
		m := nats.NewMsg(prefix + ".p." + subjectID)
		m.Data = data
		m.Header.Set("Harness-Held", root)
		m.Header.Set("Harness-Lease", lease)
		if dropped != "" {
			m.Header.Set("Harness-Dropped", dropped)
		}
		require.NoError(t, nc.PublishMsg(m))
	}
	hexID := func(id string) string { return hex.EncodeToString([]byte(id)) }
	forge(hexID("t1"), "t1", "0123456789abcdef", "", []byte("forged-lease"))
	forge(hexID("t1"), "t1", "", "", []byte("no-lease"))
	forge(hexID("t1"), "t2", t2.ID, "", []byte("t2s-lease-for-t1"))
	forge(hexID("t10"), "t1", holding.ID, "", []byte("not-below"))
	forge("zz", "t1", holding.ID, "", []byte("not-hex"))
	forge(hexID("../x"), "..", holding.ID, "", []byte("not-an-id"))
	forge(hexID("t1"), "t1", holding.ID, "-4", []byte("negative-count"))
	forge(hexID("t1"), "t1", holding.ID, "x", []byte("bad-count"))
	forge(hexID("t1"), "t1", holding.ID, "", make([]byte, 300<<10))

	pub := holder.Progress(held, "t1")
	require.NotNil(t, pub)
	pub("t1", []byte("mine"))
	pub("t1.2", []byte("my-child's"))
	pub("t10", []byte("a-prefix")) // not below t1: not sent
	opub := other.Progress(oheld, "t2")
	opub("t2", []byte("t2-mine"))
	opub("t1", []byte("t1-not-t2s")) // not below t2: not sent
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 3 }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	got, ended := k.seen()
	slices.Sort(got)
	// The record too large to take, sent under the lease held, is counted
	// dropped with the thread's next record if it came before it (the
	// publishers' connections are not ordered with each other).
	require.Contains(t, []string{"t1 mine 0", "t1 mine 1"}, got[0])
	got[0] = "t1 mine"
	require.Equal(t, []string{"t1 mine", "t1.2 my-child's 0", "t2 t2-mine 0"}, got)
	require.Empty(t, ended)

	release()
	require.Eventually(t, func() bool { _, e := k.seen(); return slices.Contains(e, "t1") }, 10*time.Second, 5*time.Millisecond)
	pub("t1", []byte("after")) // the lease ended: not sent
	forge(hexID("t1"), "t1", holding.ID, "", []byte("stale-lease"))
	time.Sleep(300 * time.Millisecond)
	got, _ = k.seen()
	require.Len(t, got, 3, "nothing after the lease ended: %q", got)

	// Ephemeral: the stream holds no thread t1.
	hs, err := watcher.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Empty(t, hs)
}

// stallable is a nats.CustomDialer whose connections write nothing
// while stalled: a NATS that takes nothing from the client (a slow
// link, a server that does not read).
type stallable struct {
	mu     sync.Mutex    // guards gate
	gate   chan struct{} // closed while writes go through
	dialer net.Dialer
}

func newStallable() *stallable {
	g := make(chan struct{})
	close(g)
	return &stallable{gate: g}
}

func (s *stallable) Dial(network, address string) (net.Conn, error) {
	c, err := s.dialer.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return stalledConn{c, s}, nil
}

// stall holds every write until the function it returns is called.
func (s *stallable) stall() (resume func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := make(chan struct{})
	s.gate = g
	return sync.OnceFunc(func() { close(g) })
}

type stalledConn struct {
	net.Conn
	s *stallable
}

func (c stalledConn) Write(b []byte) (int, error) {
	c.s.mu.Lock()
	g := c.s.gate
	c.s.mu.Unlock()
	<-g
	return c.Conn.Write(b)
}

// TestProgressNeverWaitsForNATS: publishing returns however much is
// published, here with the holder's connection writing nothing to NATS
// until it has all been handed over; what does not fit is dropped and
// counted with the thread's next record that is sent.
func TestProgressNeverWaitsForNATS(t *testing.T) {
	_, opts := freshNamed()
	opts = append(opts, natsstore.WithLeaseTTL(ttl))
	watcher := dial(t, shared, opts...)
	link := newStallable()
	nc, err := nats.Connect(shared.ClientURL(), nats.SetCustomDialer(link))
	require.NoError(t, err)
	defer nc.Close()
	holder, err := natsstore.Open(context.Background(), nc, opts...)
	require.NoError(t, err)
	defer holder.Close()
	ctx := context.Background()
	k := &progressSink{}
	stop, err := watcher.FollowProgress(ctx, k)
	require.NoError(t, err)
	defer stop()
	held, release, err := holder.Lease(ctx, "t1")
	require.NoError(t, err)
	defer release()
	pub := holder.Progress(held, "t1")
	big := []byte(strings.Repeat("x", 200<<10))
	resume := link.stall()
	defer resume()
	handed := make(chan time.Duration, 1)
	go func() {
		began := time.Now()
		for range 100 {
			pub("t1", big) // 20 MB: most cannot be queued
		}
		handed <- time.Since(began)
	}()
	var took time.Duration
	select {
	case took = <-handed:
	case <-time.After(30 * time.Second): // NATS takes nothing before resume: a publish that waited for it would never return
		t.Fatal("publishing waited for NATS")
	}
	t.Logf("100 records of 200 KiB handed over in %v, NATS taking nothing", took)
	// A record this small fits whatever is still queued (at most five of
	// 200 KiB in the queue's 1 MiB).
	pub("t1", []byte("last"))
	resume()
	require.Eventually(t, func() bool {
		got, _ := k.seen()
		return len(got) > 0 && strings.HasPrefix(got[len(got)-1], "t1 last ")
	}, 30*time.Second, 5*time.Millisecond)
	got, _ := k.seen()
	var n, dropped int
	for _, g := range got {
		n++
		f := strings.Fields(g)
		var d int
		fmt.Sscan(f[len(f)-1], &d)
		dropped += d
	}
	require.Equal(t, 101, n+dropped, "every record is sent or counted: %d sent, %d dropped", n, dropped)
}
