package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// parentOf is the parent process id of pid.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			ppid, err := strconv.Atoi(strings.TrimSpace(v))
			require.NoError(t, err)
			return ppid
		}
	}
	t.Fatalf("no PPid in /proc/%d/status", pid)
	return 0
}

// startSleep starts sleep ARG in spec's sandbox, and waits until it runs.
func startSleep(t *testing.T, spec sandbox.Spec) (*sandbox.Cmd, string) {
	t.Helper()
	a := mark()
	c := &sandbox.Cmd{Spec: spec, Line: "sleep " + a}
	require.NoError(t, c.Start(context.Background()))
	require.Eventually(t, func() bool { return len(running(a)) == 1 }, 10*time.Second, 10*time.Millisecond)
	return c, a
}

// With harness-sandbox, each command's helper is started by one
// long-lived launcher, harness-sandbox as loaded, not by the harness:
// the harness does not fork its own (large) address space per command.
// Each command still has a helper of its own. A launcher that dies takes
// its commands with it (they end killed; Wait does not hang), and the
// next command starts another.
func TestLauncherStartsHelpers(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	spec := defaultSpec(t)
	c1, a1 := startSleep(t, spec)
	c2, a2 := startSleep(t, spec)
	require.NotEqual(t, c1.Pid(), c2.Pid(), "a helper per command")
	launcher := parentOf(t, c1.Pid())
	require.NotEqual(t, os.Getpid(), launcher, "the harness forked the helper itself")
	require.Equal(t, launcher, parentOf(t, c2.Pid()), "one launcher")
	require.Equal(t, os.Getpid(), parentOf(t, launcher))
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", launcher))
	require.NoError(t, err)
	require.Contains(t, exe, "memfd:"+sandbox.HelperName, "the launcher runs the loaded copy")

	// Kill ends the command by its pidfd.
	c1.Kill()
	e, err := c1.Wait()
	require.NoError(t, err)
	require.Equal(t, sandbox.Exit{Code: -1, Signal: syscall.SIGKILL}, e)
	require.Empty(t, running(a1))

	// The launcher dies: its command ends, killed.
	require.NoError(t, syscall.Kill(launcher, syscall.SIGKILL))
	done := make(chan struct{})
	go func() {
		defer close(done)
		e, _ = c2.Wait()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait hangs after the launcher died")
	}
	require.Equal(t, syscall.SIGKILL, e.Signal)
	require.Eventually(t, func() bool { return len(running(a2)) == 0 }, 10*time.Second, 10*time.Millisecond)

	// The next command gets a new launcher.
	out, e := run(t, spec, "echo ok")
	require.Equal(t, 0, e.Code)
	require.Equal(t, "ok\n", out)
	c3, _ := startSleep(t, spec)
	defer c3.Wait()
	defer c3.Kill()
	require.NotEqual(t, launcher, parentOf(t, c3.Pid()))
	require.NotEqual(t, os.Getpid(), parentOf(t, c3.Pid()))
}

// A file the harness holds open without close-on-exec (one it inherited,
// a terminal, say) reaches neither the launcher's helpers nor the
// command: the command has its stdin, stdout and stderr, nothing else.
func TestLauncherPassesNoOtherFiles(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
	f, err := os.Open(secret)
	require.NoError(t, err)
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd())) // no close-on-exec
	require.NoError(t, err)
	defer syscall.Close(fd)

	spec := defaultSpec(t)
	spec.Hidden = append(spec.Hidden, filepath.Dir(secret))
	c, _ := startSleep(t, spec)
	defer c.Wait()
	defer c.Kill()
	for _, pid := range []int{parentOf(t, c.Pid()), c.Pid()} {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		require.NoError(t, err)
		for _, e := range entries {
			target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
			fdinfo, _ := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
			if target == secret {
				// The launcher inherits it from the harness, as any child
				// does, but marks it close-on-exec at once.
				require.Equal(t, parentOf(t, c.Pid()), pid, "the helper holds %s", secret)
				require.True(t, closeOnExec(t, string(fdinfo)), "the launcher passes %s on:\n%s", secret, fdinfo)
			}
		}
	}
	out, e := run(t, spec, "ls /proc/self/fd; cat /proc/self/fd/"+strconv.Itoa(fd)+" 2>/dev/null")
	require.Equal(t, 1, e.Code, out)
	require.Equal(t, "0\n1\n2\n3\n", out)
}

// closeOnExec reads the close-on-exec flag from a /proc/PID/fdinfo/FD.
func closeOnExec(t *testing.T, fdinfo string) bool {
	t.Helper()
	for line := range strings.SplitSeq(fdinfo, "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			require.NoError(t, err)
			return flags&syscall.O_CLOEXEC != 0
		}
	}
	t.Fatalf("no flags in %q", fdinfo)
	return false
}

// When Wait returns, every process of the command has ended, though a
// launched helper's own exit (the namespaces' teardown) may still be
// under way: the helper kills and reaps what the shell left before it
// says how the shell ended.
func TestWaitReturnsWhenAllHaveEnded(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	spec := defaultSpec(t)
	for i := range 20 {
		a := mark()
		gate := fmt.Sprintf("go%d", i)
		c := &sandbox.Cmd{Spec: spec, Line: fmt.Sprintf("sleep %s & while [ ! -e %s ]; do sleep 0.01; done", a, gate)}
		require.NoError(t, c.Start(context.Background()))
		var pids []int
		require.Eventually(t, func() bool { pids = running(a); return len(pids) == 1 }, 10*time.Second, 10*time.Millisecond)
		stat := fmt.Sprintf("/proc/%d/stat", pids[0])
		require.NoError(t, os.WriteFile(filepath.Join(spec.Workspace, gate), nil, 0o644))
		e, err := c.Wait()
		b, _ := os.ReadFile(stat) // at once
		require.NoError(t, err)
		require.Equal(t, 0, e.Code)
		if len(b) > 0 {
			require.Contains(t, string(b), ") Z ", "round %d: the shell's background process runs on after Wait", i)
		}
	}
}

// dieEnv asks this test binary to be the harness that is killed (see
// TestLauncherDiesWithTheHarness): its value is the command.
const dieEnv = "HARNESS_SANDBOX_TEST_DIE"

// A harness that is killed takes its launcher and every command the
// launcher started with it: daemons that left the shell's session too.
func TestLauncherDiesWithTheHarness(t *testing.T) {
	if line := os.Getenv(dieEnv); line != "" {
		c := &sandbox.Cmd{Spec: defaultSpec(t), Line: line}
		require.NoError(t, c.Start(context.Background()))
		_, _ = c.Wait()
		return
	}
	daemon, double, fg := mark(), mark(), mark()
	line := fmt.Sprintf("setsid sleep %s & (setsid sh -c 'sleep %s & exit' &); sleep %s", daemon, double, fg)
	harness := exec.Command(os.Args[0], "-test.run=^TestLauncherDiesWithTheHarness$", "-test.count=1")
	harness.Env = append(os.Environ(), dieEnv+"="+line, programEnv+"="+helperProgram(t), "TMPDIR="+t.TempDir())
	require.NoError(t, harness.Start())
	t.Cleanup(func() {
		_ = harness.Process.Kill()
		_ = harness.Wait()
	})
	var pids []int
	for _, m := range []string{daemon, double, fg} {
		require.Eventually(t, func() bool { pids = running(m); return len(pids) == 1 }, 10*time.Second, 10*time.Millisecond, "sleep %s started", m)
	}
	helper := parentOf(t, pids[0]) // fg's parent: the shell, whose parent is the helper
	helper = parentOf(t, helper)
	launcher := parentOf(t, helper)
	require.Equal(t, harness.Process.Pid, parentOf(t, launcher), "the helper's parent is the harness's launcher")
	require.NoError(t, harness.Process.Signal(syscall.SIGKILL))
	_ = harness.Wait()
	for _, m := range []string{daemon, double, fg} {
		require.Eventually(t, func() bool { return len(running(m)) == 0 }, 10*time.Second, 10*time.Millisecond, "sleep %s outlives the harness", m)
	}
	require.Eventually(t, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", launcher))
		return err != nil
	}, 10*time.Second, 10*time.Millisecond, "the launcher outlives the harness")
}

// A launcher killed just as a command starts: a Start that fails says
// ErrSetup, and its command never ran; but the harness, which sees that
// no helper said a word, asks a new launcher, so the command runs.
func TestLauncherKilledAsACommandStarts(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	spec := defaultSpec(t)
	var failed, started int
	for i := range 10 {
		c, _ := startSleep(t, spec)
		launcher := parentOf(t, c.Pid())
		require.NoError(t, syscall.Kill(launcher, syscall.SIGKILL))
		ran := filepath.Join(spec.Workspace, fmt.Sprintf("ran%d", i))
		d := &sandbox.Cmd{Spec: spec, Line: "touch " + filepath.Base(ran)}
		if err := d.Start(context.Background()); err != nil {
			require.ErrorIs(t, err, sandbox.ErrSetup)
			require.NoFileExists(t, ran, "a command reported as not started ran")
			failed++
		} else {
			_, err := d.Wait()
			require.NoError(t, err)
			started++
		}
		e, _ := c.Wait()
		require.Equal(t, syscall.SIGKILL, e.Signal)
	}
	require.Zero(t, failed, "%d of 10 starts failed", failed)
	out, e := run(t, spec, "echo ok")
	require.Equal(t, 0, e.Code)
	require.Equal(t, "ok\n", out)
}
