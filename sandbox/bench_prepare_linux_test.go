package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// BenchmarkPrepare is what Spec.Prepare, which the boundary calls before
// the reading each action begins with, adds to that reading: on a
// repository of 10,000 files holding 8 nested repositories, with the
// change feed, as the stock harness observes, each Prepare against the
// reading that follows it, in the same run. Metrics: prepare-* and
// observe-* (min, median, max, ms) and prepare-vs-observe (ratio of
// medians).
func BenchmarkPrepare(b *testing.B) {
	ws := benchTree(b, 10000)
	for i := range 8 {
		require.NoError(b, os.MkdirAll(filepath.Join(ws, fmt.Sprintf("d%03d", i), "nested", ".git"), 0o755))
	}
	spec, err := sandbox.Default(ws, "")
	require.NoError(b, err)
	obs, err := action.NewWorkspace(ws, action.WithChangeFeed(true))
	require.NoError(b, err)
	b.Cleanup(func() { obs.Close() })
	spec.Nested = &sandbox.Nested{}
	spec.Nested.From(obs)
	ctx := context.Background()
	settle(b, ws)
	spec.Prepare()
	_, err = obs.Observe(ctx)
	require.NoError(b, err)
	var prep, read []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		spec.Prepare()
		mid := time.Now()
		_, err := obs.Observe(ctx)
		end := time.Now()
		require.NoError(b, err)
		prep, read = append(prep, mid.Sub(start)), append(read, end.Sub(mid))
	}
	b.StopTimer()
	report := func(name string, ds []time.Duration) float64 {
		lo, med, hi := spread(ds)
		b.ReportMetric(lo, name+"-min-ms")
		b.ReportMetric(med, name+"-med-ms")
		b.ReportMetric(hi, name+"-max-ms")
		return med
	}
	p := report("prepare", prep)
	o := report("observe", read)
	b.ReportMetric(p/o, "prepare-vs-observe")
}
