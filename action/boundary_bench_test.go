package action_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

type noop struct{}

func (noop) Name() string { return "noop" }
func (noop) Execute(context.Context, action.Request) (facts.Report, error) {
	return facts.Report{Status: facts.StatusSucceeded}, nil
}

// BenchmarkBoundaryOverhead: a no-op adapter run through the effect
// boundary (authority, observation before, the adapter, observation after,
// the inventory and the effect state) in a 1,000-file workspace, against
// calling the adapter directly. The observer's stat cache is warm, as it is
// between the actions of a thread.
func BenchmarkBoundaryOverhead(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i%20))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.go", i)), []byte(fmt.Sprintf("package p // %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Files written just now are racily clean (their ctime is now); a
	// short window lets them age out of it, as a repository's files have.
	ws, err := action.NewWorkspace(root, action.WithRacyWindow(50*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	bd := &action.Boundary{Observer: ws, Granted: []action.Capability{action.Write}, Root: root}
	ctx := context.Background()
	req := action.Request{ActionID: "a", Capability: action.Write, Adapter: "noop"}
	time.Sleep(100 * time.Millisecond)
	if _, err := ws.Observe(ctx); err != nil { // warm the cache
		b.Fatal(err)
	}
	direct := measure(b.N, func() { noop{}.Execute(ctx, req) })
	bounded := measure(b.N, func() {
		bg, refused := bd.Begin(ctx, req)
		if refused != nil {
			b.Fatal(refused.Report.Error)
		}
		done := *bd.Finish(ctx, req, bg, noop{}).Completed
		if done.EffectState != facts.EffectUnknown {
			b.Fatalf("effect %s", done.EffectState)
		}
	})
	b.ReportMetric(direct, "direct-ns/op")
	b.ReportMetric(bounded, "boundary-ns/op")
	b.ReportMetric(bounded/direct, "ratio")
	b.ReportMetric(bounded/2/1000, "ns/file-observed")
}

func measure(n int, f func()) float64 {
	start := time.Now()
	for range n {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}
