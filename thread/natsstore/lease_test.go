package natsstore_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// ttl is the lease TTL of the tests. A holder gives up once no renewal
// has succeeded for two thirds of it, and on a loaded machine (CI runs
// at load 8 on 2 cores) a renewal can be starved for longer than the
// 667 ms the least TTL the server counts (1 s) leaves: the tests that
// count on a holder keeping its lease lost it then. Every wait that must
// outlast the TTL is a multiple of it.
const ttl = 5 * time.Second

// leaseStores opens n stores of one fresh stream, each on a connection of
// its own as n processes would, with the tests' lease TTL, and returns
// the stream's name too.
func leaseStores(t *testing.T, n int) (string, []*natsstore.Store) {
	t.Helper()
	name, opts := freshNamed()
	opts = append(opts, natsstore.WithLeaseTTL(ttl))
	stores := make([]*natsstore.Store, n)
	for i := range stores {
		stores[i] = dial(t, shared, opts...)
	}
	return name, stores
}

// rawLeases opens the leases bucket of stream name directly, as a person
// with the nats tool would.
func rawLeases(t *testing.T, name string) jetstream.KeyValue {
	t.Helper()
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(context.Background(), name+"_LEASES")
	require.NoError(t, err)
	return kv
}

type leaseResult struct {
	held    context.Context
	release func()
	err     error
	at      time.Time
}

// leaseAsync calls Lease on its own goroutine.
func leaseAsync(ctx context.Context, s *natsstore.Store, id string) <-chan leaseResult {
	ch := make(chan leaseResult, 1)
	go func() {
		held, release, err := s.Lease(ctx, id)
		ch <- leaseResult{held, release, err, time.Now()}
	}()
	return ch
}

func requireWaiting(t *testing.T, ch <-chan leaseResult, d time.Duration) {
	t.Helper()
	select {
	case r := <-ch:
		if r.err == nil {
			r.release()
		}
		t.Fatalf("Lease returned while another held the lease (err %v)", r.err)
	case <-time.After(d):
	}
}

func receive(t *testing.T, ch <-chan leaseResult, within time.Duration) leaseResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		t.Fatalf("Lease did not return within %s", within)
		return leaseResult{}
	}
}

// requireFree requires the lease of id in stream name to be free: its key
// gone (deleted or purged), not merely run out later.
func requireFree(t *testing.T, name, id string) {
	t.Helper()
	_, err := rawLeases(t, name).Get(context.Background(), hex.EncodeToString([]byte(id)))
	if !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted) {
		t.Fatalf("the lease of %s is not free: %v", id, err)
	}
}

func requireDone(t *testing.T, ctx context.Context, within time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(within):
		t.Fatalf("context not cancelled within %s", within)
	}
}

// TestLeaseWaitsForRelease: a second process waits while the first holds
// the lease, longer than the TTL (the holder renews it), and takes it as
// soon as the first releases it.
func TestLeaseWaitsForRelease(t *testing.T) {
	name, s := leaseStores(t, 2)
	ctx := context.Background()
	const id = "fix.login"
	held, release, err := s[0].Lease(ctx, id)
	require.NoError(t, err)

	// The key names the thread in hex and its value the holder.
	e, err := rawLeases(t, name).Get(ctx, hex.EncodeToString([]byte(id)))
	require.NoError(t, err)
	var who struct {
		Thread, Host, ID string
		PID              int
	}
	require.NoError(t, json.Unmarshal(e.Value(), &who))
	host, _ := os.Hostname()
	require.Equal(t, id, who.Thread)
	require.Equal(t, host, who.Host)
	require.Equal(t, os.Getpid(), who.PID)
	require.NotEmpty(t, who.ID)

	waiting := leaseAsync(ctx, s[1], id)
	requireWaiting(t, waiting, ttl+ttl/4)
	require.NoError(t, held.Err(), "renewed, the lease outlives its TTL")

	released := time.Now()
	release()
	require.ErrorIs(t, context.Cause(held), context.Canceled)
	require.NotErrorIs(t, context.Cause(held), thread.ErrLeaseLost)
	r := receive(t, waiting, 30*time.Second) // the bound is for a loaded machine
	require.NoError(t, r.err)
	t.Logf("the waiter took the lease %v after the release", r.at.Sub(released))
	require.NoError(t, r.held.Err())
	r.release()
}

// TestLeaseWaitCancelled: a Lease waiting for another holder returns
// promptly with its context's error.
func TestLeaseWaitCancelled(t *testing.T) {
	_, s := leaseStores(t, 2)
	_, release, err := s[0].Lease(context.Background(), "t")
	require.NoError(t, err)
	defer release()

	ctx, cancel := context.WithCancel(context.Background())
	waiting := leaseAsync(ctx, s[1], "t")
	requireWaiting(t, waiting, 100*time.Millisecond)
	cancel()
	r := receive(t, waiting, 10*time.Second) // not the hour the holder keeps it (the bound is for a loaded machine)
	require.ErrorIs(t, r.err, context.Canceled)
	require.ErrorContains(t, r.err, "held by process")

	ctx, cancel = context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = s[1].Lease(ctx, "t")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 10*time.Second, "the context's 150 ms, not the holder's hour")

	// An invalid id, a cancelled context: refused at once.
	_, _, err = s[1].Lease(context.Background(), "")
	require.Error(t, err)
	_, _, err = s[1].Lease(ctx, "u")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestLeaseDeadHolder: a holder whose process dies (its connection drops,
// it never releases) loses the lease once the TTL has run, and another
// takes it then — not before the dead holder's held context has ended.
func TestLeaseDeadHolder(t *testing.T) {
	_, opts := freshNamed()
	opts = append(opts, natsstore.WithLeaseTTL(ttl))
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	dead, err := natsstore.Open(context.Background(), nc, opts...)
	require.NoError(t, err)
	other := dial(t, shared, opts...)

	ctx := context.Background()
	held, release, err := dead.Lease(ctx, "t")
	require.NoError(t, err)
	waiting := leaseAsync(ctx, other, "t")
	requireWaiting(t, waiting, ttl/2)

	died := time.Now()
	nc.Close()
	heldEnded := make(chan time.Time, 1)
	context.AfterFunc(held, func() { heldEnded <- time.Now() })
	r := receive(t, waiting, 30*time.Second) // the TTL, not the minute a purge marker lasts (the bound is for a loaded machine)
	require.NoError(t, r.err)
	defer r.release()
	require.GreaterOrEqual(t, r.at.Sub(died), ttl/2, "the lease outlived its renewals by most of the TTL")
	// The dead holder gives up a third of the TTL before the server may
	// let the key go, by its own clock: well before another takes it.
	var ended time.Time
	select {
	case ended = <-heldEnded:
	default:
		t.Fatal("another took the lease while the dead holder's context was live")
	}
	require.ErrorIs(t, context.Cause(held), thread.ErrLeaseLost)
	// By how much is for the timers of a loaded machine to say: logged.
	t.Logf("held ended %s before another took the lease", r.at.Sub(ended))

	release()
	release()
	require.NoError(t, dead.Close())
	require.NoError(t, r.held.Err())
}

// TestLeaseTaken: a holder whose key is taken from it (here deleted by
// hand, and another holder takes it) finds out at its next renewal: held
// ends with ErrLeaseLost, and its release leaves the new holder's key be.
func TestLeaseTaken(t *testing.T) {
	name, s := leaseStores(t, 3)
	ctx := context.Background()
	held, release, err := s[0].Lease(ctx, "t")
	require.NoError(t, err)
	defer release()

	require.NoError(t, rawLeases(t, name).Purge(ctx, hex.EncodeToString([]byte("t"))))
	r := receive(t, leaseAsync(ctx, s[1], "t"), 10*time.Second)
	require.NoError(t, r.err)
	defer r.release()

	requireDone(t, held, 30*time.Second) // at its next renewal, a third of the TTL on (the bound is for a loaded machine)
	require.ErrorIs(t, context.Cause(held), thread.ErrLeaseLost)
	release()

	wait, cancel := context.WithTimeout(ctx, ttl/2)
	defer cancel()
	_, _, err = s[2].Lease(wait, "t")
	require.ErrorIs(t, err, context.DeadlineExceeded, "the new holder still holds it")
	require.NoError(t, r.held.Err())
}

// TestLeaseReleaseTwice: release may be called again, harmlessly, and the
// lease is free at once after the first.
func TestLeaseReleaseTwice(t *testing.T) {
	name, s := leaseStores(t, 2)
	ctx := context.Background()
	for range 3 {
		held, release, err := s[0].Lease(ctx, "t")
		require.NoError(t, err)
		release()
		release()
		require.Error(t, held.Err())
		requireFree(t, name, "t") // free once release returns, not once the TTL has run
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		held, release2, err := s[1].Lease(wait, "t")
		cancel()
		require.NoError(t, err)
		require.ErrorIs(t, held.Err(), context.Canceled, "held derives from the context given to Lease")
		release2()
		release()
	}
	// Leases of different threads do not wait for each other.
	_, r1, err := s[0].Lease(ctx, "a")
	require.NoError(t, err)
	defer r1()
	_, r2, err := s[1].Lease(ctx, "a.b")
	require.NoError(t, err)
	defer r2()
}

// TestLeaseParentCancelled: the holder's context ending cancels held, but
// the lease is kept, renewed, until release.
func TestLeaseParentCancelled(t *testing.T) {
	_, s := leaseStores(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	held, release, err := s[0].Lease(ctx, "t")
	require.NoError(t, err)
	cancel()
	require.ErrorIs(t, context.Cause(held), context.Canceled)

	wait, cancelWait := context.WithTimeout(context.Background(), ttl+ttl/4)
	defer cancelWait()
	_, _, err = s[1].Lease(wait, "t")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	release()
	_, release2, err := s[1].Lease(context.Background(), "t")
	require.NoError(t, err)
	release2()
}

// TestLeaseClose: Close releases the leases a store holds, ending their
// contexts with ErrLeaseLost and ErrClosed, and fails the Leases waiting
// on it with ErrClosed.
func TestLeaseClose(t *testing.T) {
	name, s := leaseStores(t, 3)
	ctx := context.Background()
	held, release, err := s[0].Lease(ctx, "t")
	require.NoError(t, err)
	_, _, err = s[0].Lease(ctx, "u")
	require.NoError(t, err) // never released: Close does it
	_, rw, err := s[1].Lease(ctx, "w")
	require.NoError(t, err)
	defer rw()
	waitingT := leaseAsync(ctx, s[1], "t")
	waitingOnClosed := leaseAsync(ctx, s[2], "w")
	requireWaiting(t, waitingT, 100*time.Millisecond)

	require.NoError(t, s[0].Close())
	require.ErrorIs(t, context.Cause(held), thread.ErrLeaseLost)
	require.ErrorIs(t, context.Cause(held), thread.ErrClosed)
	release()
	requireFree(t, name, "u") // Close released it; it did not run out (t a waiter may hold already)
	r := receive(t, waitingT, 30*time.Second)
	require.NoError(t, r.err)
	defer r.release()
	_, ru, err := s[1].Lease(ctx, "u")
	require.NoError(t, err, "Close released the lease nobody released")
	ru()

	require.NoError(t, s[2].Close())
	r2 := receive(t, waitingOnClosed, 30*time.Second)
	require.ErrorIs(t, r2.err, thread.ErrClosed)
	_, _, err = s[0].Lease(ctx, "t")
	require.ErrorIs(t, err, thread.ErrClosed)
	if errors.Is(err, context.Canceled) {
		t.Fatal("closed, not cancelled")
	}
}

// TestLeaseOptions: the TTL is rounded up to whole seconds, the unit the
// server counts in, and a leases bucket that cannot expire keys one by one
// is refused at Open, as is a stream name no bucket could be named after.
func TestLeaseOptions(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		ttl  time.Duration
		want string
	}{{1500 * time.Millisecond, "2s"}, {0, "1s"}, {3 * time.Second, "3s"}} {
		name, opts := freshNamed()
		s := dial(t, shared, append(opts, natsstore.WithLeaseTTL(c.ttl))...)
		_, release, err := s.Lease(ctx, "t")
		require.NoError(t, err)
		e, err := rawLeases(t, name).Get(ctx, hex.EncodeToString([]byte("t")))
		require.NoError(t, err)
		var v struct{ TTL string }
		require.NoError(t, json.Unmarshal(e.Value(), &v))
		require.Equal(t, c.want, v.TTL, "WithLeaseTTL(%s)", c.ttl)
		release()
	}

	name, opts := freshNamed()
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name + "_LEASES"})
	require.NoError(t, err)
	_, err = natsstore.Open(ctx, nc, opts...)
	require.ErrorContains(t, err, "limit markers")

	for _, bad := range []string{"", "a.b", "a:b", "a b", "a*"} {
		_, err = natsstore.Open(ctx, nc, natsstore.WithStream(bad))
		require.ErrorContains(t, err, "stream name", "%q", bad)
	}
}

// TestLeaseWallClockJump: a holder whose wall clock jumps past its lease's
// deadline, as a machine's does when it resumes from suspend (the
// monotonic clock stops while it sleeps), gives the lease up at once, not
// at its next renewal.
func TestLeaseWallClockJump(t *testing.T) {
	_, opts := freshNamed()
	s := dial(t, shared, append(opts, natsstore.WithLeaseTTL(time.Minute))...)
	var jump atomic.Int64
	natsstore.SetWallClock(s, func() time.Time { return time.Now().Add(time.Duration(jump.Load())) })
	held, release, err := s.Lease(context.Background(), "t")
	require.NoError(t, err)
	defer release()
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, held.Err())
	jump.Store(int64(time.Hour))
	requireDone(t, held, 10*time.Second) // the renewal is due 20 s after the lease
	require.ErrorIs(t, context.Cause(held), thread.ErrLeaseLost)
}

// TestLeaseHeldEndsBeforeTheKeyGoes: release and Close cancel held before
// they delete the lease's key, so when anyone can see the key gone (and
// take the lease), held is already done.
func TestLeaseHeldEndsBeforeTheKeyGoes(t *testing.T) {
	name, s := leaseStores(t, 2)
	ctx := context.Background()
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	key := hex.EncodeToString([]byte("t"))
	sub, err := nc.SubscribeSync("$KV." + name + "_LEASES." + key)
	require.NoError(t, err)
	require.NoError(t, nc.Flush())

	// liveAtDelete waits for the key's deletion and reports whether held
	// was still live when it arrived.
	liveAtDelete := func(held context.Context) bool {
		for {
			m, err := sub.NextMsg(5 * time.Second)
			require.NoError(t, err)
			if m.Header.Get("KV-Operation") != "" {
				return held.Err() == nil
			}
		}
	}
	for i := range 6 {
		st := s[i%2]
		held, release, err := st.Lease(ctx, "t")
		require.NoError(t, err)
		done := make(chan bool, 1)
		go func() { done <- liveAtDelete(held) }()
		if i == 5 {
			require.NoError(t, st.Close()) // Close releases it
		} else {
			release()
		}
		require.False(t, <-done, "round %d: the key was deleted while held was live", i)
		release()
	}
}
