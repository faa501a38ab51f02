package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// TestLiveOutputOfAWorker: on a NATS store, harness serve, harness
// submit and harness worker, each a process of its own: the command the
// worker runs for the submitted thread shows its output on the server's
// progress streams (the API's raw, the page's escaped) while it still
// runs, and nothing of it is recorded.
func TestLiveOutputOfAWorker(t *testing.T) {
	ns := natstest.Server(t)
	t.Setenv("HARNESS_STORE", ns.ClientURL())
	marker := fmt.Sprintf("wlive%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	cmdline := `printf 'clear\033[2J-` + marker + `\n'; for i in 1 2 3; do echo line$i-` + marker + `; sleep 0.4; done; sleep 1.5; echo done-` + marker
	script := `{"text": "Counting.", "tool_calls": [{"id": "c", "name": "run_command", "args": ` + jsonString(t, `{"command":`+jsonString(t, cmdline)+`}`) + `}]}
{"text": "Counted."}
`
	dir := workspace(t, map[string]string{"script.jsonl": script})

	srv := &serving{t: t, cmd: exec.Command(harnessBin(t), "serve", "--addr", "127.0.0.1:0")}
	srv.cmd.Dir = dir
	srv.cmd.Env = append(os.Environ(), "NO_COLOR=1")
	srv.cmd.Stdout, srv.cmd.Stderr = &srv.out, &srv.out
	require.NoError(t, srv.cmd.Start())
	t.Cleanup(func() { srv.cmd.Process.Signal(syscall.SIGKILL); srv.cmd.Wait() })
	require.Eventually(t, func() bool { return servedURL.MatchString(srv.output()) }, 30*time.Second, 10*time.Millisecond, "the server never served:\n%s", srv.output())

	stdout, stderr, code := harnessIn(t, dir, "submit", "--thread", "t1", "Count")
	require.Zero(t, code, stdout+stderr)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api := progressStream(t, ctx, srv, "t1")
	page := progressAt(t, ctx, srv, "/t/t1/progress")

	w := exec.Command(harnessBin(t), "worker", "--model", "scripted:script.jsonl", "--approve", "all")
	w.Dir = dir
	w.Env = append(os.Environ(), "NO_COLOR=1")
	var wout harnesstest.LockedBuffer
	w.Stdout, w.Stderr = &wout, &wout
	require.NoError(t, w.Start())
	t.Cleanup(func() { w.Process.Signal(syscall.SIGKILL); w.Wait() })

	require.Contains(t, waitOutput(t, api, "line2-"+marker), "clear\x1b[2J-"+marker, "the API's text is raw")
	require.NotEmpty(t, procsWith(t, cmdline), "the output came while the command runs")
	onPage := waitOutput(t, page, "line2-"+marker)
	require.Contains(t, onPage, `clear\x1b[2J-`+marker, "the page's is escaped as the terminal escapes it")
	require.NotContains(t, onPage, "\x1b[2J")
	require.NotEmpty(t, procsWith(t, cmdline), "the output came to the page while the command runs")
	require.Contains(t, waitOutput(t, api, "done-"+marker), "done-"+marker)

	require.Eventually(t, func() bool {
		out, _, _ := harnessIn(t, dir, "threads")
		return regexp.MustCompile(`(?m)^t1 +done`).MatchString(out)
	}, 60*time.Second, 100*time.Millisecond, "the worker never finished t1:\n%s", wout.String())
	require.NoError(t, w.Process.Signal(os.Interrupt))
	w.Wait()
	stdout, stderr, code = harnessIn(t, dir, "log", "-o", "jsonl", "t1")
	require.Zero(t, code, stderr)
	require.NotContains(t, stdout, `"progress"`, "nothing of it is recorded")
}
