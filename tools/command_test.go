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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/tools"
)

func TestRunCommand(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) { testRunCommand(t, sb.opts...) })
	}
}

func testRunCommand(t *testing.T, opts ...tools.Option) {
	s, root := workspace(t, map[string]string{"a.txt": "alpha\n"}, opts...)
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
	}, 30*time.Second, 10*time.Millisecond)
	return pid
}

// offSandbox runs commands unsandboxed (mode off), under the process
// group's watcher.
var offSandbox = tools.WithSandbox(sandbox.Spec{Mode: sandbox.Off})

// sandboxes are the ways a command runs: in the default sandbox, and
// unsandboxed. What a command leaves running is killed in both.
var sandboxes = []struct {
	name string
	opts []tools.Option
}{{"sandboxed", nil}, {"off", []tools.Option{offSandbox}}}

var markers atomic.Int64

// marker returns a duration for sleep that no other process has: a
// process of the test is found by it in its command line, in whatever PID
// namespace it runs.
func marker() string {
	return fmt.Sprintf("30.%d%04d", os.Getpid()%100000, markers.Add(1))
}

// procsWith returns the pids of the live processes whose command line
// holds the argument arg.
func procsWith(t *testing.T, arg string) []int {
	t.Helper()
	var pids []int
	if runtime.GOOS != "linux" {
		out, err := exec.Command("ps", "-A", "-o", "pid=,args=").Output()
		require.NoError(t, err)
		for line := range strings.SplitSeq(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) > 1 && slices.Contains(f[1:], arg) {
				pid, _ := strconv.Atoi(f[0])
				if alive(pid) {
					pids = append(pids, pid)
				}
			}
		}
		return pids
	}
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && slices.Contains(strings.Split(string(cmdline), "\x00"), arg) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// gone requires that no process with arg in its command line is left,
// within 15 s: well before its sleep of 30 s ends, with room for a
// loaded machine.
func gone(t *testing.T, arg, what string) {
	t.Helper()
	require.Eventually(t, func() bool { return len(procsWith(t, arg)) == 0 }, 15*time.Second, 10*time.Millisecond,
		"%s (sleep %s) outlived the command: pids %v", what, arg, procsWith(t, arg))
}

// The timeout kills the command and what it started: a child in the
// background and a grandchild under a second shell.
func TestRunCommandTimeoutKillsTheGroup(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) {
			s, root := workspace(t, nil, sb.opts...)
			child, grandchild := marker(), marker()
			start := time.Now()
			rep := call(t, s, tools.RunCommand, js(t, map[string]any{
				"command":         fmt.Sprintf("sleep %s & sh -c 'sleep %s & touch started; wait'; echo never", child, grandchild),
				"timeout_seconds": 0.5,
			}))
			require.Less(t, time.Since(start), 10*time.Second, "the call returns soon after the timeout")
			require.Equal(t, facts.StatusFailed, rep.Status)
			require.Equal(t, "run_command: timed out after 500ms; the command and its process group were killed", rep.Error)
			require.Equal(t, -1, rep.ExitCode)
			require.NotContains(t, rep.Stdout, "never")
			require.FileExists(t, filepath.Join(root, "started"), "the processes were started")
			gone(t, child, "the child")
			gone(t, grandchild, "the grandchild")
		})
	}
}

// A command that exits leaves nothing running, and the call does not wait
// for what it put in the background.
func TestRunCommandReapsBackground(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) {
			s, _ := workspace(t, nil, sb.opts...)
			bg := marker()
			start := time.Now()
			rep := call(t, s, tools.RunCommand, js(t, map[string]string{"command": "sleep " + bg + " & echo started"}))
			require.Less(t, time.Since(start), 10*time.Second)
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			require.Equal(t, "started\n", rep.Stdout)
			gone(t, bg, "the background sleep")
		})
	}
}

// Cancelling the context kills the command; the error is the context's.
func TestRunCommandCancelled(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) {
			s, root := workspace(t, nil, sb.opts...)
			tool, _ := s.Lookup(tools.RunCommand)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			var rep facts.Report
			var err error
			sleep := marker()
			go func() {
				defer close(done)
				rep, err = tool.Execute(ctx, action.Request{Payload: json.RawMessage(js(t, map[string]string{"command": "echo before; touch started; sleep " + sleep}))})
			}()
			require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(root, "started")); return err == nil }, 30*time.Second, 10*time.Millisecond)
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
			gone(t, sleep, "the sleep")
		})
	}
}

// A cancelled command is asked to stop first: its processes get SIGTERM
// (a trap sees it and tidies up), and only one that ignores it is killed,
// with SIGKILL, after the grace of 500 ms.
func TestRunCommandCancelledTermThenKill(t *testing.T) {
	for _, sb := range sandboxes {
		for _, tc := range []struct {
			name, trap string
			tidied     bool
		}{
			{"a trap tidies up", `trap 'echo term > tidied; exit 143' TERM`, true},
			{"TERM ignored", `trap '' TERM`, false},
		} {
			t.Run(sb.name+"/"+tc.name, func(t *testing.T) {
				s, root := workspace(t, nil, sb.opts...)
				tool, _ := s.Lookup(tools.RunCommand)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				sleep := marker()
				done := make(chan struct{})
				var rep facts.Report
				var err error
				go func() {
					defer close(done)
					rep, err = tool.Execute(ctx, action.Request{Payload: json.RawMessage(js(t, map[string]string{
						"command": tc.trap + "; sleep " + sleep + " & touch started; wait"}))})
				}()
				require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(root, "started")); return err == nil },
					30*time.Second, 10*time.Millisecond)
				cancelled := time.Now()
				cancel()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("a cancelled command was not stopped")
				}
				require.ErrorIs(t, err, context.Canceled)
				require.Contains(t, rep.Error, "sent SIGTERM, then SIGKILL after 500ms")
				gone(t, sleep, "the sleep")
				if tc.tidied {
					b, rerr := os.ReadFile(filepath.Join(root, "tidied"))
					require.NoError(t, rerr, "the trap never ran: no SIGTERM came before the kill")
					require.Equal(t, "term\n", string(b))
					return
				}
				require.NoFileExists(t, filepath.Join(root, "tidied"))
				require.GreaterOrEqual(t, time.Since(cancelled), 500*time.Millisecond,
					"a command that ignores SIGTERM is killed only after the grace")
			})
		}
	}
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
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) { testTimeoutKillsAShellThatLeftTheGroup(t, sb.opts...) })
	}
}

func testTimeoutKillsAShellThatLeftTheGroup(t *testing.T, opts ...tools.Option) {
	s, _ := workspace(t, nil, opts...)
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

// action.WithOutput gives the command's output as it comes, under its
// action's id: the first line is seen while the command still runs, and
// the report keeps it all.
func TestRunCommandShowsItsOutput(t *testing.T) {
	s, _ := workspace(t, map[string]string{}, offSandbox)
	first := make(chan struct{})
	var mu sync.Mutex
	var got strings.Builder
	ctx := action.WithOutput(context.Background(), func(_, id, stream string, p []byte) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&got, "%s:%s:%s", id, stream, p)
		if strings.Contains(got.String(), "one") {
			select {
			case <-first:
			default:
				close(first)
			}
		}
	})
	tool, ok := s.Lookup(tools.RunCommand)
	require.True(t, ok)
	done := make(chan facts.Report, 1)
	go func() {
		// The command waits until its first line was seen: output is given
		// while the command runs, not once it ended.
		rep, err := tool.Execute(ctx, action.Request{ActionID: "a1", Adapter: tools.RunCommand, Payload: json.RawMessage(js(t, map[string]string{
			"command": "echo one; while [ ! -e go ]; do sleep 0.01; done; echo two >&2"}))})
		require.NoError(t, err)
		done <- rep
	}()
	select {
	case <-first:
	case <-time.After(20 * time.Second):
		t.Fatal("the first line was not shown while the command ran")
	}
	require.NoError(t, os.WriteFile(filepath.Join(s.Root(), "go"), nil, 0o644))
	rep := <-done
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "one\n", rep.Stdout)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, got.String(), "a1:stdout:one\n")
	require.Contains(t, got.String(), "a1:stderr:two\n")
}
