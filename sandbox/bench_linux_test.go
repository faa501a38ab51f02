package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// BenchmarkSandbox measures what the sandbox adds to one command: the
// same command line run as sh -c, once plainly (exec, the same allow-listed
// environment) and once in the default sandbox, in the same run. It
// reports the ratio of the two and the milliseconds the sandbox adds.
func BenchmarkSandbox(b *testing.B) {
	if err := sandbox.Probe().Err(); err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o644))
	require.NoError(b, os.WriteFile(filepath.Join(ws, "m.go"), []byte("package m\n\n// F is f.\nfunc F() int { return 1 }\n"), 0o644))
	spec, err := sandbox.Default(ws, "")
	require.NoError(b, err)
	for _, bc := range []struct{ name, line string }{
		{"sh-true", "true"},
		{"go-vet", "go vet ./..."},
	} {
		b.Run(bc.name, func(b *testing.B) {
			plain := func() {
				tmp := b.TempDir()
				cmd := exec.Command("/bin/sh", "-c", bc.line)
				cmd.Dir, cmd.Env = ws, spec.Environ(os.Environ(), tmp)
				out, err := cmd.CombinedOutput()
				require.NoError(b, err, "%s", out)
			}
			boxed := func() {
				c := &sandbox.Cmd{Spec: spec, Line: bc.line}
				require.NoError(b, c.Start(context.Background()))
				e, err := c.Wait()
				require.NoError(b, err)
				require.Equal(b, 0, e.Code, "%s: %v", bc.line, e)
			}
			plain() // warm: the Go cache, the page cache, the probe
			boxed()
			var base, sb time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				plain()
				base += time.Since(start)
				start = time.Now()
				boxed()
				sb += time.Since(start)
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(sb)/float64(base), "ratio")
			b.ReportMetric(float64(sb-base)/n/1e6, "ms-extra/op")
			b.ReportMetric(float64(base)/n/1e6, "ms-plain/op")
			b.ReportMetric(float64(sb)/n/1e6, "ms-sandboxed/op")
		})
	}
}
