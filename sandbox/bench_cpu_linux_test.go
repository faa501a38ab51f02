package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// cpuOf is the CPU time this process and its waited-for children have
// used.
func cpuOf() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var r syscall.Rusage
		_ = syscall.Getrusage(who, &r)
		total += time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return total
}

// treeCPU is the CPU time process pid and its reaped children have used
// (utime, stime, cutime, cstime of /proc/PID/stat, in clock ticks of 10
// ms).
func treeCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(b, err)
	s := string(stat)
	f := strings.Fields(s[strings.LastIndex(s, ")")+2:])
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		require.NoError(b, err)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// BenchmarkSandboxTrueCPU is the CPU time (user and system, of every
// process involved) of a sandboxed sh -c true on an empty repository,
// against bubblewrap's (bwrap --unshare-all, as BenchmarkSandboxTrue runs
// it) and the unsandboxed command's: on a machine whose cores are busy,
// what a command waits for. The sandbox's is the harness's side plus the
// launcher's (which holds its helpers' and their shells'). Not counted
// on either side: the kernel's work that its own threads do (freeing a
// network namespace).
//
// Metrics, per command: sandbox-cpu-ms, bwrap-cpu-ms, plain-cpu-ms and
// the ratio sandbox-vs-bwrap-cpu.
func BenchmarkSandboxTrueCPU(b *testing.B) {
	if err := sandbox.Probe().Err(); err != nil {
		b.Fatal(err)
	}
	if chosen, why := sandbox.UseHelper(b, helperProgram(b)); !chosen {
		b.Fatal(why)
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("no bwrap")
	}
	ws := benchTree(b, 0)
	spec, err := sandbox.Default(ws, "")
	require.NoError(b, err)
	ctx := context.Background()
	// The launcher: the parent of a command's helper.
	c := &sandbox.Cmd{Spec: spec, Line: "sleep 1"}
	require.NoError(b, c.Start(ctx))
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Pid()))
	require.NoError(b, err)
	c.Kill()
	_, _ = c.Wait()
	_, after, _ := strings.Cut(string(status), "\nPPid:")
	launcher, err := strconv.Atoi(strings.Fields(after)[0])
	require.NoError(b, err)
	// Without a launcher (a harness that starts its helpers itself) the
	// helpers are this process's children, counted in cpuOf.
	tree := func() time.Duration {
		if launcher == os.Getpid() {
			return 0
		}
		return treeCPU(b, launcher)
	}

	boxed := func() {
		c := &sandbox.Cmd{Spec: spec, Line: "true"}
		require.NoError(b, c.Start(ctx))
		e, err := c.Wait()
		require.NoError(b, err)
		require.Equal(b, 0, e.Code)
	}
	wrapped := func() {
		cmd := exec.Command(bwrap, "--unshare-all", "--die-with-parent", "--new-session",
			"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
			"--bind", ws, ws, "--chdir", ws, "--clearenv", "--setenv", "PATH", os.Getenv("PATH"),
			"/bin/sh", "-c", "true")
		out, err := cmd.CombinedOutput()
		require.NoError(b, err, "%s", out)
	}
	plain := func() {
		cmd := exec.Command("/bin/sh", "-c", "true")
		cmd.Dir = ws
		require.NoError(b, cmd.Run())
	}
	var box, bw, pl time.Duration
	l0 := tree()
	b.ResetTimer()
	for range b.N {
		s0 := cpuOf()
		boxed()
		box += cpuOf() - s0
		s0 = cpuOf()
		wrapped()
		bw += cpuOf() - s0
		s0 = cpuOf()
		plain()
		pl += cpuOf() - s0
	}
	b.StopTimer()
	// The launcher's helpers, once it has reaped the last (Wait may
	// return before the helper's own exit).
	time.Sleep(200 * time.Millisecond)
	box += tree() - l0
	per := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(per(box), "sandbox-cpu-ms")
	b.ReportMetric(per(bw), "bwrap-cpu-ms")
	b.ReportMetric(per(pl), "plain-cpu-ms")
	b.ReportMetric(float64(box)/float64(bw), "sandbox-vs-bwrap-cpu")
}
