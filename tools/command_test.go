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
	"runtime"
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

func TestRunCommand(t *testing.T) {
	s, root := workspace(t, map[string]string{"a.txt": "alpha\n"})
	realRoot, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, command  string
		status         facts.ReportStatus
		exit           int
		stdout, stderr string
		err            string
	}{
		{name: "succeeds", command: "echo hello", status: facts.StatusSucceeded, stdout: "hello\n"},
		{name: "runs in the workspace", command: "pwd -P && cat a.txt", status: facts.StatusSucceeded, stdout: realRoot + "\nalpha\n"},
		{name: "a shell line", command: "echo one two three | wc -w | tr -d ' '", status: facts.StatusSucceeded, stdout: "3\n"},
		{name: "stderr", command: "echo oops >&2", status: facts.StatusSucceeded, stderr: "oops\n"},
		{name: "no stdin", command: "cat", status: facts.StatusSucceeded},
		{name: "non-zero exit", command: "echo partial; echo bad >&2; exit 3", status: facts.StatusFailed, exit: 3,
			stdout: "partial\n", stderr: "bad\n", err: "run_command: exited with code 3"},
		{name: "exit 1", command: "false", status: facts.StatusFailed, exit: 1, err: "run_command: exited with code 1"},
		{name: "command not found", command: "no-such-command-xyz", status: facts.StatusFailed, exit: 127, err: "run_command: exited with code 127"},
		{name: "killed by a signal", command: "kill -9 $$", status: facts.StatusFailed, exit: -1, err: "run_command: ended by signal: killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := call(t, s, tools.RunCommand, js(t, map[string]string{"command": tc.command}))
			require.Equal(t, tc.status, rep.Status, rep.Error)
			require.Equal(t, tc.exit, rep.ExitCode)
			if tc.stdout != "" || tc.status == facts.StatusSucceeded {
				require.Equal(t, tc.stdout, rep.Stdout)
			}
			if tc.stderr != "" {
				require.Equal(t, tc.stderr, rep.Stderr)
			}
			require.Equal(t, tc.err, rep.Error[:min(len(rep.Error), len(tc.err))])
			require.True(t, strings.HasPrefix(rep.Transcript, "$ "+tc.command+"\n"), rep.Transcript)
		})
	}
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if runtime.GOOS != "linux" {
		// No /proc/PID/stat: ask ps for the state, which fails for a pid
		// that is gone.
		out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
		state := strings.TrimSpace(string(out))
		return err == nil && state != "" && !strings.HasPrefix(state, "Z")
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "no such process")
	}
	// pid (comm) state ...: a zombie is dead, just not yet reaped.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// pidFrom reads a pid a command wrote to a file in the workspace.
func pidFrom(t *testing.T, root, name string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	return pid
}

// The timeout kills the command and what it started: a child in the
// background and a grandchild under a second shell.
func TestRunCommandTimeoutKillsTheGroup(t *testing.T) {
	s, root := workspace(t, nil)
	start := time.Now()
	rep := call(t, s, tools.RunCommand, `{"command": "sleep 30 & echo $! > child.pid; sh -c 'sleep 30 & echo $! > grandchild.pid; wait'; echo never", "timeout_seconds": 0.5}`)
	require.Less(t, time.Since(start), 10*time.Second, "the call returns soon after the timeout")
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Equal(t, "run_command: timed out after 500ms; the command and its process group were killed", rep.Error)
	require.Equal(t, -1, rep.ExitCode)
	require.NotContains(t, rep.Stdout, "never")
	for _, f := range []string{"child.pid", "grandchild.pid"} {
		pid := pidFrom(t, root, f)
		require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond, "%s %d outlived the timeout", f, pid)
	}
}

// A command that exits leaves nothing running, and the call does not wait
// for what it put in the background.
func TestRunCommandReapsBackground(t *testing.T) {
	s, root := workspace(t, nil)
	start := time.Now()
	rep := call(t, s, tools.RunCommand, `{"command": "sleep 30 & echo $! > bg.pid; echo started"}`)
	require.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "started\n", rep.Stdout)
	pid := pidFrom(t, root, "bg.pid")
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond)
}

// Cancelling the context kills the command; the error is the context's.
func TestRunCommandCancelled(t *testing.T) {
	s, root := workspace(t, nil)
	tool, _ := s.Lookup(tools.RunCommand)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var rep facts.Report
	var err error
	go func() {
		defer close(done)
		rep, err = tool.Execute(ctx, action.Request{Payload: json.RawMessage(`{"command": "echo $$ > sh.pid; echo before; sleep 30"}`)})
	}()
	pid := pidFrom(t, root, "sh.pid")
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled command was not stopped")
	}
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Contains(t, rep.Error, "run_command: cancelled after")
	require.Equal(t, "before\n", rep.Stdout, "the output so far is kept")
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond)
}

func TestRunCommandOutputCaps(t *testing.T) {
	s, _ := workspace(t, nil, tools.WithLimits(tools.Limits{OutputBytes: 64}))
	for _, tc := range []struct {
		name, command string
		stdout        string
		stderr        string
		transcript    []string
	}{
		{"under the cap", "printf 'short'", "short", "", nil},
		{"exactly the cap", "printf '%064d' 0", strings.Repeat("0", 64), "", nil},
		{"stdout over the cap", "printf 'HEAD%0500dTAIL' 0",
			"HEAD" + strings.Repeat("0", 28) + "\n… [444 bytes cut] …\n" + strings.Repeat("0", 28) + "TAIL", "",
			[]string{"stdout: 508 bytes, 444 cut from the middle"}},
		{"stderr over the cap, on its own", "printf 'out'; printf 'HEAD%0500dTAIL' 0 >&2",
			"out", "HEAD" + strings.Repeat("0", 28) + "\n… [444 bytes cut] …\n" + strings.Repeat("0", 28) + "TAIL",
			[]string{"stderr: 508 bytes, 444 cut from the middle"}},
		{"many small writes", "i=0; while [ $i -lt 200 ]; do echo $i; i=$((i+1)); done",
			"0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n\n… [626 bytes cut] …\n192\n193\n194\n195\n196\n197\n198\n199\n", "",
			[]string{"stdout: 690 bytes, 626 cut from the middle"}},
		{"the cut keeps whole UTF-8 sequences", "printf 'é%.0s' $(seq 100)",
			strings.Repeat("é", 16) + "\n… [136 bytes cut] …\n" + strings.Repeat("é", 16), "",
			[]string{"stdout: 200 bytes, 136 cut from the middle"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := call(t, s, tools.RunCommand, js(t, map[string]string{"command": tc.command}))
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			require.Equal(t, tc.stdout, rep.Stdout)
			require.Equal(t, tc.stderr, rep.Stderr)
			for _, line := range tc.transcript {
				require.Contains(t, rep.Transcript, line)
			}
			if tc.transcript == nil {
				require.NotContains(t, rep.Transcript, "cut")
			}
		})
	}
}

func TestRunCommandDefaultTimeout(t *testing.T) {
	s, _ := workspace(t, nil, tools.WithLimits(tools.Limits{CommandTimeout: 300 * time.Millisecond, MaxCommandTimeout: time.Second}))
	rep := call(t, s, tools.RunCommand, `{"command": "sleep 5"}`)
	require.Equal(t, "run_command: timed out after 300ms; the command and its process group were killed", rep.Error)
	rep = call(t, s, tools.RunCommand, `{"command": "sleep 5", "timeout_seconds": 2}`)
	require.Contains(t, rep.Error, `field "timeout_seconds" is 2; want more than 0 and at most 1`)
	tool, _ := s.Lookup(tools.RunCommand)
	require.Contains(t, string(tool.Schema().Schema), `"maximum":1`)
}

// A command whose shell leaves the process group — it execs a program that
// starts a session or a group of its own, as setsid and GNU timeout do —
// is still killed at the timeout, and the call returns: the shell is
// killed by its pid as well as by its group.
func TestRunCommandTimeoutKillsAShellThatLeftTheGroup(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	s, _ := workspace(t, nil)
	for _, command := range []string{
		`exec setsid sleep 30`,
		`exec perl -e 'setpgrp(0,0); sleep 30'`,
	} {
		if strings.Contains(command, "perl") {
			if _, err := exec.LookPath("perl"); err != nil {
				continue
			}
		}
		start := time.Now()
		rep := call(t, s, tools.RunCommand, fmt.Sprintf(`{"command": %q, "timeout_seconds": 0.5}`, command))
		require.Less(t, time.Since(start), 10*time.Second, "%s: the call returns soon after the timeout", command)
		require.Equal(t, facts.StatusFailed, rep.Status, command)
		require.Contains(t, rep.Error, "timed out after 500ms", command)
	}
}
