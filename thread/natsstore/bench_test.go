package natsstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// The benchmarks measure the store against raw JetStream doing the same
// work in the same run on the same embedded server, interleaved in blocks
// so that drift in the machine's speed hits both alike, and report
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

func benchDraft(b testing.TB, i int) facts.Draft {
	d, err := facts.NewDraft(facts.KindModelTurn, fmt.Sprintf("infer/turn/%d", i), benchTurn)
	require.NoError(b, err)
	return d
}

// rawJS connects to the shared server as a plain JetStream client.
func rawJS(b testing.TB) (*nats.Conn, jetstream.JetStream) {
	nc, err := nats.Connect(shared.ClientURL())
	require.NoError(b, err)
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(b, err)
	return nc, js
}

// BenchmarkAppend appends one ~400-byte fact per append, with one writer
// and with 64 writers on 64 threads. The raw baseline is what an append
// cannot do without: one conditional JetStream publish of the same record
// bytes per append, to a subject per writer of a stream with the same
// settings (file storage, one replica), expecting the subject's last
// sequence from the previous ack and with a message id, with the same
// concurrency. The store does that and builds the record, checks the
// causes against its view of the thread, and keeps the view.
func BenchmarkAppend(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			benchAppend(b, writers)
		})
	}
}

func benchAppend(b *testing.B, writers int) {
	ctx := context.Background()
	name, opts := freshNamed()
	store := dial(b, shared, opts...)
	_, js := rawJS(b)
	raw := "RAW" + name
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: raw, Subjects: []string{strings.ToLower(raw) + ".>"}, Storage: jetstream.FileStorage,
		DenyDelete: true, DenyPurge: true,
	})
	require.NoError(b, err)

	// Each writer's thread and raw subject exist before the clock runs,
	// and the raw records are the store's bytes.
	drafts := make([]facts.Draft, b.N)
	records := make([][]byte, b.N)
	var head thread.Head
	for i := range drafts {
		drafts[i] = benchDraft(b, i+1)
		records[i], head, err = natsstore.EncodeRecord("bench", head, drafts[i:i+1], time.Now())
		require.NoError(b, err)
	}
	ids := make([]string, writers)
	rawSubjects := make([]string, writers)
	heads := make([]uint64, writers)
	rawLast := make([]uint64, writers)
	for w := range ids {
		ids[w] = fmt.Sprintf("bench-%02d", w)
		h, err := store.Append(ctx, ids[w], 0, benchDraft(b, 0))
		require.NoError(b, err)
		heads[w] = h.Seq
		rawSubjects[w] = fmt.Sprintf("%s.%02d", strings.ToLower(raw), w)
		ack, err := js.Publish(ctx, rawSubjects[w], records[0])
		require.NoError(b, err)
		rawLast[w] = ack.Sequence
	}

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
			m := &nats.Msg{Subject: rawSubjects[w], Data: records[done+op], Header: nats.Header{
				jetstream.ExpectedLastSubjSeqHeader: []string{strconv.FormatUint(rawLast[w], 10)},
				jetstream.MsgIDHeader:               []string{ids[w] + "/" + drafts[done+op].Cause},
			}}
			ack, err := js.PublishMsg(ctx, m)
			if err == nil {
				rawLast[w] = ack.Sequence
			}
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

// longThreads builds, once per process, threads of the given lengths on
// one stream of the shared server, one fact per append as a runtime
// appends them, by publishing the records Append would publish, many at a
// time. It returns the stream's name and options.
var longThreads = sync.OnceValues(func() (string, []natsstore.Option) {
	name, opts := freshNamed()
	s, err := natsstore.Dial(context.Background(), shared.ClientURL(), opts...)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	nc, err := nats.Connect(shared.ClientURL())
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		panic(err)
	}
	d, err := facts.NewDraft(facts.KindModelTurn, "infer/turn/x", benchTurn)
	if err != nil {
		panic(err)
	}
	for id, n := range map[string]int{"t10": 10, "t10k": 10_000, "t50k": 50_000} {
		// Appended through the store first: the thread is indexed, and
		// the subject exists.
		h, err := s.Append(context.Background(), id, 0, d)
		if err != nil {
			panic(err)
		}
		at := time.Now()
		for i := 1; i < n; i++ {
			d.Cause = "infer/turn/" + strconv.Itoa(i)
			rec, next, err := natsstore.EncodeRecord(id, h, []facts.Draft{d}, at.Add(time.Duration(i)))
			if err != nil {
				panic(err)
			}
			if _, err := js.PublishAsync(natsstore.ThreadSubject(s, id), rec); err != nil {
				panic(err)
			}
			h = next
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(time.Minute):
			panic("publishing the long threads took over a minute")
		}
	}
	return name, opts
})

// BenchmarkRead reads a 10k-fact thread whole (one fact per append), with
// a store that has not read it before (cold: a process resuming it, whose
// read also fills the store's view of the thread) and with one that has
// (warm), against the raw baseline: an ordered consumer reading the same
// messages from the thread's first, touching every message's bytes.
func BenchmarkRead(b *testing.B) {
	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(b *testing.B) { benchRead(b, warm) })
	}
}

func benchRead(b *testing.B, warm bool) {
	ctx := context.Background()
	name, opts := longThreads()
	_, js := rawJS(b)
	s := dial(b, shared, opts...)
	subject := natsstore.ThreadSubject(s, "t10k")
	h, err := s.Head(ctx, "t10k")
	require.NoError(b, err)
	stream, err := js.Stream(ctx, name)
	require.NoError(b, err)
	read := func(s *natsstore.Store) {
		var got uint64
		for f, err := range s.Read(ctx, "t10k", 1) {
			if err != nil {
				b.Fatal(err)
			}
			got = f.Seq
		}
		if got != h.Seq {
			b.Fatalf("read to seq %d, not %d", got, h.Seq)
		}
	}
	if warm {
		read(s)
	}
	var rawTime, storeTime time.Duration
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		oc, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
		require.NoError(b, err)
		it, err := oc.Messages()
		require.NoError(b, err)
		var n, bytes int
		for n < int(h.Seq) {
			m, err := it.Next()
			require.NoError(b, err)
			n, bytes = n+1, bytes+len(m.Data())
		}
		it.Stop()
		rawTime += time.Since(start)
		require.NoError(b, js.DeleteConsumer(ctx, name, oc.CachedInfo().Name))
		if !warm {
			require.NoError(b, s.Close())
			s = dial(b, shared, opts...)
		}
		b.StartTimer()

		start = time.Now()
		read(s)
		storeTime += time.Since(start)
	}
	b.ReportMetric(float64(storeTime.Microseconds())/1000/float64(b.N), "ms/read")
	b.ReportMetric(float64(rawTime.Microseconds())/1000/float64(b.N), "raw-ms/read")
	b.ReportMetric(rawTime.Seconds()/storeTime.Seconds(), "ratio")
}

// BenchmarkHead gets the head of a thread of 10 facts and of one of 50k
// facts (one per append): both are one get of the last message on the
// thread's subject, so the time should not grow with the thread. The raw
// baseline is that get alone.
func BenchmarkHead(b *testing.B) {
	for _, c := range []struct {
		id    string
		facts uint64
	}{{"t10", 10}, {"t50k", 50_000}} {
		b.Run(fmt.Sprintf("facts=%d", c.facts), func(b *testing.B) {
			ctx := context.Background()
			name, opts := longThreads()
			s := dial(b, shared, opts...)
			_, js := rawJS(b)
			stream, err := js.Stream(ctx, name)
			require.NoError(b, err)
			subject := natsstore.ThreadSubject(s, c.id)
			const block = 64
			var rawTime, storeTime time.Duration
			b.ResetTimer()
			for done := 0; done < b.N; done += block {
				n := min(block, b.N-done)
				b.StopTimer()
				start := time.Now()
				for range n {
					_, err := stream.GetLastMsgForSubject(ctx, subject)
					require.NoError(b, err)
				}
				rawTime += time.Since(start)
				b.StartTimer()
				start = time.Now()
				for range n {
					h, err := s.Head(ctx, c.id)
					if err != nil || h.Seq != c.facts {
						b.Fatalf("head %+v, %v", h, err)
					}
				}
				storeTime += time.Since(start)
			}
			b.StopTimer()
			b.ReportMetric(float64(storeTime.Microseconds())/float64(b.N), "µs/head")
			b.ReportMetric(rawTime.Seconds()/storeTime.Seconds(), "ratio")
		})
	}
}
