//go:build unix

package tools_test

import (
	"context"
	"encoding/json"
	"errors"
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

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// pdeathParentDir, set in the environment, makes this test binary the
// "harness" of TestRunCommandDiesWithHarness: it runs a long command in
// that workspace until it is killed.
const pdeathParentDir = "TOOLS_TEST_PDEATH_PARENT_DIR"

// An unsandboxed command (mode off) dies with a harness that is
// SIGKILLed — which leaves the harness no chance to kill the process group
// itself: the shell, the foreground child of a shell that did not exec, a
// background job, and the group's watcher. (A sandboxed command dies with
// it too, setsid or not: see TestSandboxDiesWithHarness.)
func TestRunCommandDiesWithHarness(t *testing.T) {
	if dir := os.Getenv(pdeathParentDir); dir != "" {
		s, err := tools.New(dir, offSandbox)
		require.NoError(t, err)
		// The shell writes its pid, puts a sleep in the background, and
		// stays as the parent of a second shell that becomes a sleep; fg.pid
		// is written last.
		call(t, s, tools.RunCommand, `{"command": "echo $$ > sh.pid; sleep 30 & echo $! > bg.pid; sh -c 'echo $$ > fg.pid.tmp && mv fg.pid.tmp fg.pid && exec sleep 20'; true", "timeout_seconds": 20}`)
		return
	}
	dir := t.TempDir()
	parent := exec.Command(os.Args[0], "-test.run=^TestRunCommandDiesWithHarness$", "-test.count=1")
	parent.Env = append(os.Environ(), pdeathParentDir+"="+dir, "TMPDIR="+t.TempDir()) // what the killed harness cannot remove lands there
	require.NoError(t, parent.Start())
	t.Cleanup(func() {
		_ = parent.Process.Kill()
		_ = parent.Wait()
	})
	fg := pidFrom(t, dir, "fg.pid")
	sh, bg := pidFrom(t, dir, "sh.pid"), pidFrom(t, dir, "bg.pid")
	watcher := pgid(t, sh)
	t.Cleanup(func() { _ = syscall.Kill(-watcher, syscall.SIGKILL) }) // should the test fail
	require.NotEqual(t, sh, watcher, "the shell does not lead its group; the watcher does")
	for _, pid := range []int{sh, bg, fg} {
		require.Equal(t, watcher, pgid(t, pid), "pid %d is in the watcher's group", pid)
	}
	procs := map[string]int{"the shell": sh, "the background sleep": bg, "the foreground sleep": fg, "the watcher": watcher}
	for name, pid := range procs {
		require.True(t, alive(pid), "%s %d", name, pid)
	}

	require.NoError(t, parent.Process.Signal(syscall.SIGKILL))
	_ = parent.Wait()
	for name, pid := range procs {
		require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond, // its sleeps last 20 and 30 s
			"%s %d outlived its SIGKILLed harness", name, pid)
	}
}

// pgid is the process group of pid, a live process. (ps, rather than
// getpgid, which package syscall lacks on some Unixes.)
func pgid(t *testing.T, pid int) int {
	t.Helper()
	out, err := exec.Command("ps", "-o", "pgid=", "-p", strconv.Itoa(pid)).Output()
	require.NoError(t, err, "ps for pid %d", pid)
	id, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err, "ps for pid %d said %q", pid, out)
	return id
}

// gatedCall runs a command as an unsandboxed call (mode off: the process
// group's watcher is what its tests look at) in the background: its shell makes
// a fifo named gate, writes its pid, reads a line from the gate into $x,
// and runs then. It returns the shell's pid, read once the command is at
// the gate, and a function that writes line to the gate and returns the
// call's report.
func gatedCall(t *testing.T, then string) (sh int, open func(line string) facts.Report) {
	t.Helper()
	command := "mkfifo gate && echo $$ > sh.pid.tmp && mv sh.pid.tmp sh.pid && read -r x < gate; " + then
	s, root := workspace(t, nil, offSandbox)
	tool, _ := s.Lookup(tools.RunCommand)
	req := action.Request{Payload: json.RawMessage(js(t, map[string]string{"command": command}))}
	done := make(chan struct{})
	var rep facts.Report
	var callErr error
	go func() {
		defer close(done)
		rep, callErr = tool.Execute(context.Background(), req)
	}()
	t.Cleanup(func() { // should the test fail before opening the gate
		for {
			// Without a reader yet, the open fails (ENXIO); with one, the
			// close is the end of file it reads, and the command goes on.
			if gate, err := os.OpenFile(filepath.Join(root, "gate"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = gate.Close()
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	sh = pidFrom(t, root, "sh.pid")
	return sh, func(line string) facts.Report {
		t.Helper()
		gate, err := os.OpenFile(filepath.Join(root, "gate"), os.O_WRONLY, 0) // blocks until the command opens it
		require.NoError(t, err)
		_, err = gate.WriteString(line + "\n")
		require.NoError(t, err)
		require.NoError(t, gate.Close())
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not return")
		}
		require.NoError(t, callErr)
		return rep
	}
}

// An unsandboxed call leaves no watcher behind: the watcher leads the command's group
// while it runs, and is gone — killed and reaped, not a zombie — when the
// call returns. The command's exit code and output are its own.
func TestRunCommandLeavesNoWatcher(t *testing.T) {
	sh, open := gatedCall(t, `echo "got $x"; echo err >&2; exit 7`)
	watcher := pgid(t, sh)
	require.NotEqual(t, sh, watcher)
	require.True(t, alive(watcher), "the watcher %d runs with the command", watcher)

	// The output is collected as soon as the command exits, not after the
	// drain's grace: nothing but the command's processes holds its output
	// pipes, the watcher least of all (where /proc tells).
	if out, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", sh)); err == nil {
		errOut, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/2", sh))
		require.NoError(t, err)
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", watcher))
		require.NoError(t, err)
		require.NotEmpty(t, fds)
		for _, fd := range fds {
			held, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", watcher, fd.Name()))
			require.NoError(t, err)
			require.NotContains(t, []string{out, errOut}, held, "the watcher %d holds the command's output (its fd %s)", watcher, fd.Name())
		}
	}
	rep := open("in")
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Equal(t, 7, rep.ExitCode)
	require.Equal(t, "run_command: exited with code 7", rep.Error)
	require.Equal(t, "got in\n", rep.Stdout)
	require.Equal(t, "err\n", rep.Stderr)
	// The watcher is the harness's child: were it a zombie, not yet reaped,
	// the signal 0 would find it.
	require.ErrorIs(t, syscall.Kill(watcher, 0), syscall.ESRCH, "the watcher %d was left behind", watcher)
	require.True(t, errors.Is(syscall.Kill(-watcher, 0), syscall.ESRCH), "the group %d is empty", watcher)
}
