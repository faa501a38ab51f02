package worktree_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/worktree"
)

// BenchmarkCreate10k: making a thread's worktree of a 10,000-file
// repository (with an uncommitted change, so the workspace is committed
// first) against the raw baseline, plain `git worktree add` of HEAD, in
// the same run; reports the ratio (goal ≤ 1.2).
func BenchmarkCreate10k(b *testing.B) {
	ctx := context.Background()
	ws := repo(b)
	for i := range 10_000 {
		write(b, ws, fmt.Sprintf("d%02d/f%05d.txt", i%100, i), fmt.Sprintf("file %d\n", i))
	}
	gitIn(b, ws, "add", "-A")
	gitIn(b, ws, "commit", "-q", "-m", "10k")
	write(b, ws, "a.txt", "uncommitted\n")
	dir := b.TempDir()
	var raw, ours time.Duration
	b.ResetTimer()
	for i := range b.N {
		plain := func() {
			start := time.Now()
			path := filepath.Join(dir, fmt.Sprintf("raw%d", i))
			cmd := exec.Command("git", "worktree", "add", "-q", "-b", fmt.Sprintf("raw%d", i), path, "HEAD")
			cmd.Dir = ws
			out, err := cmd.CombinedOutput()
			require.NoError(b, err, "%s", out)
			raw += time.Since(start)
		}
		create := func() {
			start := time.Now()
			_, err := worktree.Create(ctx, ws, fmt.Sprintf("t%d", i), worktree.Options{Dir: dir})
			require.NoError(b, err)
			ours += time.Since(start)
		}
		// Each goes first every other time: the first of a pair finds
		// the disk's caches as the last pair left them.
		if i%2 == 0 {
			plain()
			create()
		} else {
			create()
			plain()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(raw.Milliseconds())/float64(b.N), "raw-ms/op")
	b.ReportMetric(float64(ours.Milliseconds())/float64(b.N), "create-ms/op")
	b.ReportMetric(float64(ours)/float64(raw), "ratio")
	_ = os.RemoveAll(dir)
}
