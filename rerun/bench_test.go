package rerun_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/stock"
)

// BenchmarkServedTurn runs, op by op alternating, a thread of 10 turns
// that each read a file (a scripted model, the stock tools, the
// workspace observed) — the raw baseline — and a rerun of one such
// thread by the same script, all of whose turns are served. ratio is a
// served turn's time over a scripted turn's (aim: ≤ 1.2); the rerun's
// time includes reading the original and the comparison.
func BenchmarkServedTurn(b *testing.B) {
	const turns = 10
	var script strings.Builder
	for i := range turns {
		fmt.Fprintf(&script, `{"text": "Reading %d.", "tool_calls": [{"id": "r%d", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}]}`+"\n", i, i)
	}
	script.WriteString(`{"text": "Done."}`)
	root := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("line one\n"), 0o644))
	p, err := stock.Locate(root, "")
	require.NoError(b, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(b, err)
	defer store.Close()
	// The original's runtime, and the rerun's: the same script, the same
	// stock tools, observer and store.
	base, baseActor, _, _ := rerunIn(b, p, store, script.String())
	rt, actor, _, _ := rerunIn(b, p, store, script.String())
	begin := func(id string) (harness.Outcome, error) {
		return base.Thread(baseActor, id).Start(ctx, "Read the notes ten times")
	}
	_, err = begin("orig")
	require.NoError(b, err)

	var scripted, served time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		out, err := begin(fmt.Sprintf("base-%d", i))
		scripted += time.Since(start)
		require.NoError(b, err)
		require.Equal(b, harness.StatusDone, out.Status)

		start = time.Now()
		rep, err := rerun.Run(ctx, rerun.Options{From: "orig", As: fmt.Sprintf("rr-%d", i), Model: "scripted:b", Runtime: rt, Actor: actor})
		served += time.Since(start)
		require.NoError(b, err)
		require.Equal(b, rerun.VerdictMatched, rep.Verdict)
		require.Equal(b, turns, rep.Served)
	}
	b.ReportMetric(float64(scripted.Microseconds())/float64(b.N*(turns+1)), "µs/scripted-turn")
	b.ReportMetric(float64(served.Microseconds())/float64(b.N*(turns+1)), "µs/served-turn")
	b.ReportMetric(float64(served)/float64(scripted), "ratio")
}
