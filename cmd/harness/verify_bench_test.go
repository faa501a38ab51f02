package main

import (
	"bytes"
	"os"
	"os/exec"
	"syscall"
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
// per-fact time at 1,000 (aim: ≤ 1.2); rss/log is the process's peak
// resident set at 100,000 over the log's stored bytes (aim: ≤ 2).
func BenchmarkCLIReplayVerify(b *testing.B) {
	bin, dir, _, store := benchWorkspace(b)
	const long, short = 100_000, 1_000
	parked := harnesstest.Parked{Model: "scripted:none.jsonl", Workspace: stock.WorkspaceName(dir), InputTokens: 1800}
	parked.Facts = long
	parked.Append(b, store, "long")
	parked.Facts = short
	parked.Append(b, store, "short")
	logBytes := 0
	for f, err := range store.Read(b.Context(), "long", 1) {
		require.NoError(b, err)
		enc, err := facts.Encode(f)
		require.NoError(b, err)
		logBytes += len(enc)
	}
	require.NoError(b, store.Close())
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+b.TempDir())
	verify := func(id string) (time.Duration, int64) {
		cmd := exec.Command(bin, "replay", id, "--verify")
		cmd.Dir, cmd.Env = dir, env
		var errb bytes.Buffer
		cmd.Stderr = &errb
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("replay --verify %s: %v\n%s", id, err, errb.String())
		}
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		var rss int64
		if ru != nil {
			rss = ru.Maxrss << 10 // KiB on Linux
		}
		return d, rss
	}
	verify("short")
	var longT, shortT time.Duration
	var peak int64
	for b.Loop() {
		d, rss := verify("long")
		longT, peak = longT+d, max(peak, rss)
		d, _ = verify("short")
		shortT += d
	}
	n := float64(b.N)
	perLong, perShort := float64(longT)/n/long, float64(shortT)/n/short
	b.ReportMetric(float64(longT)/n/float64(time.Millisecond), "ms/verify@100k")
	b.ReportMetric(float64(shortT)/n/float64(time.Millisecond), "ms/verify@1k")
	b.ReportMetric(perLong/perShort, "ratio")
	b.ReportMetric(float64(peak)/float64(logBytes), "rss/log")
	b.ReportMetric(float64(logBytes)/(1<<20), "log-MiB")
}
