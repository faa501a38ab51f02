package audit_test

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread"
)

// BenchmarkVerifyLog verifies a parked coding thread of 100,000 facts and
// one of 1,000 in the same Pebble store, op by op alternately, as
// `harness replay --verify` does: the chain, every caused fact against the
// fold's projection at its position, every action record. ratio is the
// per-fact time at 100,000 over the per-fact time at 1,000 (aim: ≤ 1.2,
// a verifier linear in the log). heap/log is the most live heap seen
// while the 100,000-fact log verified, above what was live before, over
// the log's stored bytes (aim: ≤ 2).
func BenchmarkVerifyLog(b *testing.B) {
	const long, short = 100_000, 1_000
	s, err := thread.OpenPebble(b.TempDir())
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	harnesstest.Parked{Facts: long, InputTokens: 1800}.Append(b, s, "long")
	harnesstest.Parked{Facts: short, InputTokens: 1800}.Append(b, s, "short")
	actor := harnesstest.LoopActor(b)
	logBytes := 0
	for f, err := range s.Read(ctx, "long", 1) {
		require.NoError(b, err)
		enc, err := facts.Encode(f)
		require.NoError(b, err)
		logBytes += len(enc)
	}
	// The machine may be shared: the CPU time the process spent is
	// reported beside the wall time.
	verify := func(id string) (wall, cpu time.Duration) {
		start, cpu0 := time.Now(), cpuTime()
		if err := audit.VerifyLog(ctx, s, actor, id); err != nil {
			b.Fatal(err)
		}
		return time.Since(start), cpuTime() - cpu0
	}
	// Once each before the timer: the store's compactions after the
	// appends above, and the caches, settle.
	verify("long")
	verify("short")
	var longT, shortT, longCPU, shortCPU time.Duration
	peak := uint64(0)
	for b.Loop() {
		stop := sampleHeap(&peak)
		w, c := verify("long")
		stop()
		longT, longCPU = longT+w, longCPU+c
		w, c = verify("short")
		shortT, shortCPU = shortT+w, shortCPU+c
	}
	n := float64(b.N)
	perLong := float64(longT) / n / long
	perShort := float64(shortT) / n / short
	b.ReportMetric(perLong, "ns/fact@100k")
	b.ReportMetric(perShort, "ns/fact@1k")
	b.ReportMetric(perLong/perShort, "ratio")
	b.ReportMetric((float64(longCPU)/long)/(float64(shortCPU)/short), "cpu-ratio")
	b.ReportMetric(float64(peak)/float64(logBytes), "heap/log")
	b.ReportMetric(float64(logBytes)/(1<<20), "log-MiB")
}

// cpuTime is the CPU time the process has spent, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sampleHeap raises *peak to the most live heap seen, above what is live
// when it starts, until the function it returns is called.
func sampleHeap(peak *uint64) (stop func()) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > base && v-base > *peak {
				*peak = v - base
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
