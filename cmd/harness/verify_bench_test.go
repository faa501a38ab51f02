package main

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/stock"
)

// BenchmarkCLIReplayVerify runs `harness replay --verify` — a new
// process, as a person runs it — on a parked thread of 100,000 facts and
// on one of 1,000 in the same store, alternating op by op; the record it
// tells goes to /dev/null. ratio is the per-fact time at 100,000 over the
// per-fact time at 1,000 (aim: ≤ 1.2), cpu-ratio the same in the child's
// CPU time. rss/log is the process's peak resident set (VmHWM, see
// childRun) over the log's bytes (aim: ≤ 2 at 100,000), the log's bytes
// being the values of
// its fact records as the store keeps them (facts.Encode of each fact,
// which is what log-MiB says); anon/log and file/log split the resident
// set at the largest sample taken while it ran into anonymous memory (Go
// heap, Pebble's cache and memtables) and file pages (the binary's own
// code and data, mapped from the page cache: fixed, whatever the log).
// rec-MiB adds the records' keys to the values, and store-MiB is the
// store directory on disk (both threads, tables compressed, the cause
// index, the write-ahead log): rss/store is the peak over that. The child is
// the harness binary, built for the run (not this test binary, which
// runs as harness too but is larger and starts more).
func BenchmarkCLIReplayVerify(b *testing.B) {
	_, dir, place, store := benchWorkspace(b)
	bin := builtHarness(b)
	const long, short = 100_000, 1_000
	parked := harnesstest.Parked{Model: "scripted:none.jsonl", Workspace: stock.WorkspaceName(dir), InputTokens: 1800}
	parked.Facts = long
	parked.Append(b, store, "long")
	parked.Facts = short
	parked.Append(b, store, "short")
	logBytes := map[string]int{}
	recBytes := map[string]int{}
	for _, id := range []string{"long", "short"} {
		for f, err := range store.Read(b.Context(), id, 1) {
			require.NoError(b, err)
			enc, err := facts.Encode(f)
			require.NoError(b, err)
			logBytes[id] += len(enc)
			recBytes[id] += len(enc) + 1 + len(id) + 1 + 8 // 'f' id 0x00 seq (package thread's layout)
		}
	}
	require.NoError(b, store.Close())
	storeBytes := dirBytes(b, place.DB())
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+b.TempDir())
	verify := func(id string) childRun {
		cmd := exec.Command(bin, "replay", id, "--verify")
		cmd.Dir, cmd.Env = dir, env
		return runMeasured(b, cmd)
	}
	verify("short")
	var longT, shortT, longCPU, shortCPU time.Duration
	var peakLong, peakShort childRun
	for b.Loop() {
		r := verify("long")
		longT, longCPU = longT+r.wall, longCPU+r.cpu
		if r.peak > peakLong.peak {
			peakLong = r
		}
		r = verify("short")
		shortT, shortCPU = shortT+r.wall, shortCPU+r.cpu
		if r.peak > peakShort.peak {
			peakShort = r
		}
	}
	n := float64(b.N)
	perLong, perShort := float64(longT)/n/long, float64(shortT)/n/short
	cpuLong, cpuShort := float64(longCPU)/n/long, float64(shortCPU)/n/short
	lb, sb := float64(logBytes["long"]), float64(logBytes["short"])
	b.ReportMetric(float64(longT)/n/float64(time.Millisecond), "ms/verify@100k")
	b.ReportMetric(float64(shortT)/n/float64(time.Millisecond), "ms/verify@1k")
	b.ReportMetric(float64(longCPU)/n/float64(time.Millisecond), "cpu-ms/verify@100k")
	b.ReportMetric(float64(shortCPU)/n/float64(time.Millisecond), "cpu-ms/verify@1k")
	b.ReportMetric(perLong/perShort, "ratio")
	b.ReportMetric(cpuLong/cpuShort, "cpu-ratio")
	b.ReportMetric(float64(peakLong.peak)/lb, "rss/log")
	b.ReportMetric(float64(peakLong.anon)/lb, "anon/log")
	b.ReportMetric(float64(peakLong.file)/lb, "file/log")
	b.ReportMetric(float64(peakLong.peak)/float64(storeBytes), "rss/store")
	b.ReportMetric(float64(peakShort.peak)/sb, "rss/log@1k")
	b.ReportMetric(float64(peakShort.anon)/sb, "anon/log@1k")
	b.ReportMetric(float64(peakLong.peak)/(1<<20), "rss-MiB@100k")
	b.ReportMetric(float64(peakLong.anon)/(1<<20), "anon-MiB@100k")
	b.ReportMetric(float64(peakLong.file)/(1<<20), "file-MiB@100k")
	b.ReportMetric(float64(peakShort.peak)/(1<<20), "rss-MiB@1k")
	b.ReportMetric(float64(peakLong.rusageMax)/(1<<20), "rusage-maxrss-MiB@100k")
	b.ReportMetric(float64(peakShort.rusageMax)/(1<<20), "rusage-maxrss-MiB@1k")
	b.ReportMetric(lb/(1<<20), "log-MiB")
	b.ReportMetric(float64(recBytes["long"])/(1<<20), "rec-MiB")
	b.ReportMetric(float64(storeBytes)/(1<<20), "store-MiB")
}
