package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkStartup is the start of the built command against git's:
// harness --help beside git --version, interleaved in the same run
// (help-vs-git: min, median and max of the per-iteration ratio). Beside
// it, what a sandboxed command's helper costs to start: the harness
// re-executed as the helper (it ends in package sandbox's init, after the
// inits of every package before it) and harness-sandbox, the helper's own
// program, each told a protocol it does not speak so that it exits at
// once.
func BenchmarkStartup(b *testing.B) {
	goCmd, git, dir := startupTools(b)
	harness := buildTo(b, goCmd, dir, "harness", ".")
	small := buildTo(b, goCmd, dir, "harness-sandbox", "../../sandbox/cmd/harness-sandbox")
	timed := func(env []string, name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		start := time.Now()
		_ = cmd.Run() // the helpers exit 2, by design
		d := time.Since(start)
		require.NotNil(b, cmd.ProcessState)
		return d
	}
	env := os.Environ()
	helperEnv := append(os.Environ(), "HARNESS_SANDBOX_HELPER=run:0")
	var help, gitv, reexec, helper []time.Duration
	var ratio []float64
	timed(env, harness, "--help") // warm the page cache
	timed(env, git, "--version")
	b.ResetTimer()
	for range b.N {
		g := timed(env, git, "--version")
		h := timed(env, harness, "--help")
		gitv, help = append(gitv, g), append(help, h)
		ratio = append(ratio, float64(h)/float64(g))
		reexec = append(reexec, timed(helperEnv, harness))
		helper = append(helper, timed(helperEnv, small))
	}
	b.StopTimer()
	slices.Sort(ratio)
	b.ReportMetric(ratio[0], "help-vs-git-min")
	b.ReportMetric(ratio[len(ratio)/2], "help-vs-git-med")
	b.ReportMetric(ratio[len(ratio)-1], "help-vs-git-max")
	med := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)/2]) / 1e6
	}
	b.ReportMetric(med(help), "help-med-ms")
	b.ReportMetric(med(gitv), "git-med-ms")
	b.ReportMetric(med(reexec), "helper-reexec-med-ms")
	b.ReportMetric(med(helper), "helper-small-med-ms")
	b.ReportMetric(med(reexec)/med(helper), "reexec-vs-small")
}

// startupTools are what the start-up benchmarks need, or they skip: the
// go command (to build harness), git (the baseline) and a directory for
// the builds.
func startupTools(b *testing.B) (goCmd, git, dir string) {
	b.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build harness with")
	}
	git, err = exec.LookPath("git")
	if err != nil {
		b.Skip("no git to compare with")
	}
	return goCmd, git, b.TempDir()
}

// buildTo builds the package pkg as dir/name and returns its path.
func buildTo(b *testing.B, goCmd, dir, name, pkg string) string {
	b.Helper()
	out := filepath.Join(dir, name)
	msg, err := exec.Command(goCmd, "build", "-o", out, pkg).CombinedOutput()
	require.NoError(b, err, "%s", msg)
	return out
}
