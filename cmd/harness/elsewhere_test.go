package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPromptNoticesAnAnswerGivenElsewhere: a terminal asking a
// confirmation watches the log; approved from another process (harness
// approve, on a store in a directory or through a server), the prompt
// stops asking, says who approved, and the run goes on to the end with
// the approved write; a key typed late answers nothing.
func TestPromptNoticesAnAnswerGivenElsewhere(t *testing.T) {
	t.Parallel()
	for _, served := range []bool{false, true} {
		name := "directory store"
		if served {
			name = "through a server"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := workspace(t, map[string]string{"script.jsonl": writeScript})
			if served {
				startServer(t, dir, "serve", "--addr", "127.0.0.1:0")
			}
			tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "Set the cache TTL to 300")
			tm.expect(thePrompt)
			stdout, stderr, code := harnessIn(t, dir, "approve", "t1", "1-call_1", "--wait", "60s")
			require.Zero(t, code, stdout+stderr)
			tm.expect("answered elsewhere: 1-call_1 approved by ")
			tm.send("n") // late: the prompt is gone
			require.Equal(t, exitOK, tm.exit(), tm.output())
			out := tm.output()
			require.Contains(t, out, "not asking any more")
			require.Contains(t, out, "done: thread t1")
			require.NotContains(t, out, "Reason (optional")
			require.NotContains(t, out, "already answered")
			got, err := os.ReadFile(filepath.Join(dir, "cache.toml"))
			require.NoError(t, err)
			require.Equal(t, "ttl_seconds = 300\n", string(got))
			log, _, _ := harnessIn(t, dir, "log", "t1")
			require.Equal(t, 1, bytes.Count([]byte(log), []byte("confirmation.answered")), log)
		})
	}
}

// TestPromptTakesOneKey: on a terminal a confirmation is answered by one
// key, no Enter; the key is echoed, and the thread goes on.
func TestPromptTakesOneKey(t *testing.T) {
	t.Parallel()
	dir := workspace(t, map[string]string{"script.jsonl": writeScript})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "Set the cache TTL to 300")
	tm.expect(thePrompt)
	_, err := tm.f.WriteString("y")
	require.NoError(t, err)
	require.Equal(t, exitOK, tm.exit(), tm.output())
	require.Contains(t, tm.output(), thePrompt+"y\r\n")
	require.Contains(t, tm.output(), "done: thread t1")
	got, err := os.ReadFile(filepath.Join(dir, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", string(got))
}
