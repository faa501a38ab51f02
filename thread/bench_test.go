package thread_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// The benchmarks measure the store against raw Pebble doing the same work
// in the same run, interleaved in blocks so that drift in the disk's speed
// hits both alike, and report ratio = store rate / raw rate. ns/op and
// allocs/op are the store's alone.

// benchTurn is the payload of the benchmarks' facts: a model turn whose
// stored record is about 400 bytes.
var benchTurn = facts.ModelTurn{
	Turn:      12,
	Text:      strings.Repeat("Reading auth.go to find where the session expires. ", 4),
	ToolCalls: []facts.ToolCall{{ID: "call_0012", Name: "read", Args: `{"path":"internal/auth/session.go"}`}},
	Usage:     facts.Usage{InputTokens: 18234, OutputTokens: 211},
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func rawOptions() *pebble.Options {
	return &pebble.Options{
		FormatMajorVersion: pebble.FormatValueSeparation,
		Logger:             quietLogger{},
		CacheSize:          thread.DefaultCacheSize, // as the store has
	}
}

// openRaw opens a raw Pebble database with the store's settings that
// matter to the comparison. It is closed when the benchmark ends.
func openRaw(b *testing.B) *pebble.DB {
	db, err := pebble.Open(b.TempDir(), rawOptions())
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, db.Close()) })
	return db
}

func openBenchStore(b *testing.B) *thread.PebbleStore {
	s := openStore(b, b.TempDir())
	b.Cleanup(func() { require.NoError(b, s.Close()) })
	return s
}

// rawAppend is the baseline for one append: the same bytes the store
// writes — the fact record, its cause's index entry and the head record —
// in one batch committed with Sync.
type rawAppend struct {
	fact, head []byte
}

// newRawAppends returns n raw appends of distinct facts, chained as the
// store chains them: records as alike and as unlike one another as the
// store's (a baseline that wrote one record over and over would compress
// better than any real log).
func newRawAppends(b *testing.B, n int) []rawAppend {
	out := make([]rawAppend, n)
	var prev facts.Hash
	at := time.Now()
	for i := range out {
		d, err := facts.NewDraft(facts.KindModelTurn, fmt.Sprintf("infer/turn/%d", i), benchTurn)
		require.NoError(b, err)
		f := facts.Fact{Thread: "bench", Seq: uint64(i + 1), Kind: d.Kind, Cause: d.Cause, At: at.Add(time.Duration(i) * time.Microsecond), Data: d.Data, Prev: prev}
		v, err := facts.Encode(f)
		require.NoError(b, err)
		prev = f.Hash()
		out[i] = rawAppend{fact: v, head: thread.EncodeHead(thread.Head{Seq: f.Seq, Hash: prev, Kind: f.Kind, At: f.At})}
	}
	return out
}

func (r rawAppend) commit(db *pebble.DB, id, cause string, seq uint64) error {
	batch := db.NewBatch()
	defer batch.Close()
	if err := batch.Set(thread.FactKey(id, seq), r.fact, nil); err != nil {
		return err
	}
	if err := batch.Set(thread.CauseKey(id, cause), thread.EncodeSeq(seq), nil); err != nil {
		return err
	}
	if err := batch.Set(thread.HeadKey(id), r.head, nil); err != nil {
		return err
	}
	return batch.Commit(pebble.Sync)
}

// BenchmarkAppend appends one ~400-byte fact per synced append, with one
// writer and with 64 writers on 64 threads, against raw Pebble batches of
// the same bytes with the same concurrency.
func BenchmarkAppend(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			benchAppend(b, writers)
		})
	}
}

func benchAppend(b *testing.B, writers int) {
	ctx := context.Background()
	raw, store := openRaw(b), openBenchStore(b)
	rs := newRawAppends(b, b.N)
	drafts := make([]facts.Draft, b.N)
	for i := range drafts {
		d, err := facts.NewDraft(facts.KindModelTurn, fmt.Sprintf("infer/turn/%d", i), benchTurn)
		require.NoError(b, err)
		drafts[i] = d
	}
	ids := make([]string, writers)
	for w := range ids {
		ids[w] = fmt.Sprintf("bench-%02d", w)
	}
	rawSeqs := make([]uint64, writers)
	heads := make([]uint64, writers)

	// run performs ops appends from writers goroutines, writer w on
	// thread w, and returns how long they took and the CPU time the
	// process spent meanwhile.
	run := func(ops int, appendOne func(w, op int) error) (wall, cpu time.Duration) {
		var next atomic.Int64
		var wg sync.WaitGroup
		start, startCPU := time.Now(), cpuTime()
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
		return time.Since(start), cpuTime() - startCPU
	}

	block := 32 * writers
	var rawTime, rawCPU, storeTime, storeCPU time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += block {
		n := min(block, b.N-done)
		b.StopTimer()
		wall, cpu := run(n, func(w, op int) error {
			rawSeqs[w]++
			return rs[done+op].commit(raw, ids[w], drafts[done+op].Cause, rawSeqs[w])
		})
		rawTime, rawCPU = rawTime+wall, rawCPU+cpu
		b.StartTimer()
		wall, cpu = run(n, func(w, op int) error {
			h, err := store.Append(ctx, ids[w], heads[w], drafts[done+op])
			heads[w] = h.Seq
			return err
		})
		storeTime, storeCPU = storeTime+wall, storeCPU+cpu
	}
	b.StopTimer()
	reportRates(b, "appends", storeTime, rawTime, storeCPU, rawCPU)
}

// reportRates reports the store's rate of what (per second), raw Pebble's,
// and their ratio; and, less at the mercy of other processes on the
// machine, the CPU time each spent per operation and their ratio
// (raw/store, so 1 is as cheap as raw Pebble).
func reportRates(b *testing.B, what string, store, raw, storeCPU, rawCPU time.Duration) {
	n := float64(b.N)
	b.ReportMetric(n/store.Seconds(), what+"/s")
	b.ReportMetric(n/raw.Seconds(), "raw-"+what+"/s")
	b.ReportMetric(raw.Seconds()/store.Seconds(), "ratio")
	if storeCPU > 0 && rawCPU > 0 {
		b.ReportMetric(float64(storeCPU.Microseconds())/n, "cpu-us/op")
		b.ReportMetric(float64(rawCPU.Microseconds())/n, "raw-cpu-us/op")
		b.ReportMetric(rawCPU.Seconds()/storeCPU.Seconds(), "cpu-ratio")
	}
}

// readFixture is the 100,000-fact thread BenchmarkRead100k reads, in the
// store and as raw msgpack records in raw Pebble. Building it takes
// seconds, and the testing package calls a benchmark function several
// times while it sizes b.N, so it is built once per process and closed by
// TestMain.
type readFixture struct {
	dir   string
	raw   *pebble.DB
	store *thread.PebbleStore
	err   error
}

const readFixtureFacts = 100_000

var (
	readFixtureOnce sync.Once
	theReadFixture  readFixture
)

func loadReadFixture(b *testing.B) *readFixture {
	b.StopTimer()
	defer b.StartTimer()
	readFixtureOnce.Do(func() { theReadFixture = buildReadFixture() })
	require.NoError(b, theReadFixture.err)
	return &theReadFixture
}

func buildReadFixture() (fx readFixture) {
	const n = readFixtureFacts
	ctx := context.Background()
	if fx.dir, fx.err = os.MkdirTemp("", "harness-bench"); fx.err != nil {
		return fx
	}
	fx.raw, fx.err = pebble.Open(filepath.Join(fx.dir, "raw"), rawOptions())
	if fx.err != nil {
		return fx
	}
	if fx.store, fx.err = thread.OpenPebble(filepath.Join(fx.dir, "store")); fx.err != nil {
		return fx
	}
	var after uint64
	for after < n {
		ds := make([]facts.Draft, 1000)
		for i := range ds {
			if ds[i], fx.err = facts.NewDraft(facts.KindModelTurn, fmt.Sprintf("infer/turn/%d", int(after)+i), benchTurn); fx.err != nil {
				return fx
			}
		}
		h, err := fx.store.Append(ctx, "long", after, ds...)
		if fx.err = err; err != nil {
			return fx
		}
		after = h.Seq
	}
	// In batches of 1000 too: Pebble keeps a huge batch on the Go heap
	// until it is flushed, which would skew the heap numbers.
	for first := uint64(1); first <= n; first += 1000 {
		batch := fx.raw.NewBatch()
		for seq := first; seq < first+1000; seq++ {
			v, err := msgpack.Marshal(rawFact{Seq: seq, Kind: string(facts.KindModelTurn), Cause: fmt.Sprintf("infer/turn/%d", seq),
				At: time.Now().UnixNano(), Prev: make([]byte, 32), Data: benchTurn})
			if err == nil {
				err = batch.Set(thread.FactKey("long", seq), v, nil)
			}
			if fx.err = err; err != nil {
				return fx
			}
		}
		fx.err = errors.Join(batch.Commit(pebble.Sync), batch.Close())
		if fx.err != nil {
			return fx
		}
	}
	return fx
}

// closeReadFixture releases the fixture, if it was built.
func closeReadFixture() error {
	fx := &theReadFixture
	var errs []error
	if fx.store != nil {
		errs = append(errs, fx.store.Close())
	}
	if fx.raw != nil {
		errs = append(errs, fx.raw.Close())
	}
	if fx.dir != "" {
		errs = append(errs, os.RemoveAll(fx.dir))
	}
	return errors.Join(errs...)
}

// errEnough ends a benchmark's Scan once it has read what it came for.
var errEnough = errors.New("enough")

// rawFact is the baseline's record: the whole fact, payload included, as one
// msgpack value.
type rawFact struct {
	Seq   uint64          `msgpack:"seq"`
	Kind  string          `msgpack:"kind"`
	Cause string          `msgpack:"cause"`
	At    int64           `msgpack:"at"`
	Prev  []byte          `msgpack:"prev"`
	Data  facts.ModelTurn `msgpack:"data"`
}

// BenchmarkRead100k reads a 100,000-fact thread five ways, b.N facts each,
// in passes from the first fact:
//
//	raw:      raw Pebble iteration, msgpack-decoding each whole fact
//	store:    thread.Scan, decoding each payload with facts.Decode (ratio
//	          to raw)
//	envelope: thread.Scan alone, as a fold that skips payloads does
//	          (envelope-ratio to raw-scan; envelope-cpu-ratio the same
//	          in the process's CPU time, less at the mercy of other load)
//	read:     Read alone, which copies each payload out (read-ratio and
//	          read-cpu-ratio to raw-scan: what the envelope pass was
//	          before Scan lent payloads)
//	raw-scan: raw Pebble iteration touching each value, no decoding
//
// ns/op and allocs/op are per fact of the store's read with decoding. It
// also reports how far the heap (live and not yet collected objects) grew
// above its size before reading, at its peak during the store's reads: it
// stays a few MB, where holding the thread would take tens.
func BenchmarkRead100k(b *testing.B) {
	const n = readFixtureFacts
	ctx := context.Background()
	fx := loadReadFixture(b)
	raw, store := fx.raw, fx.store

	// Each reads the first k facts of the thread and returns how long
	// that took.
	scanRaw := func(k int, decode bool) time.Duration {
		start := time.Now()
		it, err := raw.NewIter(&pebble.IterOptions{LowerBound: thread.FactKey("long", 0), UpperBound: thread.FactKey("long", n+1)})
		require.NoError(b, err)
		count := 0
		for ok := it.First(); ok && count < k; ok = it.Next() {
			v, err := it.ValueAndErr()
			if err != nil {
				b.Fatal(err)
			}
			if decode {
				var f rawFact
				if err := msgpack.Unmarshal(v, &f); err != nil {
					b.Fatal(err)
				}
			} else if len(v) == 0 {
				b.Fatal("empty value")
			}
			count++
		}
		require.NoError(b, it.Close())
		require.Equal(b, k, count)
		return time.Since(start)
	}
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	readStore := func(k int, decode bool) time.Duration {
		start := time.Now()
		count := 0
		err := thread.Scan(ctx, store, "long", 1, func(f facts.Fact) error {
			if decode {
				if _, err := facts.Decode[facts.ModelTurn](f); err != nil {
					return err
				}
				if count%10_000 == 0 {
					metrics.Read(heap)
					peak = max(peak, heap[0].Value.Uint64())
				}
			}
			if count++; count == k {
				return errEnough
			}
			return nil
		})
		if err != errEnough {
			b.Fatal(err)
		}
		require.Equal(b, k, count)
		return time.Since(start)
	}
	readCopies := func(k int) time.Duration {
		start := time.Now()
		count := 0
		for _, err := range store.Read(ctx, "long", 1) {
			if err != nil {
				b.Fatal(err)
			}
			if count++; count == k {
				break
			}
		}
		require.Equal(b, k, count)
		return time.Since(start)
	}

	// Warm the block cache and the OS page cache for all, and start
	// from a collected heap so the peak shows what reading adds to it.
	scanRaw(n, true)
	readStore(n, true)
	runtime.GC()
	runtime.GC()
	metrics.Read(heap)
	before := heap[0].Value.Uint64()
	peak = 0

	// b.N counts facts: whole passes over the thread, then part of one.
	var rawT, rawCPU, storeT, storeCPU, envT, envCPU, readT, readCPU, scanT, scanCPU time.Duration
	// Each pass starts from a collected heap, so that none pays for the
	// garbage the pass before it left (the decoding passes leave most).
	timed := func(wall, cpu *time.Duration, read func() time.Duration) {
		runtime.GC()
		start := cpuTime()
		*wall += read()
		*cpu += cpuTime() - start
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += n {
		k := min(n, b.N-done)
		b.StopTimer()
		timed(&rawT, &rawCPU, func() time.Duration { return scanRaw(k, true) })
		timed(&storeT, &storeCPU, func() time.Duration {
			b.StartTimer()
			defer b.StopTimer()
			return readStore(k, true)
		})
		timed(&envT, &envCPU, func() time.Duration { return readStore(k, false) })
		timed(&readT, &readCPU, func() time.Duration { return readCopies(k) })
		timed(&scanT, &scanCPU, func() time.Duration { return scanRaw(k, false) })
		b.StartTimer()
	}
	b.StopTimer()
	rate := func(d time.Duration) float64 { return float64(b.N) / d.Seconds() }
	reportRates(b, "facts", storeT, rawT, storeCPU, rawCPU)
	b.ReportMetric(rate(envT), "envelope-facts/s")
	b.ReportMetric(rate(scanT), "raw-scan-facts/s")
	b.ReportMetric(scanT.Seconds()/envT.Seconds(), "envelope-ratio")
	b.ReportMetric(scanT.Seconds()/readT.Seconds(), "read-ratio")
	if envCPU > 0 && scanCPU > 0 && readCPU > 0 {
		b.ReportMetric(scanCPU.Seconds()/envCPU.Seconds(), "envelope-cpu-ratio")
		b.ReportMetric(scanCPU.Seconds()/readCPU.Seconds(), "read-cpu-ratio")
	}
	b.ReportMetric(float64(peak-min(peak, before))/(1<<20), "peak-heap-growth-MB")
}
