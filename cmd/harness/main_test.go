package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// TestMain makes the test binary the harness command when it is run as
// "harness": testscript puts a copy named harness first on $PATH, so the
// scripts, and the tests that start processes, drive the real command as a
// user would.
func TestMain(m *testing.M) {
	natstest.ServeNodeIfAsked() // a node of a natstest.ProcessCluster: never returns
	testscript.Main(ownConfig{m}, map[string]func(){
		"harness":       func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"mcptestserver": func() { os.Exit(mcpTestServer()) },
	})
}

// ownConfig runs the tests with a user configuration directory of their
// own (the scripts set theirs): the commands the tests start seal the
// threads they drive with a key made there, not in the person's.
type ownConfig struct{ m *testing.M }

func (o ownConfig) Run() int {
	dir, err := os.MkdirTemp("", "harness-test-config-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	return o.m.Run()
}

// TestScripts runs the scripts in testdata/script: each drives the built
// command in a fresh workspace.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("USER", "tester")
			// Who answers is the login name (the record's, not a --by).
			env.Setenv("WHO", (&app{getenv: os.Getenv}).whoami())
			// The seeded corruptions at the repo root, for replay --verify --file.
			root, err := filepath.Abs("../../testdata")
			if err != nil {
				return err
			}
			env.Setenv("TESTDATA", root)
			// The user's configuration directory, outside the workspace
			// ($WORK): trust (harness trust) is remembered there.
			xdg, err := os.MkdirTemp("", "harness-xdg-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(xdg) })
			env.Setenv("XDG_CONFIG_HOME", xdg)
			// The user's cache directory too (ledgers, worktrees), not
			// /no-home's, which every script of every run would share.
			cache, err := os.MkdirTemp("", "harness-cache-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(cache) })
			env.Setenv("XDG_CACHE_HOME", cache)
			// Someone else's configuration directory, outside the
			// workspace too: their key and witness log (seal.txtar).
			other, err := os.MkdirTemp("", "harness-xdg-other-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(other) })
			env.Setenv("OTHER_CONFIG_HOME", other)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":       cmdExits,
			"waitfile":    cmdWaitfile,
			"validjson":   cmdValidJSON,
			"bigfile":     cmdBigfile,
			"bigwrite":    cmdBigwrite,
			"fakemodel":   cmdFakeModel,
			"streamcheck": cmdStreamCheck,
			"forge":       cmdForge,
			"httpserve":   cmdHTTPServe,
			"otlpcollect": cmdOTLPCollect,
			"retry":       cmdRetry,
			"waitserve":   cmdWaitServe,
		},
	})
}

// cmdExits runs a command and checks its exit code: exits CODE cmd args...
// Its stdout and stderr are kept for the stdout and stderr commands.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdValidJSON checks that the last command's stdout is one JSON value.
func cmdValidJSON(ts *testscript.TestScript, neg bool, args []string) {
	out := ts.ReadFile("stdout")
	dec := json.NewDecoder(strings.NewReader(out))
	var v any
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if (err == nil) == neg {
		ts.Fatalf("stdout is not one JSON value: %v", err)
	}
}

// cmdWaitfile waits up to 30 seconds for a file to exist.
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("%s did not appear within 30s", args[0])
}

// cmdBigfile writes a large file of numbered lines, 64 bytes each:
// bigfile FILE BYTES [TAIL] — the first BYTES bytes of the lines (a
// multiple of 64), then TAIL and a newline, if given.
func cmdBigfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: bigfile FILE BYTES [TAIL]")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 || n%64 != 0 {
		ts.Fatalf("bigfile: BYTES %q: want a multiple of 64", args[1])
	}
	var b strings.Builder
	for i := range n / 64 {
		l := "line " + strconv.Itoa(i) + " "
		b.WriteString(l + strings.Repeat("x", 63-len(l)) + "\n")
	}
	if len(args) == 3 {
		b.WriteString(args[2] + "\n")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}

// cmdBigwrite writes a model script whose first turn calls write_file on
// PATH with the content of a file, and whose second is done: bigwrite
// SCRIPT PATH CONTENTFILE.
func cmdBigwrite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: bigwrite SCRIPT PATH CONTENTFILE")
	}
	content, err := os.ReadFile(ts.MkAbs(args[2]))
	ts.Check(err)
	call, err := json.Marshal(map[string]string{"path": args[1], "content": string(content)})
	ts.Check(err)
	first, err := json.Marshal(map[string]any{"text": "Writing it whole.",
		"tool_calls": []map[string]string{{"id": "w", "name": "write_file", "args": string(call)}}})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), append(first, "\n{\"text\": \"Done.\"}\n"...), 0o644))
}

// cmdFakeModel serves an OpenAI-compatible chat completions API for the
// rest of the script, answering each request with the next line of a
// replies file (the last repeats) — {"status": 400, "body": {...}}, the
// status 200 when left out; or {"turn": {"text": ["pie", "ces"], "calls":
// [["id", "tool", "args"]]}}, streamed when the request asks for a stream
// — and sets OPENAI_BASE_URL to it. Each request
// body is appended to requests.jsonl in $WORK, a line each.
//
//	fakemodel REPLIES.jsonl
func cmdFakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakemodel REPLIES.jsonl")
	}
	type reply struct {
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
		// Turn is a turn given as the request asks it: streamed
		// (server-sent events, the text in these pieces) or whole.
		Turn *struct {
			Text  []string    `json:"text"`
			Calls [][3]string `json:"calls"`
		} `json:"turn"`
	}
	var replies []reply
	for i, line := range strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n") {
		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			ts.Fatalf("%s line %d: %v", args[0], i+1, err)
		}
		replies = append(replies, r)
	}
	if len(replies) == 0 {
		ts.Fatalf("%s: no replies", args[0])
	}
	log := ts.MkAbs("requests.jsonl")
	var mu sync.Mutex // guards n and the requests file
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		rp := replies[min(n, len(replies)-1)]
		n++
		if f, err := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			f.Write(append(body, '\n'))
			f.Close()
		}
		mu.Unlock()
		if t := rp.Turn; t != nil {
			var req struct{ Stream bool }
			_ = json.Unmarshal(body, &req)
			if req.Stream {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, e := range providertest.OpenAI.Stream(t.Text, true, t.Calls...).Events {
					io.WriteString(w, e+"\n\n")
					w.(http.Flusher).Flush()
				}
				return
			}
			rp.Body = json.RawMessage(providertest.OpenAI.Calls(strings.Join(t.Text, ""), t.Calls...).Body)
		}
		w.Header().Set("Content-Type", "application/json")
		if rp.Status != 0 {
			w.WriteHeader(rp.Status)
		}
		w.Write(rp.Body)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
}
