package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestInterruptMidCommandIsRecorded: SIGINT to harness run while a
// sandboxed command runs stops the command (its process is gone), exits
// 130, and leaves the thread resumable with action.interrupted — never a
// failed action.completed; resumed, the thread goes on (nothing changed:
// the model is told of the interruption and answers).
func TestInterruptMidCommandIsRecorded(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("3600.%d7", os.Getpid()%100000)
	script := `{"text": "Waiting.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"echo ready-to-stop; exec sleep ` + marker + `\"}"}]}
{"text": "Stopped, as asked."}
`
	dir := workspace(t, map[string]string{"script.jsonl": script})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "--approve", "all", "Wait")
	tm.expect("│ ready-to-stop")
	// The shell may still be exec'ing sleep when its line shows.
	require.Eventually(t, func() bool { return len(procsWith(t, marker)) > 0 }, 30*time.Second, 10*time.Millisecond, "the command runs")
	require.NoError(t, tm.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, exitInterrupted, tm.exit(), tm.output())
	require.Empty(t, procsWith(t, marker), "the command's process outlived the harness")
	require.Contains(t, tm.output(), "thread t1 is resumable")

	stdout, stderr, code := harnessIn(t, dir, "log", "t1")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "action.interrupted")
	require.Contains(t, stdout, "1-c interrupted: the run was cancelled while it ran, and it was stopped")
	require.NotContains(t, stdout, "action.completed")
	stdout, stderr, code = harnessIn(t, dir, "threads")
	require.Zero(t, code, stderr)
	require.Regexp(t, `t1 +resumable`, stdout)

	stdout, stderr, code = harnessIn(t, dir, "resume", "t1")
	require.Zero(t, code, stdout+stderr)
	require.Contains(t, stdout, "Stopped, as asked.")
	require.Contains(t, stdout, "done: thread t1")
}

// procsWith returns the pids of the live processes whose command line
// holds the argument arg, in whatever PID namespace they run.
func procsWith(t testing.TB, arg string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if slices.Contains(strings.Split(string(b), "\x00"), arg) {
			pids = append(pids, pid)
		}
	}
	return pids
}
