package natsstore_test

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// chanSink hands each record's arrival to a channel.
type chanSink chan struct{}

func (c chanSink) Progress(string, []byte, int) { c <- struct{}{} }
func (c chanSink) Ended(string)                 {}

// BenchmarkProgressLatency: how long a ~100-byte progress record takes
// from Progress's function in the holder's store to a follower's sink
// (each on a connection of its own to the embedded server), one record
// at a time, against the bare baseline of the same run: a core NATS
// publish on one connection to a subscription on another. Reports the
// medians and their ratio (the goal: a chunk on the page within
// 100 ms).
func BenchmarkProgressLatency(b *testing.B) {
	_, opts := freshNamed()
	holder, watcher := dial(b, shared, opts...), dial(b, shared, opts...)
	ctx := context.Background()
	got := make(chanSink, 1)
	stop, err := watcher.FollowProgress(ctx, got)
	require.NoError(b, err)
	defer stop()
	held, release, err := holder.Lease(ctx, "t1")
	require.NoError(b, err)
	defer release()
	time.Sleep(100 * time.Millisecond) // the follower sees the lease
	pub := holder.Progress(held, "t1")

	pc, err := nats.Connect(shared.ClientURL())
	require.NoError(b, err)
	defer pc.Close()
	sc, err := nats.Connect(shared.ClientURL())
	require.NoError(b, err)
	defer sc.Close()
	bare := make(chan struct{}, 1)
	sub, err := sc.Subscribe("bench.bare."+strconv.Itoa(b.N), func(*nats.Msg) { bare <- struct{}{} })
	require.NoError(b, err)
	defer sub.Unsubscribe()
	require.NoError(b, sc.Flush())

	data := make([]byte, 100)
	var through, raw []time.Duration
	b.ResetTimer()
	for range b.N {
		began := time.Now()
		pub("t1", data)
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			b.Fatal("no record in 10 s")
		}
		through = append(through, time.Since(began))
		began = time.Now()
		require.NoError(b, pc.Publish(sub.Subject, data))
		<-bare
		raw = append(raw, time.Since(began))
	}
	b.StopTimer()
	median := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	mt, mr := median(through), median(raw)
	b.ReportMetric(float64(mt.Microseconds()), "progress-µs-median")
	b.ReportMetric(float64(mr.Microseconds()), "bare-µs-median")
	b.ReportMetric(float64(mt)/float64(mr), "progress/bare")
}
