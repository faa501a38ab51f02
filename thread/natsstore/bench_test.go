package natsstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// The benchmark measures the store against raw JetStream doing the same
// work in the same run on the same embedded server, interleaved in blocks
// so that drift in the machine's speed hits both alike, and reports
// ratio = store rate / raw rate. ns/op and allocs/op are the store's alone
// (and include the embedded server, which runs in the same process).

// benchTurn is the payload of the benchmark's facts: a model turn whose
// stored record is about 400 bytes, as in package thread's benchmarks.
var benchTurn = facts.ModelTurn{
	Turn:      12,
	Text:      strings.Repeat("Reading auth.go to find where the session expires. ", 4),
	ToolCalls: []facts.ToolCall{{ID: "call_0012", Name: "read", Args: `{"path":"internal/auth/session.go"}`}},
	Usage:     facts.Usage{InputTokens: 18234, OutputTokens: 211},
}

// BenchmarkAppend appends one ~400-byte fact per append, with one writer
// and with 64 writers on 64 threads. The raw baseline is one acknowledged
// JetStream publish of the same fact record per append (js.Publish to a
// subject per writer, file storage), with the same concurrency: the least
// it takes to put the fact durably in JetStream. The store does more per
// append: it reads the head, and publishes the fact and its cause's marker
// as an atomic batch whose every subject is checked to be empty.
func BenchmarkAppend(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			benchAppend(b, writers)
		})
	}
}

func benchAppend(b *testing.B, writers int) {
	ctx := context.Background()
	store := dial(b, shared, freshStream()...)

	n := streams.Add(1)
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(b, err)
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(b, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name: fmt.Sprintf("RAW%d", n), Subjects: []string{fmt.Sprintf("raw%d.>", n)}, Storage: jetstream.FileStorage,
	})
	require.NoError(b, err)

	drafts := make([]facts.Draft, b.N)
	records := make([][]byte, b.N)
	var prev facts.Hash
	at := time.Now()
	for i := range drafts {
		d, err := facts.NewDraft(facts.KindModelTurn, fmt.Sprintf("infer/turn/%d", i), benchTurn)
		require.NoError(b, err)
		drafts[i] = d
		f := facts.Fact{Thread: "bench", Seq: uint64(i + 1), Kind: d.Kind, Cause: d.Cause, At: at.Add(time.Duration(i) * time.Microsecond), Data: d.Data, Prev: prev}
		records[i], err = facts.Encode(f)
		require.NoError(b, err)
		prev = f.Hash()
	}
	ids := make([]string, writers)
	rawSubjects := make([]string, writers)
	for w := range ids {
		ids[w] = fmt.Sprintf("bench-%02d", w)
		rawSubjects[w] = fmt.Sprintf("raw%d.%02d", n, w)
	}
	heads := make([]uint64, writers)

	// run performs ops appends from writers goroutines, writer w on
	// thread w, and returns how long they took.
	run := func(ops int, appendOne func(w, op int) error) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for w := range writers {
			wg.Go(func() {
				for {
					op := int(next.Add(1)) - 1
					if op >= ops {
						return
					}
					if err := appendOne(w, op); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}

	block := 32 * writers
	var rawTime, storeTime time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += block {
		n := min(block, b.N-done)
		b.StopTimer()
		rawTime += run(n, func(w, op int) error {
			_, err := js.Publish(ctx, rawSubjects[w], records[done+op])
			return err
		})
		b.StartTimer()
		storeTime += run(n, func(w, op int) error {
			h, err := store.Append(ctx, ids[w], heads[w], drafts[done+op])
			heads[w] = h.Seq
			return err
		})
	}
	b.StopTimer()
	ops := float64(b.N)
	b.ReportMetric(ops/storeTime.Seconds(), "appends/s")
	b.ReportMetric(ops/rawTime.Seconds(), "raw-appends/s")
	b.ReportMetric(rawTime.Seconds()/storeTime.Seconds(), "ratio")
}
