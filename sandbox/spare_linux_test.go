package sandbox_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// childrenOf lists the live (not zombie) children of pid.
func childrenOf(pid int) []int {
	var out []int
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			c, err := strconv.Atoi(s)
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c))
			if err == nil && !strings.Contains(string(stat), ") Z ") {
				out = append(out, c)
			}
		}
	}
	return out
}

// spareOf waits until the launcher has exactly one live child besides
// the helpers of commands not: the spare helper it started for the next
// command.
func spareOf(t *testing.T, launcher int, not ...int) int {
	t.Helper()
	var spare int
	require.Eventually(t, func() bool {
		kids := slices.DeleteFunc(childrenOf(launcher), func(k int) bool { return slices.Contains(not, k) })
		if len(kids) != 1 {
			return false
		}
		spare = kids[0]
		// A child still in the launcher's fork, before it runs the
		// helper's program, is not the spare yet (stopping it there
		// stops the launcher's main thread, which waits for the exec):
		// its name is still the launcher's.
		own, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", launcher))
		if err != nil {
			return false
		}
		name, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", spare))
		return err == nil && string(name) != string(own)
	}, 30*time.Second, 5*time.Millisecond, "a spare helper")
	return spare
}

// startReading starts line in spec's sandbox and returns its first n
// lines of output, the command running on.
func startReading(t *testing.T, spec sandbox.Spec, line string, n int) (*sandbox.Cmd, []string) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	c := &sandbox.Cmd{Spec: spec, Line: line, Stdout: w, Stderr: w}
	require.NoError(t, c.Start(t.Context()))
	w.Close()
	br := bufio.NewReader(r)
	var lines []string
	for range n {
		l, err := br.ReadString('\n')
		require.NoError(t, err, "%q", lines)
		lines = append(lines, strings.TrimSpace(l))
	}
	return c, lines
}

// namespaces are what a command's shell says of its namespaces.
const namespaces = "readlink /proc/self/ns/user /proc/self/ns/mnt /proc/self/ns/pid /proc/self/ns/net /proc/self/ns/ipc /proc/self/ns/uts"

// The launcher starts the next command's helper while the current one
// runs (a spare: its Go runtime's start and its namespaces are then not
// part of the next command's start), and each command still runs in a
// helper and namespaces of its own that served no command before: the
// spare is the next command's helper; every namespace differs between
// two commands. A spare that dies before its command is replaced (the
// command runs in a helper started for it), and so is one of another
// network setting.
func TestSpareHelperServesTheNextCommand(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	spec := defaultSpec(t)
	c0, _ := startSleep(t, spec)
	launcher := parentOf(t, c0.Pid())
	c0.Kill()
	_, _ = c0.Wait()

	// Two commands at once, the second in the spare started while the
	// first runs: every namespace differs (both live, so no number of a
	// namespace gone is given again).
	c1, ns1 := startReading(t, spec, namespaces+"; exec sleep 60", 6)
	spare := spareOf(t, launcher, c0.Pid(), c1.Pid())
	c2, ns2 := startReading(t, spec, namespaces+"; exec sleep 60", 6)
	require.Equal(t, spare, c2.Pid(), "the spare is the command's helper")
	for i := range ns1 {
		require.NotEqual(t, ns1[i], ns2[i], "two commands share a namespace")
	}
	for _, c := range []*sandbox.Cmd{c1, c2} {
		c.Kill()
		_, _ = c.Wait()
	}
	self, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	require.NotContains(t, ns2, self, "no network: a network namespace of its own")

	// A spare killed before its command: the command runs all the same,
	// in a helper of its own.
	dead := spareOf(t, launcher)
	require.NoError(t, syscall.Kill(dead, syscall.SIGKILL))
	require.Eventually(t, func() bool { return len(childrenOf(launcher)) == 0 }, 10*time.Second, 5*time.Millisecond)
	c := &sandbox.Cmd{Spec: spec, Line: "sleep 30"}
	require.NoError(t, c.Start(t.Context()))
	require.NotEqual(t, dead, c.Pid())
	c.Kill()
	_, _ = c.Wait()

	// A command with the network gets none of the spares made for
	// commands without (nor they one made for it).
	netSpec := spec.Clone()
	netSpec.Network = true
	noNet := spareOf(t, launcher)
	out, e := run(t, netSpec, "readlink /proc/self/ns/net")
	require.Equal(t, 0, e.Code, out)
	require.Equal(t, self, strings.TrimSpace(out), "the network: the harness's namespace")
	out, e = run(t, spec, "readlink /proc/self/ns/net")
	require.Equal(t, 0, e.Code, out)
	require.NotEqual(t, self, strings.TrimSpace(out))
	// It was sent SIGKILL; on a loaded machine it may take a while to
	// run its exit.
	require.Eventually(t, func() bool { return !slices.Contains(childrenOf(launcher), noNet) }, 20*time.Second, 10*time.Millisecond,
		"a spare of another setting is not kept")
}

// mountTable is the mounts a command sees, from its
// /proc/self/mountinfo, without what differs from one mount namespace to
// the next (mount ids, peer groups): mount point, options, file system
// type, source and super block options, sorted.
func mountTable(t *testing.T, spec sandbox.Spec, line string) ([]string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	c := &sandbox.Cmd{Spec: spec, Line: line, Stdout: w, Stderr: w}
	require.NoError(t, c.Start(t.Context()))
	w.Close()
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	e, err := c.Wait()
	require.NoError(t, err)
	require.Equal(t, 0, e.Code, "%s", out)
	var table []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		sep := slices.Index(f, "-")
		require.Greater(t, sep, 5, l)
		table = append(table, strings.Join(append([]string{f[4], f[5]}, f[sep+1:]...), " "))
	}
	slices.Sort(table)
	return table, c.Pid()
}

// A command served by a spare helper sees the very mounts a command
// whose helper was started for it sees: the same paths, each read-only
// or writable alike; the store and the git controls covered, the
// workspace not a mount of its own.
func TestSpareSeesTheSameMounts(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	ws := t.TempDir()
	out, err := exec.Command("git", "init", "-q", ws).CombinedOutput()
	require.NoError(t, err, "%s", out)
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	c0, _ := startSleep(t, spec)
	launcher := parentOf(t, c0.Pid())
	c0.Kill()
	_, _ = c0.Wait()

	// No spare: the next helper is started for its command.
	require.NoError(t, syscall.Kill(spareOf(t, launcher, c0.Pid()), syscall.SIGKILL))
	require.Eventually(t, func() bool { return len(childrenOf(launcher)) == 0 }, 10*time.Second, 5*time.Millisecond)
	const line = "cat /proc/self/mountinfo"
	fresh, _ := mountTable(t, spec, line)
	spare := spareOf(t, launcher)
	through, pid := mountTable(t, spec, line)
	require.Equal(t, spare, pid, "the second command ran in the spare")
	require.Equal(t, fresh, through)

	has := func(prefix, opt string) {
		t.Helper()
		for _, m := range through {
			if strings.HasPrefix(m, prefix+" ") {
				require.Contains(t, strings.Split(strings.Fields(m)[1], ","), opt, m)
				return
			}
		}
		t.Fatalf("no mount on %s in %q", prefix, through)
	}
	has(filepath.Join(ws, ".harness"), "ro")
	has(filepath.Join(ws, ".git"), "rw")
	has(filepath.Join(ws, ".git", "hooks"), "ro")
	has(filepath.Join(ws, ".git", "config"), "ro")
	has(filepath.Join(ws, ".git", "info"), "ro")
	has("/proc", "rw")
	for _, m := range through {
		require.False(t, strings.HasPrefix(m, ws+" "), "the workspace is no mount of its own: %s", m)
	}
}

// A spare helper slow to take its command (stopped here, as a helper
// the scheduler has not run yet, or a stuck one, would be) holds up no
// other command: the launcher waits for its answer beside its other
// work, holding no lock, so a command asked for meanwhile starts in a
// helper of its own and ends; the slow spare's command runs once it
// answers. (Before, the launcher waited for it, up to 10 s, before it
// read the next request, and the slow spare's command failed at the
// end.)
func TestSlowSpareHoldsUpNoOtherCommand(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	spec := defaultSpec(t)
	c0, _ := startSleep(t, spec)
	t.Cleanup(func() {
		c0.Kill()
		_, _ = c0.Wait()
	})
	launcher := parentOf(t, c0.Pid())
	spare := spareOf(t, launcher, c0.Pid())
	require.NoError(t, syscall.Kill(spare, syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(spare, syscall.SIGCONT) })

	type result struct {
		pid int
		out string
		err error
	}
	done := make(chan result, 2)
	for range 2 { // one of the two is given the stopped spare
		go func() {
			out, err := os.CreateTemp(t.TempDir(), "out")
			if err != nil {
				done <- result{err: err}
				return
			}
			defer out.Close()
			c := &sandbox.Cmd{Spec: spec, Line: "echo ok", Stdout: out, Stderr: out}
			err = c.Start(t.Context())
			if err == nil {
				var e sandbox.Exit
				e, err = c.Wait()
				if err == nil && e.Code != 0 {
					err = fmt.Errorf("exit %v", e)
				}
			}
			b, _ := os.ReadFile(out.Name())
			done <- result{pid: c.Pid(), out: string(b), err: err}
		}()
	}
	next := func() result {
		t.Helper()
		select {
		case r := <-done:
			return r
		case <-time.After(time.Minute):
			t.Fatal("a command did not end")
			return result{}
		}
	}
	first := next()
	require.NoError(t, first.err, "the command beside the slow spare's")
	require.Equal(t, "ok\n", first.out)
	require.NotEqual(t, spare, first.pid)
	select {
	case r := <-done:
		t.Fatalf("the stopped spare's command ended before the spare went on (the other took over 10 s?): %+v", r)
	default:
	}
	require.NoError(t, syscall.Kill(spare, syscall.SIGCONT), "the stopped spare is gone: the launcher gave up on it")
	second := next()
	require.NoError(t, second.err, "the slow spare's command, once it went on")
	require.Equal(t, "ok\n", second.out)
	require.Equal(t, spare, second.pid, "it ran in the spare")
}

// A spare helper left unused ends when its life is over (30 s; shortened
// here, but long enough to be seen): no helper waits for hours for a
// command that does not come, nor outlives so a session whose last
// command has run. The next command starts in a helper of its own.
func TestIdleSpareEnds(t *testing.T) {
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	sandbox.SetSpareLife(t, 10*time.Second)
	spec := defaultSpec(t)
	c0, _ := startSleep(t, spec)
	launcher := parentOf(t, c0.Pid())
	spare := spareOf(t, launcher, c0.Pid())
	c0.Kill()
	_, _ = c0.Wait()
	require.Eventually(t, func() bool { return len(childrenOf(launcher)) == 0 }, time.Minute, 20*time.Millisecond,
		"the spare %d is still there", spare)

	out, e := run(t, spec, "echo ok")
	require.Equal(t, 0, e.Code, out)
	require.Equal(t, "ok\n", out)
}
