package natsstore_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
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
	// Each part follows with a follower of its own, started when the part
	// starts, so that what one keeps is not another's: one that keeps
	// records for longer than any lag of its watch of the bucket on a
	// loaded machine, where a record must be kept until its lease is
	// seen; one that keeps them a short while, where one must run out.
	follow := func(wait time.Duration) *progressSink {
		natsstore.SetProgressWait(watcher, wait)
		k := &progressSink{}
		stop, err := watcher.FollowProgress(ctx, k)
		require.NoError(t, err)
		t.Cleanup(stop)
		return k
	}
	only := func(k *progressSink, prefix string) []string {
		got, _ := k.seen()
		var of []string
		for _, g := range got {
			if strings.HasPrefix(g, prefix) {
				of = append(of, g)
			}
		}
		return of
	}
	k := follow(time.Minute)

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
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 3 }, 30*time.Second, 5*time.Millisecond)
	send("t5", "t5", "lease-5", "third") // seen now: at once
	require.Eventually(t, func() bool { got, _ := k.seen(); return len(got) == 4 }, 30*time.Second, 5*time.Millisecond)
	got, _ = k.seen()
	require.Equal(t, []string{"t5 first 0", "t5.1 child 0", "t5 second 0", "t5 third 0"}, got)

	// Kept for a while only: a lease seen after that delivers nothing
	// of what came before it, and says it dropped one. The follower saw
	// the leases held when it started (t9's among them) before it took
	// any record; t9's mark, published after too-early, is handed over
	// after too-early was taken (one publisher, one subscription: in
	// order), so a wait as long as the follower keeps records, counted
	// from the mark, is past too-early's time whatever the load.
	const short = 300 * time.Millisecond
	hold("t9", "lease-9")
	kShort := follow(short)
	send("t7", "t7", "lease-7", "too-early")
	send("t6", "t6", "lease-6-forged", "forged") // runs out, dropped under the forged lease
	send("t9", "t9", "lease-9", "mark")
	require.NoError(t, nc.Flush())
	require.Eventually(t, func() bool { return len(only(kShort, "t9 mark")) == 1 }, 30*time.Second, 5*time.Millisecond)
	time.Sleep(short)
	hold("t7", "lease-7")
	// t9's lease taken again after t7's: once the follower says t9's
	// first lease ended, it has seen t7's (the bucket's changes come in
	// order), and in-time is taken at once, not kept.
	hold("t9", "lease-9b")
	require.Eventually(t, func() bool { _, ended := kShort.seen(); return slices.Contains(ended, "t9") }, 30*time.Second, 5*time.Millisecond)
	send("t7", "t7", "lease-7", "in-time")
	require.Eventually(t, func() bool { return len(only(kShort, "t7 ")) > 0 }, 30*time.Second, 5*time.Millisecond)
	// The forged lease's dropped record is not counted for the real one
	// (t6's lease was held before the follower started: taken at once).
	send("t6", "t6", "lease-6", "t6-real")
	require.Eventually(t, func() bool { return len(only(kShort, "t6 ")) > 0 }, 30*time.Second, 5*time.Millisecond)
	require.NoError(t, nc.Flush())
	send("t9", "t9", "lease-9b", "mark2") // after it, nothing more of t6 or t7 is on its way
	require.Eventually(t, func() bool { return len(only(kShort, "t9 mark2")) == 1 }, 30*time.Second, 5*time.Millisecond)
	require.Equal(t, []string{"t7 in-time 1"}, only(kShort, "t7 "))
	require.Equal(t, []string{"t6 t6-real 0"}, only(kShort, "t6 "))

	// Bounded: of many records of a lease not seen, the first 256; the
	// 44 others are counted. The mark after them says they were all
	// taken (kept or dropped) before the lease is.
	kMany := follow(time.Minute)
	for i := range 300 {
		send("t8", "t8", "lease-8", fmt.Sprintf("n%03d", i))
	}
	send("t9", "t9", "lease-9b", "mark3")
	require.NoError(t, nc.Flush())
	require.Eventually(t, func() bool { return len(only(kMany, "t9 mark3")) == 1 }, 30*time.Second, 5*time.Millisecond)
	hold("t8", "lease-8")
	require.Eventually(t, func() bool { return len(only(kMany, "t8 ")) >= 256 }, 30*time.Second, 5*time.Millisecond)
	// A record too large to take, under the lease held, is counted too.
	send("t8", "t8", "lease-8", strings.Repeat("x", 256<<10+1))
	send("t8", "t8", "lease-8", "after-large")
	require.Eventually(t, func() bool { return len(only(kMany, "t8 ")) == 256+1 }, 30*time.Second, 5*time.Millisecond)
	got = only(kMany, "t8 ")
	for i, g := range got[:256] {
		dropped := 0
		if i == 0 {
			dropped = 44
		}
		require.Equal(t, fmt.Sprintf("t8 n%03d %d", i, dropped), g)
	}
	require.Equal(t, "t8 after-large 1", got[256])
	// The follower that keeps records long never handed over the forged
	// lease's record, nor a count of it.
	for _, g := range append(only(k, "t6 "), only(kShort, "t6 ")...) {
		require.NotContains(t, g, "forged")
	}
}
