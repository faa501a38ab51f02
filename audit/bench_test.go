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
// one of 1,000 in the same Pebble store, as `harness replay --verify`
// does: the chain, every caused fact against the fold's projection at its
// position, every action record. An op verifies the long log once and the
// short one shortRuns times — half before the long one, half after, so
// that a change of the machine's load meets both sides alike — so that
// both sides verify the same number of facts and the short side is not one
// verify of a few milliseconds. ratio is the per-fact wall time at 100,000
// over the per-fact wall time at 1,000, cpu-ratio the same in the
// process's CPU time (aim for both: ≤ 1.2, a verifier linear in the log).
// heap/log is the most live heap seen while the 100,000-fact log
// verified, above what was live before, over the log's stored bytes (aim:
// ≤ 2).
func BenchmarkVerifyLog(b *testing.B) {
	const long, short, shortRuns = 100_000, 1_000, 100
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
	verify := func(id string, times int) (wall, cpu time.Duration) {
		start, cpu0 := time.Now(), cpuTime()
		for range times {
			if err := audit.VerifyLog(ctx, s, actor, id); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start), cpuTime() - cpu0
	}
	// Once each before the timer: the store's compactions after the
	// appends above, and the caches, settle.
	verify("long", 1)
	verify("short", shortRuns)
	var longT, shortT, longCPU, shortCPU time.Duration
	peak := uint64(0)
	for b.Loop() {
		w, c := verify("short", shortRuns/2)
		shortT, shortCPU = shortT+w, shortCPU+c
		stop := sampleHeap(&peak)
		w, c = verify("long", 1)
		stop()
		longT, longCPU = longT+w, longCPU+c
		w, c = verify("short", shortRuns-shortRuns/2)
		shortT, shortCPU = shortT+w, shortCPU+c
	}
	n := float64(b.N)
	perLong, perShort := float64(longT)/n/long, float64(shortT)/n/(short*shortRuns)
	cpuLong, cpuShort := float64(longCPU)/n/long, float64(shortCPU)/n/(short*shortRuns)
	b.ReportMetric(perLong, "ns/fact@100k")
	b.ReportMetric(perShort, "ns/fact@1k")
	b.ReportMetric(perLong/perShort, "ratio")
	b.ReportMetric(cpuLong, "cpu-ns/fact@100k")
	b.ReportMetric(cpuShort, "cpu-ns/fact@1k")
	b.ReportMetric(cpuLong/cpuShort, "cpu-ratio")
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
