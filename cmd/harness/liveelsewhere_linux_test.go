package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// progressStream opens the server's progress stream of thread id (the
// API's, with the token) once the thread is there, and sends each
// event's data on the channel until the stream ends.
func progressStream(t *testing.T, ctx context.Context, srv *serving, id string) <-chan string {
	return progressAt(t, ctx, srv, "/api/threads/"+id+"/progress")
}

// progressAt is progressStream of the stream at path (the page's:
// /t/ID/progress).
func progressAt(t *testing.T, ctx context.Context, srv *serving, path string) <-chan string {
	t.Helper()
	base, token := srv.url()
	var resp *http.Response
	require.Eventually(t, func() bool {
		req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		if r.StatusCode != http.StatusOK {
			r.Body.Close()
			return false
		}
		resp = r
		return true
	}, 60*time.Second, 20*time.Millisecond, "the thread's progress stream never opened")
	out := make(chan string, 1024)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "progress":
				out <- strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

// outputOf is the text of a progress line of command output, or "".
func outputOf(t *testing.T, data string) string {
	var l struct {
		Type     string `json:"type"`
		Progress struct {
			Event string `json:"event"`
			Text  string `json:"text"`
		} `json:"progress"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &l), data)
	if l.Progress.Event != "output" {
		return ""
	}
	return l.Progress.Text
}

// waitOutput reads the stream until a command's output holds want, and
// returns all the output read.
func waitOutput(t *testing.T, events <-chan string, want string) string {
	t.Helper()
	var got strings.Builder
	timeout := time.After(60 * time.Second)
	for {
		select {
		case data, ok := <-events:
			require.True(t, ok, "the stream ended before %q: %s", want, got.String())
			got.WriteString(outputOf(t, data))
			if strings.Contains(got.String(), want) {
				return got.String()
			}
		case <-timeout:
			t.Fatalf("no %q on the stream: %s", want, got.String())
		}
	}
}

// TestLiveOutputOfARunElsewhere: harness run, in a process of its own,
// drives a thread on a store harness serve holds; the command's output
// reaches the server's progress stream while the command still runs, a
// stream opened late starts with what the server kept of it, and once
// the run has let go of the thread nothing of it is kept.
func TestLiveOutputOfARunElsewhere(t *testing.T) {
	marker := fmt.Sprintf("live%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	cmdline := `printf 'clear\033[2J-` + marker + `\n'; for i in 1 2 3; do echo line$i-` + marker + `; sleep 0.4; done; sleep 1.5; echo done-` + marker
	script := `{"text": "Counting.", "tool_calls": [{"id": "c", "name": "run_command", "args": ` + jsonString(t, `{"command":`+jsonString(t, cmdline)+`}`) + `}]}
{"text": "Counted."}
`
	dir := workspace(t, map[string]string{"script.jsonl": script})
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0")

	run := exec.Command(harnessBin(t), "run", "--model", "scripted:script.jsonl", "--approve", "all", "Count")
	run.Dir = dir
	run.Env = append(os.Environ(), "NO_COLOR=1", "HARNESS_STORE=")
	var out harnesstest.LockedBuffer
	run.Stdout, run.Stderr = &out, &out
	require.NoError(t, run.Start())
	ran := make(chan error, 1)
	go func() { ran <- run.Wait() }()
	t.Cleanup(func() { run.Process.Kill() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := progressStream(t, ctx, srv, "t1")
	page := progressAt(t, ctx, srv, "/t/t1/progress")
	require.Contains(t, waitOutput(t, first, "line2-"+marker), "clear\x1b[2J-"+marker, "the API's text is raw")
	require.NotEmpty(t, procsWith(t, cmdline), "the output came while the command runs")
	onPage := waitOutput(t, page, "line2-"+marker)
	require.Contains(t, onPage, `clear\x1b[2J-`+marker, "the page's is escaped as the terminal escapes it")
	require.NotContains(t, onPage, "\x1b[2J")
	require.NotEmpty(t, procsWith(t, cmdline), "the output came to the page while the command runs")

	// A page opened now starts with the output so far.
	late := progressStream(t, ctx, srv, "t1")
	got := waitOutput(t, late, "line2-"+marker)
	require.Contains(t, got, "line1-"+marker, "a late stream starts with what was kept")

	select {
	case err := <-ran:
		require.NoError(t, err, out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the run never ended: %s", out.String())
	}
	require.Contains(t, waitOutput(t, first, "done-"+marker), "done-"+marker)

	// The run let go: a stream opened now gets nothing of it.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	for data := range progressStream(t, ctx2, srv, "t1") {
		t.Fatalf("a stream opened after the run got %s", data)
	}
	stdout, stderr, code := harnessIn(t, dir, "log", "-o", "jsonl", "t1")
	require.Zero(t, code, stderr)
	require.NotContains(t, stdout, `"progress"`, "nothing of it is recorded")
}

// jsonString is s as a JSON string.
func jsonString(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}
