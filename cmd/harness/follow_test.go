package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// gatedScript runs a command that waits until the test creates the file
// "go": the thread is live, and appends, for as long as the test wants.
const gatedScript = `{"text": "Waiting for go.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"touch started; while [ ! -f go ]; do sleep 0.05; done; echo ran\"}"}]}
{"text": "Done."}
`

// following is a harness log --follow process.
type following struct {
	cmd  *exec.Cmd
	out  harnesstest.LockedBuffer
	errb harnesstest.LockedBuffer
	done chan struct{}
	err  error
}

func startFollowing(t *testing.T, dir string, args ...string) *following {
	t.Helper()
	f := &following{cmd: exec.Command(harnessBin(t), args...), done: make(chan struct{})}
	f.cmd.Dir = dir
	f.cmd.Env = append(os.Environ(), "NO_COLOR=1", "HARNESS_STORE=")
	f.cmd.Stdout, f.cmd.Stderr = &f.out, &f.errb
	require.NoError(t, f.cmd.Start())
	go func() { f.err = f.cmd.Wait(); close(f.done) }()
	t.Cleanup(func() {
		f.cmd.Process.Kill()
		<-f.done
	})
	return f
}

func (f *following) running() bool {
	select {
	case <-f.done:
		return false
	default:
		return true
	}
}

// exit waits for the process and returns its exit code.
func (f *following) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("log --follow never ended:\n%s\n%s", f.out.String(), f.errb.String())
	}
	var ee *exec.ExitError
	if errors.As(f.err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, f.err)
	return 0
}

// facts parses the lines the process printed with -o jsonl (the
// stream's, checked against its schema by streamLines) and returns the
// facts' JSON, the seq of the first and the result.
func (f *following) facts(t *testing.T) (map[uint64]string, uint64, drive.Result) {
	t.Helper()
	got, first, _, result, err := streamLines(f.out.String())
	require.NoError(t, err)
	return got, first, result
}

// followLive submits a thread, follows it with log -f -o jsonl, and has
// another process run it. log -f goes on while the thread has not ended,
// prints every fact once, in order, and ends, exit 0, when it is done.
// live: the store is shared (a server holds it), so the command's start
// is printed while the command still runs.
func followLive(t *testing.T, dir string, live bool) {
	t.Helper()
	_, stderr, code := harnessIn(t, dir, "submit", "--thread", "t1", "Wait for go")
	require.Equal(t, 0, code, stderr)
	f := startFollowing(t, dir, "log", "--follow", "-o", "jsonl", "t1")
	require.Eventually(t, func() bool { return strings.Contains(f.out.String(), `"kind":"user.message"`) }, 30*time.Second, 20*time.Millisecond,
		"log -f never printed the first fact: %s", f.errb.String())
	require.True(t, f.running(), "a submitted thread has not ended: log -f goes on")

	// Another process runs the thread; its command waits for "go".
	resume := exec.Command(harnessBin(t), "resume", "t1", "--wait", "60s", "--model", "scripted:script.jsonl", "--approve", "all", "--sandbox", "off")
	resume.Dir = dir
	resume.Env = append(os.Environ(), "NO_COLOR=1", "HARNESS_STORE=")
	var rout harnesstest.LockedBuffer
	resume.Stdout, resume.Stderr = &rout, &rout
	require.NoError(t, resume.Start())
	resumed := make(chan error, 1)
	go func() { resumed <- resume.Wait() }()
	t.Cleanup(func() { resume.Process.Kill() })
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	}, 60*time.Second, 20*time.Millisecond, "the command never started: %s", rout.String())
	if live {
		require.Eventually(t, func() bool { return strings.Contains(f.out.String(), `"kind":"action.started"`) }, 30*time.Second, 20*time.Millisecond,
			"log -f did not print the command's start while it ran: %s", f.out.String())
		require.NotContains(t, f.out.String(), `"kind":"action.completed"`)
	}
	require.True(t, f.running(), "the thread runs: log -f goes on")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o644))
	select {
	case err := <-resumed:
		require.NoError(t, err, rout.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("resume never ended: %s", rout.String())
	}
	require.Equal(t, 0, f.exit(t), "done: exit 0 as run's; stderr: %s", f.errb.String())

	got, first, result := f.facts(t)
	require.Equal(t, uint64(1), first, "every fact once, in order, from the first")
	require.NotContains(t, f.out.String(), "done:", "-o jsonl: lines only")
	require.Equal(t, "done", result.Status)
	require.Equal(t, "Done.", result.Text)
	// The log as log prints it after the fact is the same.
	all, stderr, code := harnessIn(t, dir, "log", "-o", "jsonl", "t1")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
	require.Len(t, got, len(lines))
	for i, line := range lines {
		require.Equal(t, line, got[uint64(i+1)], "fact %d as log -o jsonl prints it", i+1)
	}
}

// TestLogFollowLeavesOnCtrlC: following a thread nobody runs goes on
// until interrupted, and exits 130 as other commands do.
func TestLogFollowLeavesOnCtrlC(t *testing.T) {
	dir := workspace(t, map[string]string{})
	_, stderr, code := harnessIn(t, dir, "submit", "--thread", "t1", "Nobody runs this")
	require.Equal(t, 0, code, stderr)
	f := startFollowing(t, dir, "log", "-f", "t1")
	require.Eventually(t, func() bool { return strings.Contains(f.out.String(), "user.message") }, 30*time.Second, 20*time.Millisecond,
		"log -f never printed the first fact: %s", f.errb.String())
	require.True(t, f.running())
	require.NoError(t, f.cmd.Process.Signal(os.Interrupt))
	require.Equal(t, exitInterrupted, f.exit(t), f.errb.String())
}

// TestLogFollowThroughAServer: while harness serve holds the store, log
// -f prints each fact as another process appends it — the command's
// start before the command ends — and ends with the thread.
func TestLogFollowThroughAServer(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": gatedScript})
	startServer(t, dir, "serve", "--addr", "127.0.0.1:0")
	followLive(t, dir, true)
}

// TestLogFollowADirectoryStore: with no server, log -f lets go of the
// store between looks, so the process that runs the thread can open it
// (here with --wait, as any second command), and prints its facts when
// it can read them; it ends with the thread.
func TestLogFollowADirectoryStore(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": gatedScript})
	followLive(t, dir, false)
}
