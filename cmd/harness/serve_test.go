//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// serving is a harness process that serves a workspace: harness serve, or
// harness run --serve.
type serving struct {
	t   testing.TB
	cmd *exec.Cmd
	out harnesstest.LockedBuffer // its stdout and stderr
}

func (s *serving) output() string { return s.out.String() }

var servedURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=([0-9a-f]+)`)

// startServer starts harness with args in dir and waits until it serves:
// its socket is there and it printed its address.
func startServer(t testing.TB, dir string, args ...string) *serving {
	t.Helper()
	s := &serving{t: t, cmd: exec.Command(harnessBin(t), args...)}
	s.cmd.Dir = dir
	s.cmd.Env = append(os.Environ(), "NO_COLOR=1")
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGKILL)
		s.cmd.Wait()
	})
	require.Eventually(t, func() bool {
		_, err := os.Stat(socketstore.Path(filepath.Join(dir, ".harness")))
		return err == nil && servedURL.MatchString(s.output())
	}, 30*time.Second, 10*time.Millisecond, "the server never served:\n%s", s.output())
	return s
}

// url is the address the server printed, and its token.
func (s *serving) url() (string, string) {
	m := servedURL.FindStringSubmatch(s.output())
	u := m[0]
	return u[:strings.Index(u, "/?")], m[1]
}

// stop interrupts the server and returns its exit code.
func (s *serving) stop() int {
	s.t.Helper()
	require.NoError(s.t, s.cmd.Process.Signal(os.Interrupt))
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if err != nil {
		require.ErrorAs(s.t, err, &ee, s.output())
		return ee.ExitCode()
	}
	return 0
}

const sleepyScript = `{"text": "Running it.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"echo ran >> runs.txt && echo 'ttl_seconds = 300' > cache.toml && sleep 1\"}"}]}
{"text": "Done."}
`

// TestThreadsWhileRunWorks: while a server holds the store, harness run
// works through it, and harness threads in the same workspace meanwhile
// lists the threads (exit 0) — the command runs, nobody is told the store
// is in use.
func TestThreadsWhileRunWorks(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": sleepyScript})
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0")

	run := exec.Command(harnessBin(t), "run", "--model", "scripted:script.jsonl", "--approve", "all", "Migrate the cache")
	run.Dir = dir
	run.Env = append(os.Environ(), "NO_COLOR=1")
	var out harnesstest.LockedBuffer // read while the process writes it
	run.Stdout, run.Stderr = &out, &out
	require.NoError(t, run.Start())
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "runs.txt"))
		return err == nil && string(b) == "ran\n"
	}, 30*time.Second, 10*time.Millisecond, "the command never ran:\n%s", &out)

	stdout, stderr, code := harnessIn(t, dir, "threads")
	require.Zero(t, code, stderr)
	require.Regexp(t, `t1 +running +1-c +just now`, stdout, "running, not in doubt: the run holds it through the server")
	stdout, stderr, code = harnessIn(t, dir, "log", "t1")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "action.started")

	require.NoError(t, run.Wait(), out.String())
	require.Contains(t, out.String(), "done: thread t1")
	stdout, _, code = harnessIn(t, dir, "replay", "t1", "--verify")
	require.Zero(t, code)
	require.Contains(t, stdout, "verified:")
	runs, err := os.ReadFile(filepath.Join(dir, "runs.txt"))
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(runs))

	require.Zero(t, srv.stop(), srv.output())
	_, err = os.Stat(socketstore.Path(filepath.Join(dir, ".harness")))
	require.ErrorIs(t, err, os.ErrNotExist, "the server takes its socket with it")
	_, stderr, code = harnessIn(t, dir, "threads")
	require.Zero(t, code, "with the server gone, a command opens the store itself: %s", stderr)
}

// TestTwoApprovalsResumeOnce: two harness approve --resume, at once, from
// two processes through one server: the command runs once, and both end
// well.
func TestTwoApprovalsResumeOnce(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": sleepyScript})
	startServer(t, dir, "serve", "--addr", "127.0.0.1:0")
	_, stderr, code := harnessIn(t, dir, "run", "--model", "scripted:script.jsonl", "--no-input", "Migrate the cache")
	require.Equal(t, exitParked, code, stderr)

	var wg sync.WaitGroup
	outs := make([]string, 2)
	codes := make([]int, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var errb string
			outs[i], errb, codes[i] = harnessIn(t, dir, "approve", "t1", "--resume")
			outs[i] += errb
		}()
	}
	wg.Wait()
	for i := range 2 {
		require.Zero(t, codes[i], outs[i])
	}
	// One drove it to the end; the other did too, or (coming after the
	// answer was taken) found it already answered.
	require.True(t, strings.Contains(outs[0], "done: thread t1") || strings.Contains(outs[1], "done: thread t1"), "%s\n---\n%s", outs[0], outs[1])
	runs, err := os.ReadFile(filepath.Join(dir, "runs.txt"))
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(runs), "the command ran once")
	stdout, _, _ := harnessIn(t, dir, "log", "t1")
	require.Equal(t, 1, strings.Count(stdout, "action.started"), stdout)
	require.Equal(t, 1, strings.Count(stdout, "confirmation.answered"), stdout)
	require.NotContains(t, stdout, "action.interrupted", "neither took the other's action for one in doubt")
}

// TestRunServe: harness run --serve runs the thread with the server up;
// the thread parks, the page's API answers it as the token's person, the
// server resumes it; interrupted, the command says how the thread ended.
func TestRunServe(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": writeScript})
	srv := startServer(t, dir, "run", "--serve", "--addr", "127.0.0.1:0", "--model", "scripted:script.jsonl", "Set the cache TTL to 300")
	require.Eventually(t, func() bool { return strings.Contains(srv.output(), "still serving") }, 30*time.Second, 10*time.Millisecond, srv.output())
	require.Contains(t, srv.output(), "parked: thread t1 waits for a person")
	base, token := srv.url()

	call := func(method, path, body string) (int, map[string]any) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		require.NoError(t, json.Unmarshal(b, &v), string(b))
		return resp.StatusCode, v
	}
	code, d := call("GET", "/api/threads/t1", "")
	require.Equal(t, http.StatusOK, code)
	pending := d["waits"].([]any)[0].(map[string]any)
	body := fmt.Sprintf(`{"kind": "confirmation", "request_id": %q, "approved": true, "digest": %q}`, pending["request_id"], pending["digest"])
	code, res := call("POST", "/api/threads/t1/answer", body)
	require.Equal(t, http.StatusCreated, code, res)
	require.Equal(t, true, res["resuming"])
	require.Eventually(t, func() bool {
		_, d := call("GET", "/api/threads/t1", "")
		return d["status"] == "done"
	}, 30*time.Second, 20*time.Millisecond)
	b, err := os.ReadFile(filepath.Join(dir, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", string(b))

	stdout, _, _ := harnessIn(t, dir, "log", "t1")
	me, _, _ := harnessIn(t, dir, "threads", "-o", "json") // through the server, while it serves
	require.Contains(t, me, `"status": "done"`)
	require.Regexp(t, `confirmation.answered +1-call_1 approved by \S+`, stdout)
	require.Zero(t, srv.stop(), srv.output())
	require.Contains(t, srv.output(), "done: thread t1 (seq 10)")
}

// TestAutoServe: with "serve": {"auto": true} in the settings, the first
// command starts a server in the background, and the commands after it
// go through it. From a file inside the workspace, only once the person
// trusts it: before, nothing is started.
func TestAutoServe(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": writeScript})
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(t.TempDir(), "config")}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".harness", "config.json"), []byte(`{"serve": {"auto": true, "addr": "127.0.0.1:0"}}`), 0o644))
	_, stderr, code := harnessEnv(t, dir, env, "run", "--model", "scripted:script.jsonl", "--no-input", "Set the cache TTL to 300")
	require.Equal(t, exitParked, code, stderr)
	require.Contains(t, stderr, "config.json (serve); to review and trust them: harness trust")
	require.NotContains(t, stderr, "started a server")
	require.NoFileExists(t, filepath.Join(dir, ".harness", "serve.json"))

	_, stderr, code = harnessEnv(t, dir, env, "trust", "--yes")
	require.Zero(t, code, stderr)
	_, stderr, code = harnessEnv(t, dir, env, "run", "--model", "scripted:script.jsonl", "--no-input", "Set the cache TTL to 300")
	require.Equal(t, exitParked, code, stderr)
	require.Regexp(t, `started a server of this workspace \(pid (\d+)\): http://127.0.0.1:\d+/\?token=`, stderr)
	var info struct{ PID int }
	run, err := socketstore.RunDir(filepath.Join(dir, ".harness"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(run, "serve.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &info))
	t.Cleanup(func() { syscall.Kill(info.PID, syscall.SIGINT) })
	fi, err := os.Stat(filepath.Join(run, "serve.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "it holds a token")
	require.NoFileExists(t, filepath.Join(dir, ".harness", "serve.json"), "the token is never in the workspace")
	require.FileExists(t, filepath.Join(run, "serve.log"))

	stdout, stderr, code := harnessEnv(t, dir, env, "threads")
	require.Zero(t, code, stderr)
	require.Regexp(t, `t2 +parked`, stdout)
	require.NotContains(t, stderr, "started a server", "the one running serves it")
	require.NoError(t, syscall.Kill(info.PID, syscall.SIGINT))
	require.Eventually(t, func() bool { return syscall.Kill(info.PID, 0) != nil }, 10*time.Second, 10*time.Millisecond)
}

// TestServeRefusals: a second server of one store, and an address
// beyond loopback from the settings, are refused.
func TestServeRefusals(t *testing.T) {
	dir := workspace(t, map[string]string{})
	startServer(t, dir, "serve", "--addr", "127.0.0.1:0")
	_, stderr, code := harnessIn(t, dir, "serve", "--addr", "127.0.0.1:0")
	require.Equal(t, exitError, code)
	require.Contains(t, stderr, "a harness server already holds the store")

	other := workspace(t, map[string]string{})
	require.NoError(t, os.MkdirAll(filepath.Join(other, ".harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, ".harness", "config.json"), []byte(`{"serve": {"addr": "0.0.0.0:8470"}}`), 0o644))
	_, stderr, code = harnessIn(t, other, "serve")
	require.Equal(t, exitError, code)
	require.Contains(t, stderr, "not a loopback address")
}

// TestServeIdle: a server with --idle stops once nobody has used it for
// that long, and takes its socket with it.
func TestServeIdle(t *testing.T) {
	dir := workspace(t, map[string]string{})
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--idle", "300ms")
	_, stderr, code := harnessIn(t, dir, "threads") // a use
	require.Zero(t, code, stderr)
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, srv.output())
	case <-time.After(20 * time.Second):
		t.Fatalf("the idle server never stopped:\n%s", srv.output())
	}
	require.Contains(t, srv.output(), "nobody used the server for 300ms; stopping")
	_, err := os.Stat(socketstore.Path(filepath.Join(dir, ".harness")))
	require.ErrorIs(t, err, os.ErrNotExist)
}
