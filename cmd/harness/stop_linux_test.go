package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// stopScript runs a command that sleeps (its command line holds marker)
// and, had it ended on its own, would write late.txt.
func stopScript(marker string) string {
	return `{"text": "Waiting.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"echo ready-to-stop; sleep ` + marker + ` && echo late > late.txt\"}"}]}
{"text": "Stopped, as asked."}
`
}

// stopMidCommand has harness run drive a thread whose command sleeps,
// with harness serve holding the store, and stops the thread with stop
// (from another process) once the command runs. The command's process is
// gone when stop returns, the run ends stopped (exit 1), and the log
// records the interruption between the stop asked for and the stop, with
// no completion.
func stopMidCommand(t testing.TB, stop func(t testing.TB, dir string, srv *serving)) time.Duration {
	return stopMidCommandOn(t, true, stop)
}

// stopMidCommandOn is stopMidCommand, with harness serve holding the
// store when served, else the run itself (a directory store).
func stopMidCommandOn(t testing.TB, served bool, stop func(t testing.TB, dir string, srv *serving)) time.Duration {
	marker := fmt.Sprintf("3600.%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	dir := workspace(t, map[string]string{"script.jsonl": stopScript(marker)})
	var srv *serving
	if served {
		srv = startServer(t, dir, "serve", "--addr", "127.0.0.1:0")
	}
	run := exec.Command(harnessBin(t), "run", "--model", "scripted:script.jsonl", "--approve", "all", "Wait")
	run.Dir = dir
	run.Env = append(os.Environ(), "NO_COLOR=1", "HARNESS_STORE=")
	var out harnesstest.LockedBuffer
	run.Stdout, run.Stderr = &out, &out
	require.NoError(t, run.Start())
	ran := make(chan error, 1)
	go func() { ran <- run.Wait() }()
	t.Cleanup(func() { run.Process.Kill() })
	require.Eventually(t, func() bool { return len(procsWith(t, marker)) > 0 }, 60*time.Second, 10*time.Millisecond,
		"the command never ran: %s", out.String())

	begin := time.Now()
	stop(t, dir, srv)
	took := time.Since(begin)
	require.Empty(t, procsWith(t, marker), "the command's process outlived the stop")
	t.Logf("stop returned %v after it was asked, the command gone", took)
	select {
	case err := <-ran:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, out.String())
		require.Equal(t, 1, ee.ExitCode(), "a stopped run exits 1: %s", out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the run never ended: %s", out.String())
	}
	require.Contains(t, out.String(), "stopped: thread t1")
	require.NotContains(t, out.String(), "\x1b[2J", "the run shows the stop's reason escaped")
	require.NoFileExists(t, filepath.Join(dir, "late.txt"))

	stdout, stderr, code := harnessIn(t, dir, "log", "-o", "jsonl", "t1")
	require.Zero(t, code, stderr)
	var kinds []facts.Kind
	for line := range strings.SplitSeq(strings.TrimSpace(stdout), "\n") {
		var f facts.Fact
		require.NoError(t, f.UnmarshalJSON([]byte(line)), line)
		kinds = append(kinds, f.Kind)
	}
	require.GreaterOrEqual(t, len(kinds), 4)
	require.Equal(t, []facts.Kind{facts.KindActionStarted, facts.KindStopRequested, facts.KindActionInterrupted, facts.KindThreadStopped},
		kinds[len(kinds)-4:], "%v", kinds)
	require.NotContains(t, kinds, facts.KindActionCompleted)
	stdout, stderr, code = harnessIn(t, dir, "replay", "t1", "--verify")
	require.Zero(t, code, stdout+stderr)
	return took
}

// TestStopReachesARunningRun: harness stop in one terminal stops the
// command a harness run runs in another.
func TestStopReachesARunningRun(t *testing.T) {
	stopMidCommand(t, func(t testing.TB, dir string, _ *serving) {
		// A reason is a person's text, shown escaped wherever it goes.
		stdout, stderr, code := harnessIn(t, dir, "stop", "t1", "--reason", "enough\x1b[2J")
		require.Zero(t, code, stdout+stderr)
		require.Contains(t, stdout, "stop.requested")
		require.NotContains(t, stdout, "\x1b[2J")
		require.Regexp(t, `(?m)^stopped: thread t1 \(seq \d+\): stopped by \S+: enough\\x1b\[2J$`, stdout)
	})
}

// TestStopReachesARunOnADirectoryStore: with no server, the run holds
// the store; harness stop from another terminal asks it to stop through
// the store's directory, and returns once the command is gone and the
// run has let go: well before the command's hour (stop fails, and the
// test with it, when the run did not take the request within 10 s, or
// still held the store 30 s after it took it; idle the stop takes well
// under 2 s, and the test logs how long).
func TestStopReachesARunOnADirectoryStore(t *testing.T) {
	stopMidCommandOn(t, false, func(t testing.TB, dir string, _ *serving) {
		stdout, stderr, code := harnessIn(t, dir, "stop", "t1", "--reason", "enough\x1b[2J")
		require.Zero(t, code, stdout+stderr)
		require.Contains(t, stderr, "another process holds the store: asking it to stop t1")
		require.Regexp(t, `(?m)^stopped: thread t1 \(seq \d+\): stopped by \S+: enough\\x1b\[2J$`, stdout)
	})
}

// TestStopThroughTheAPI: POST /api/threads/ID/stop on the server stops
// the command a harness run (a client of the server) runs, and answers
// with the stopped state.
func TestStopThroughTheAPI(t *testing.T) {
	stopMidCommand(t, func(t testing.TB, dir string, srv *serving) {
		base, token := srv.url()
		req, err := http.NewRequest("POST", base+"/api/threads/t1/stop", strings.NewReader(`{"reason": "from the page"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		var st map[string]any
		require.NoError(t, json.Unmarshal(b, &st), string(b))
		require.Equal(t, "stopped", st["status"], string(b))
		require.Contains(t, st["reason"], "from the page")
	})
}

// BenchmarkStopCommand: from harness stop (a process of its own, as a
// person runs it) to the command a harness run runs (through harness
// serve) gone, the stop recorded and stop returned — against a bare
// SIGTERM to a sleeping child and its reaping.
func BenchmarkStopCommand(b *testing.B) {
	var stop, term time.Duration
	for b.Loop() {
		stop += stopMidCommand(b, func(t testing.TB, dir string, _ *serving) {
			stdout, stderr, code := harnessIn(t, dir, "stop", "t1")
			require.Zero(t, code, stdout+stderr)
		})
		term += harnesstest.SIGTERMTook(b)
	}
	n := float64(b.N)
	b.ReportMetric(float64(stop)/n/1e6, "stop-ms/op")
	b.ReportMetric(float64(term)/n/1e6, "sigterm-ms/op")
	b.ReportMetric(float64(stop)/float64(term), "stop/sigterm")
}

// BenchmarkStopCommandDirectoryStore is BenchmarkStopCommand with no
// server: the run holds a directory store, and harness stop asks it
// through the store's directory.
func BenchmarkStopCommandDirectoryStore(b *testing.B) {
	var stop, term time.Duration
	for b.Loop() {
		stop += stopMidCommandOn(b, false, func(t testing.TB, dir string, _ *serving) {
			stdout, stderr, code := harnessIn(t, dir, "stop", "t1")
			require.Zero(t, code, stdout+stderr)
		})
		term += harnesstest.SIGTERMTook(b)
	}
	n := float64(b.N)
	b.ReportMetric(float64(stop)/n/1e6, "stop-ms/op")
	b.ReportMetric(float64(term)/n/1e6, "sigterm-ms/op")
	b.ReportMetric(float64(stop)/float64(term), "stop/sigterm")
}
