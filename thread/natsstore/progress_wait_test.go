package natsstore_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// TestProgressOfALeaseNotSeenYet: the follower's watch of the leases
// bucket may lag the records (a worker takes a lease and at once
// publishes its first lines). A record of a lease the follower has not
// seen is kept, in order, and handed over when the bucket shows that
// lease held; one whose lease is not seen in time, or beyond the bound
// of what is kept, is dropped, and counted in the dropped number of the
// thread's next record handed over under that lease (so the page says
// how many it missed); a lease that never comes delivers nothing, not
// even a count.
func TestProgressOfALeaseNotSeenYet(t *testing.T) {
	name, stores := leaseStores(t, 1)
	watcher := stores[0]
	prefix := "t" + strings.TrimPrefix(name, "T")
	ctx := context.Background()
	natsstore.SetProgressWait(watcher, 2*time.Second)

	k := &progressSink{}
	stop, err := watcher.FollowProgress(ctx, k)
	require.NoError(t, err)
	defer stop()

	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	hexID := func(id string) string { return hex.EncodeToString([]byte(id)) }
	send := func(id, root, lease, data string) {
		m := nats.NewMsg(prefix + ".p." + hexID(id))
		m.Data = []byte(data)
		m.Header.Set("Harness-Held", root)
		m.Header.Set("Harness-Lease", lease)
		require.NoError(t, nc.PublishMsg(m))
	}
	kv := rawLeases(t, name)
	hold := func(id, lease string) {
		_, err := kv.Put(ctx, hexID(id), fmt.Appendf(nil, `{"thread":%q,"id":%q}`, id, lease))
		require.NoError(t, err)
	}

	// Records before their lease is in the bucket: kept, then handed
	// over in order once it is.
	send("t5", "t5", "lease-5", "first")
	send("t5.1", "t5", "lease-5", "child")
	send("t5", "t5", "lease-5", "second")
	send("t6", "t6", "lease-6-forged", "forged") // a lease that never comes
	require.NoError(t, nc.Flush())
	time.Sleep(100 * time.Millisecond)
	got, _ := k.seen()
	require.Empty(t, got, "nothing before the lease is seen")
	hold("t6", "lease-6")
	hold("t5", "lease-5")
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 3 }, 10*time.Second, 5*time.Millisecond)
	send("t5", "t5", "lease-5", "third") // seen now: at once
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 4 }, 10*time.Second, 5*time.Millisecond)
	got, _ = k.seen()
	require.Equal(t, []string{"t5 first 0", "t5.1 child 0", "t5 second 0", "t5 third 0"}, got)

	// Kept for a while only: a lease seen after that delivers nothing
	// of what came before it, and says it dropped one.
	send("t7", "t7", "lease-7", "too-early")
	require.NoError(t, nc.Flush())
	time.Sleep(2500 * time.Millisecond)
	hold("t7", "lease-7")
	send("t7", "t7", "lease-7", "in-time")
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 5 }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	got, _ = k.seen()
	require.Equal(t, "t7 in-time 1", got[4], "%q", got)
	require.Len(t, got, 5, "%q", got)

	// Bounded: of many records of a lease not seen, the first 256; the
	// 44 others are counted.
	for i := range 300 {
		send("t8", "t8", "lease-8", fmt.Sprintf("n%03d", i))
	}
	require.NoError(t, nc.Flush())
	time.Sleep(200 * time.Millisecond)
	hold("t8", "lease-8")
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) >= 5+256 }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	got, _ = k.seen()
	require.Len(t, got, 5+256)
	for i, g := range got[5:] {
		dropped := 0
		if i == 0 {
			dropped = 44
		}
		require.Equal(t, fmt.Sprintf("t8 n%03d %d", i, dropped), g)
	}
	// A record too large to take, under the lease held, is counted too.
	send("t8", "t8", "lease-8", strings.Repeat("x", 256<<10+1))
	send("t8", "t8", "lease-8", "after-large")
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 5+256+1 }, 10*time.Second, 5*time.Millisecond)
	got, _ = k.seen()
	require.Equal(t, "t8 after-large 1", got[5+256])
	// The forged lease of t6 was never handed over, nor its count.
	for _, g := range got {
		require.NotContains(t, g, "forged")
	}
	send("t6", "t6", "lease-6", "t6-real")
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 5+256+2 }, 10*time.Second, 5*time.Millisecond)
	got, _ = k.seen()
	require.Equal(t, "t6 t6-real 0", got[5+256+1], "the forged lease's dropped record is not counted for the real one")
}
