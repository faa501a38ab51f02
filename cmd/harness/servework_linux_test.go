package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// quickScript runs one short command and ends.
const quickScript = `{"text": "Counting.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"echo counted >> counts.txt; sleep 0.3\"}"}]}
{"text": "Counted."}
`

// startWorker starts harness worker with args in dir.
func startWorker(t *testing.T, dir string, args ...string) (*exec.Cmd, *harnesstest.LockedBuffer) {
	t.Helper()
	w := exec.Command(harnessBin(t), append([]string{"worker"}, args...)...)
	w.Dir = dir
	w.Env = append(os.Environ(), "NO_COLOR=1", "HARNESS_STORE=")
	var out harnesstest.LockedBuffer
	w.Stdout, w.Stderr = &out, &out
	require.NoError(t, w.Start())
	t.Cleanup(func() { w.Process.Signal(syscall.SIGKILL); w.Wait() })
	return w, &out
}

// waitStatus waits until harness threads lists the thread with status.
func waitStatus(t *testing.T, dir, id, status string, why func() string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + ` +` + status + `\b`)
	require.Eventually(t, func() bool {
		out, _, _ := harnessIn(t, dir, "threads")
		return re.MatchString(out)
	}, 60*time.Second, 100*time.Millisecond, "%s never %s: %s", id, status, why())
}

// waitSaid waits until out has said line at least once: a server or a
// worker prints a thread's end just after it records it, so harness
// threads can list the thread done a moment before the line is there.
func waitSaid(t *testing.T, out func() string, line string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(out(), line) }, 30*time.Second, 20*time.Millisecond,
		"never said %q: %s", line, out())
}

// TestServeDrivesSubmittedThreads: harness serve on a store in a
// directory drives what was submitted before it started and what is
// submitted while it runs, to done, each by the policy it was submitted
// with (the server's own --approve is for its page's threads: a thread
// submitted with none is asked of a person); submit says who drives the
// thread.
func TestServeDrivesSubmittedThreads(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": quickScript})
	t.Setenv("HARNESS_STORE", "")
	stdout, stderr, code := harnessIn(t, dir, "submit", "--thread", "t0", "--approve", "all", "Count")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "no server holds the store, so nobody drives it: run it with harness resume t0")

	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--model", "scripted:script.jsonl", "--approve", "all")
	require.Eventually(t, func() bool { return strings.Contains(srv.output(), "it drives submitted threads, 4 at a time") }, 30*time.Second, 10*time.Millisecond, "the server says what it drives")
	waitStatus(t, dir, "t0", "done", srv.output)

	stdout, stderr, code = harnessIn(t, dir, "submit", "--thread", "t1", "--approve", "all", "Count")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, fmt.Sprintf("harness serve (pid %d, http://127.0.0.1:", srv.cmd.Process.Pid))
	require.Contains(t, stdout, "drives it; follow it with: harness log -f t1")
	waitStatus(t, dir, "t1", "done", srv.output)
	waitSaid(t, srv.output, " t1 done")
	require.Equal(t, 1, strings.Count(srv.output(), " t1 done"), "one end, said once: %s", srv.output())

	stdout, _, code = harnessIn(t, dir, "submit", "--thread", "t2", "-o", "json", "Count")
	require.Zero(t, code)
	require.Contains(t, stdout, `"driven_by": "serve"`)
	waitStatus(t, dir, "t2", "parked", srv.output)
	out, _, _ := harnessIn(t, dir, "threads")
	require.Regexp(t, `(?m)^t2 +parked +confirmation`, out, "submitted with no policy: the server's own --approve all decides nothing of it; a person is asked")
	_, stderr, code = harnessIn(t, dir, "approve", "t2", "1-c")
	require.Zero(t, code, stderr)
	waitStatus(t, dir, "t2", "done", srv.output)
}

// TestWorkerThroughServe: harness worker on a store in a directory says
// to start harness serve when nothing holds it; with a server that
// drives nothing (--drive 0), submit says nobody drives the thread until
// a worker takes work from it, which then drives it through the socket.
func TestWorkerThroughServe(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": quickScript})
	t.Setenv("HARNESS_STORE", "")
	_, stderr, code := harnessIn(t, dir, "worker", "--model", "scripted:script.jsonl")
	require.NotZero(t, code)
	require.Contains(t, stderr, "no harness server holds the store")
	require.Contains(t, stderr, "start `harness serve` in "+dir)
	_, err := os.Stat(filepath.Join(dir, ".harness"))
	require.True(t, os.IsNotExist(err), "the worker made no store")

	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--drive", "0")
	require.Eventually(t, func() bool { return strings.Contains(srv.output(), "it drives no submitted thread (--drive 0)") }, 30*time.Second, 10*time.Millisecond, "the server says what it drives")
	stdout, stderr, code := harnessIn(t, dir, "submit", "--thread", "t1", "Count")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "nobody drives it: harness serve (pid")
	require.Contains(t, stdout, "harness resume t1")

	_, wout := startWorker(t, dir, "--model", "scripted:script.jsonl", "--approve", "all")
	waitStatus(t, dir, "t1", "done", wout.String)
	stdout, stderr, code = harnessIn(t, dir, "submit", "--thread", "t2", "Count")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "a worker takes it up through harness serve (pid")
	waitStatus(t, dir, "t2", "done", wout.String)
	waitSaid(t, wout.String, " t2 done")
	require.Equal(t, 1, strings.Count(wout.String(), " t2 done"), wout.String())
	require.NotContains(t, srv.output(), "t2 done", "the server drives nothing")
}

// TestWorkerKilledThroughServe: two workers take work from one server;
// the thread one of them drives is never driven by the other while it
// lives; killed (SIGKILL) in the middle of its command, the worker lets
// go of the thread and of its job, and the other takes the thread up at
// once: the command in doubt is recorded as interrupted, never run again,
// and the thread parks on reconcile.
func TestWorkerKilledThroughServe(t *testing.T) {
	marker := fmt.Sprintf("wkill%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	cmdline := `echo started-` + marker + `; sleep 20; echo finished > finished.txt`
	script := `{"text": "Waiting.", "tool_calls": [{"id": "c", "name": "run_command", "args": ` + jsonString(t, `{"command":`+jsonString(t, cmdline)+`}`) + `}]}
{"text": "Waited."}
`
	dir := workspace(t, map[string]string{"script.jsonl": script})
	t.Setenv("HARNESS_STORE", "")
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--drive", "0")
	a, aout := startWorker(t, dir, "--model", "scripted:script.jsonl", "--approve", "all")
	_, stderr, code := harnessIn(t, dir, "submit", "--thread", "t1", "Wait")
	require.Zero(t, code, stderr)
	require.Eventually(t, func() bool { return len(procsWith(t, cmdline)) > 0 }, 60*time.Second, 20*time.Millisecond,
		"the command never started: %s", aout.String())
	_, bout := startWorker(t, dir, "--model", "scripted:script.jsonl", "--approve", "all")
	require.Eventually(t, func() bool { return strings.Contains(bout.String(), "SIGTERM or Ctrl-C drains") }, 30*time.Second, 20*time.Millisecond, bout.String())
	time.Sleep(2 * time.Second) // time for b to take the thread, if it could
	require.NotContains(t, bout.String(), "t1", "one driver per thread: a holds it")

	require.NoError(t, a.Process.Signal(syscall.SIGKILL))
	a.Wait()
	require.Eventually(t, func() bool { return strings.Contains(bout.String(), "t1 in doubt") }, 30*time.Second, 20*time.Millisecond,
		"b never took the thread up: %s\nserver: %s", bout.String(), srv.output())
	waitStatus(t, dir, "t1", "parked", bout.String)
	out, _, _ := harnessIn(t, dir, "threads")
	require.Regexp(t, `(?m)^t1 +parked +reconcile`, out)
	log, stderr, code := harnessIn(t, dir, "log", "-o", "jsonl", "t1")
	require.Zero(t, code, stderr)
	require.Equal(t, 1, strings.Count(log, `"kind":"action.started"`), "never run again: %s", log)
	require.Contains(t, log, `"kind":"action.interrupted"`)
	require.Eventually(t, func() bool { return len(procsWith(t, cmdline)) == 0 }, 10*time.Second, 20*time.Millisecond, "the command died with its worker")
	_, err := os.Stat(filepath.Join(dir, "finished.txt"))
	require.True(t, os.IsNotExist(err), "the command never finished")
}

// TestWorkersAndServeShareTheWork: the server and two workers drive
// threads of one store at once; each thread is driven by one of them,
// once, to done.
func TestWorkersAndServeShareTheWork(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": quickScript})
	t.Setenv("HARNESS_STORE", "")
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--drive", "2", "--model", "scripted:script.jsonl", "--approve", "all")
	_, aout := startWorker(t, dir, "--model", "scripted:script.jsonl", "--approve", "all", "--concurrency", "2")
	_, bout := startWorker(t, dir, "--model", "scripted:script.jsonl", "--approve", "all", "--concurrency", "2")
	const n = 8
	for i := range n {
		_, stderr, code := harnessIn(t, dir, "submit", "--thread", fmt.Sprintf("t%d", i), "--approve", "all", "Count")
		require.Zero(t, code, stderr)
	}
	all := func() string { return srv.output() + aout.String() + bout.String() }
	for i := range n {
		waitStatus(t, dir, fmt.Sprintf("t%d", i), "done", all)
	}
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		waitSaid(t, all, " "+id+" done")
		require.Equal(t, 1, strings.Count(all(), " "+id+" done"), "one end of %s: %s", id, all())
		log, _, _ := harnessIn(t, dir, "log", "-o", "jsonl", id)
		require.Equal(t, 1, strings.Count(log, `"kind":"action.started"`), "%s: %s", id, log)
	}
	b, err := os.ReadFile(filepath.Join(dir, "counts.txt"))
	require.NoError(t, err)
	require.Equal(t, n, strings.Count(string(b), "counted"), "each command ran once")
}

// TestServeLeavesARunAlone: a thread a person runs through the server is
// that person's command's (the server never drives it, and it keeps the
// model the command gave); answered without --resume, the server drives
// it on, and approve says so.
func TestServeLeavesARunAlone(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": quickScript, "other.jsonl": strings.ReplaceAll(quickScript, "Counted.", "Counted by the other.")})
	t.Setenv("HARNESS_STORE", "")
	// The server approves everything of its own page's threads; a
	// person's run is not one of them.
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--model", "scripted:script.jsonl", "--approve", "all")
	stdout, stderr, code := harnessIn(t, dir, "run", "--thread", "t1", "--model", "scripted:other.jsonl", "--no-input", "Count")
	require.Equal(t, exitParked, code, stdout+stderr)
	time.Sleep(2 * serveSettle)
	out, _, _ := harnessIn(t, dir, "threads")
	require.Regexp(t, `(?m)^t1 +parked +confirmation`, out, "the server answers nothing a person is asked")
	require.NotContains(t, srv.output(), "t1", "the server left the run alone")

	stdout, stderr, code = harnessIn(t, dir, "approve", "t1", "1-c")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "posted to t1; harness serve (pid")
	require.Contains(t, stdout, "drives it; follow it with: harness log -f t1")
	waitStatus(t, dir, "t1", "done", srv.output)
	out, _, _ = harnessIn(t, dir, "threads")
	require.Regexp(t, `(?m)^t1 +done .*scripted:other\.jsonl`, out, "the model the run recorded")
	stdout, _, _ = harnessIn(t, dir, "log", "t1")
	require.Contains(t, stdout, "Counted by the other.")
}
