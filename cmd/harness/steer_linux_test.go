package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// steerScript runs one command that waits for go.txt to appear in the
// workspace (for at most two minutes), then ends.
const steerScript = `{"text": "Waiting.", "tool_calls": [{"id": "c1", "name": "run_command", "args": "{\"command\":\"echo started > started.txt; i=0; while [ ! -e go.txt ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; echo went\"}"}]}
{"text": "Done."}
`

// startHarness starts harness with args in dir as a process of its own,
// its stdout and stderr in out; wait waits (with a generous deadline) for
// it to end and returns its exit code.
func startHarness(t *testing.T, dir string, out *harnesstest.LockedBuffer, args ...string) (wait func() int) {
	t.Helper()
	cmd := exec.Command(harnessBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return func() int {
		t.Helper()
		select {
		case err := <-ended:
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			require.NoError(t, err)
			return 0
		case <-time.After(2 * time.Minute):
			t.Fatalf("harness %s never ended: %s", strings.Join(args, " "), out.String())
			return -1
		}
	}
}

// apiCall calls the server's API and returns the status and body.
func apiCall(t *testing.T, srv *serving, method, path string) (int, string) {
	t.Helper()
	base, token := srv.url()
	req, err := http.NewRequest(method, base+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// streamFacts are the facts of a stream-json output, in the order
// written: each one's thread, seq and kind, and the texts of its user
// messages.
func streamFacts(t *testing.T, out string) (seqs []uint64, kinds []string, texts []string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var l struct {
			Type string `json:"type"`
			Fact struct {
				Thread string `json:"thread"`
				Seq    uint64 `json:"seq"`
				Kind   string `json:"kind"`
				Data   struct {
					Text string `json:"text"`
				} `json:"data"`
			} `json:"fact"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &l), line)
		if l.Type != "fact" {
			continue
		}
		require.Equal(t, "t1", l.Fact.Thread, line)
		seqs = append(seqs, l.Fact.Seq)
		kinds = append(kinds, l.Fact.Kind)
		if l.Fact.Kind == "user.message" {
			texts = append(texts, l.Fact.Data.Text)
		}
	}
	return seqs, kinds, texts
}

// TestSteerALiveThread: harness run -o stream-json drives t1, in a
// process of its own, on a store harness serve holds, while a second
// terminal steers it. While its command runs, every front end says t1 is
// running (the list, its JSON, the API, the page, which offers no
// resume); a budget raise from the second terminal says the process
// driving the thread takes it up; a continue says at once that it waits
// for that process. The run's stream carries the facts the others
// appended — shown while its command still runs — and every fact of the
// log, each once, in seq order.
func TestSteerALiveThread(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": steerScript})
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0")

	var runOut harnesstest.LockedBuffer
	runWait := startHarness(t, dir, &runOut, "run", "--no-input", "--approve", "all", "--model", "scripted:script.jsonl", "-o", "stream-json", "job")
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(dir, "started.txt"))
		return err == nil
	}, 60*time.Second, 20*time.Millisecond, "the command never started: %s", &runOut)

	// Every front end says running.
	stdout, stderr, code := harnessIn(t, dir, "threads")
	require.Zero(t, code, stderr)
	require.Regexp(t, `(?m)^t1\s+running\s`, stdout)
	stdout, stderr, code = harnessIn(t, dir, "threads", "-o", "json")
	require.Zero(t, code, stderr)
	var list []struct {
		Status  string   `json:"status"`
		Running []string `json:"running"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &list), stdout)
	require.Len(t, list, 1)
	require.Equal(t, "running", list[0].Status)
	require.Equal(t, []string{"1-c1"}, list[0].Running)
	status, body := apiCall(t, srv, "GET", "/api/threads/t1/state")
	require.Equal(t, http.StatusOK, status, body)
	require.Regexp(t, `"status":\s*"running"`, body)
	status, body = apiCall(t, srv, "GET", "/t/t1")
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, body, `t/t1/resume"`, "the page offers no resume of a thread another process drives")
	status, body = apiCall(t, srv, "POST", "/api/threads/t1/resume")
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, "driven_elsewhere")

	// A raise says who takes it up.
	stdout, stderr, code = harnessIn(t, dir, "budget", "t1", "raise", "--turns", "3")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "the process that drives it takes it up itself")
	require.NotContains(t, stdout, "continue with")

	// A continue says at once that it waits for the process driving t1.
	var contOut harnesstest.LockedBuffer
	contWait := startHarness(t, dir, &contOut, "continue", "t1", "INJECTED")
	require.Eventually(t, func() bool {
		return strings.Contains(contOut.String(), "t1 is driven by another process")
	}, 60*time.Second, 20*time.Millisecond, "the continue never said it waits: %s", &contOut)
	require.Contains(t, contOut.String(), "Ctrl-C stops waiting")

	// The run's stream shows what the others appended while its command
	// still runs (go.txt is not there yet).
	require.Eventually(t, func() bool {
		out := runOut.String()
		return strings.Contains(out, `"budget.raised"`) && strings.Contains(out, `"INJECTED"`)
	}, 60*time.Second, 20*time.Millisecond, "the run's stream never showed the facts others appended: %s", &runOut)
	require.NotContains(t, runOut.String(), `"action.completed"`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.txt"), nil, 0o644))
	require.Zero(t, runWait(), runOut.String())
	require.Zero(t, contWait(), contOut.String())

	// The stream is the log as the store had it when the run ended: each
	// fact once, in seq order, from the first.
	seqs, kinds, texts := streamFacts(t, runOut.String())
	require.NotEmpty(t, seqs)
	for i, s := range seqs {
		require.Equal(t, uint64(i+1), s, "fact %d of the stream: %v", i, seqs)
	}
	require.Contains(t, kinds, "budget.raised")
	require.Equal(t, "job", texts[0])
	require.Contains(t, texts, "INJECTED")
	stdout, stderr, code = harnessIn(t, dir, "log", "t1", "-o", "jsonl")
	require.Zero(t, code, stderr)
	logged := strings.Count(strings.TrimSpace(stdout), "\n") + 1
	require.LessOrEqual(t, len(seqs), logged)
	// The continue drove on after the run let go: what it appended is in
	// its own output, not the run's.
	require.Contains(t, contOut.String(), "done: thread t1")
}
