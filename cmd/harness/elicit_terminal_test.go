//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// elicitWorkspace is a trusted workspace whose MCP server t asks the
// person's name during its tool ask (mcptestserver ask), and a script
// that calls it.
func elicitWorkspace(t *testing.T) string {
	t.Helper()
	dir := workspace(t, map[string]string{"script.jsonl": `{"text": "Asking.", "tool_calls": [{"id": "a", "name": "mcp__t__ask", "args": "{}"}]}
{"text": "Done asking."}
`})
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".harness", "config.json"),
		[]byte(`{"mcpServers": {"t": {"command": "mcptestserver", "args": ["ask"]}}}`), 0o644))
	// The tests share the user's configuration directory (TestMain's),
	// and a trust is a read, a change and a write of its one trust file:
	// two at once would lose one (the run then ignores the MCP server).
	trustMu.Lock()
	stdout, stderr, code := harnessIn(t, dir, "trust", "--yes")
	trustMu.Unlock()
	require.Zero(t, code, stdout+stderr)
	return dir
}

// trustMu serialises the tests' harness trust in the shared configuration
// directory.
var trustMu sync.Mutex

// TestElicitOnATerminal: a plain run on a terminal asks an MCP server's
// question itself — the server named and its words escaped, each field
// with its type and whether it is required — reads each field (a
// secret-looking one without echo), re-asks input the field or the
// server's schema does not take (checked by drive, as the API checks
// it), and posts the answer the server then receives.
func TestElicitOnATerminal(t *testing.T) {
	t.Parallel()
	dir := elicitWorkspace(t)
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "--allow", "mcp__t__*", "Ask me")
	tm.expect("Answer t? [a]ccept (fill in its form), [d]ecline, [c]ancel, [s]kip (answer elsewhere): ")
	tm.send("x") // no answer: asked again as a line
	tm.expect(`"x" is not an answer`)
	// Only what is typed after the question is put again answers it: a
	// key typed between the complaint and the question is dropped.
	expectN(tm, "[s]kip (answer elsewhere): ", 2)
	tm.send("a")
	tm.expect("age [integer, optional: Enter leaves it out]: ")
	tm.send("old") // not an integer: the field is asked again
	tm.expect(`field "age" wants an integer, not "old"`)
	expectN(tm, "age [integer, optional: Enter leaves it out]: ", 2)
	tm.send("-3") // an integer, but under the schema's minimum: the form is asked again
	expectN(tm, "api_key [", 1)
	tm.send("k")
	expectN(tm, "name [string, required]: ", 1)
	tm.send("Ana")
	tm.expect("the input does not fit the requested schema")
	expectN(tm, "[s]kip (answer elsewhere): ", 3)
	tm.send("a")
	expectN(tm, "age [integer, optional: Enter leaves it out]: ", 3)
	tm.send("")
	expectN(tm, "api_key [string, optional: Enter leaves it out] — it looks like a secret: what you type is not shown, but it is recorded in the thread's log and sent to the server: ", 2)
	tm.send("sekrit-123")
	expectN(tm, "name [string, required]: ", 2)
	tm.send("") // required
	tm.expect("name is required")
	expectN(tm, "name [string, required]: ", 3)
	tm.send("Ana")
	tm.expect("accept: sent to t (question.answered at seq ")
	require.Equal(t, exitOK, tm.exit(), tm.output())
	out := tm.output()
	require.Contains(t, out, "done: thread t1")
	require.NotContains(t, out, "sekrit-123", "the secret is not echoed")
	require.NotContains(t, out, "\x1b[2J", "the server's words are escaped")
	require.NotContains(t, out, "\x1b[31m")
	require.Contains(t, out, "What is your name?")

	log, stderr, code := harnessIn(t, dir, "log", "t1", "-o", "jsonl")
	require.Zero(t, code, stderr)
	require.Contains(t, log, `"elicited":{"action":"accept","content":{"api_key":"sekrit-123","name":"Ana"}}`)
	require.Contains(t, log, `got accept {\"api_key\":\"sekrit-123\",\"name\":\"Ana\"}`, "the server received the answer")
	require.Equal(t, 1, strings.Count(log, `"kind":"question.answered"`), log)
	stdout, stderr, code := harnessIn(t, dir, "replay", "t1", "--verify")
	require.Zero(t, code, stdout+stderr)
}

// TestElicitOnATerminalDeclined: decline is sent to the server as is.
func TestElicitOnATerminalDeclined(t *testing.T) {
	t.Parallel()
	dir := elicitWorkspace(t)
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "--allow", "mcp__t__*", "Ask me")
	tm.expect("[s]kip (answer elsewhere): ")
	tm.send("d")
	tm.expect("decline: sent to t")
	require.Equal(t, exitOK, tm.exit(), tm.output())
	log, _, _ := harnessIn(t, dir, "log", "t1", "-o", "jsonl")
	require.Contains(t, log, `got decline null`)
}

// TestElicitOnATerminalAnsweredElsewhere: with a server holding the
// store, the question asked at the terminal is answered with harness
// answer --elicit from another process: the terminal stops asking, says
// so, and a key typed late answers nothing.
func TestElicitOnATerminalAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	dir := elicitWorkspace(t)
	startServer(t, dir, "serve", "--addr", "127.0.0.1:0")
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "--allow", "mcp__t__*", "Ask me")
	tm.expect("[s]kip (answer elsewhere): ")
	stdout, stderr, code := harnessIn(t, dir, "answer", "t1", "--elicit", "accept", "--field", "name=Bo")
	require.Zero(t, code, stdout+stderr)
	tm.expect("answered elsewhere: ")
	tm.send("d") // late: the prompt is gone
	require.Equal(t, exitOK, tm.exit(), tm.output())
	log, _, _ := harnessIn(t, dir, "log", "t1", "-o", "jsonl")
	require.Contains(t, log, `got accept {\"name\":\"Bo\"}`)
	require.Equal(t, 1, strings.Count(log, `"kind":"question.answered"`), log)
}

// expectN waits until the output holds s n times.
func expectN(tm *terminal, s string, n int) {
	tm.t.Helper()
	if !assert.Eventually(tm.t, func() bool { return strings.Count(tm.output(), s) >= n }, 30*time.Second, 10*time.Millisecond) {
		tm.t.Fatalf("waiting for %q %d times; the terminal shows:\n%s", s, n, tm.output()) // as it is now, not as it was at the start
	}
}

// TestElicitAnsweredAfterTheRunDied: a run killed at an MCP server's
// question leaves its call in doubt (the server died with it). An answer
// from the command line is refused, and says so and what to do — the
// call is in doubt, resume the thread and settle it — not that the
// question is no MCP server's; once resumed, that the call did not
// finish. Nothing is recorded.
func TestElicitAnsweredAfterTheRunDied(t *testing.T) {
	t.Parallel()
	dir := elicitWorkspace(t)
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "--allow", "mcp__t__*", "Ask me")
	tm.expect("[s]kip (answer elsewhere): ")
	require.NoError(t, tm.cmd.Process.Kill())
	tm.exit()

	_, stderr, code := harnessIn(t, dir, "answer", "t1", "--request", "1-a-e1", "--elicit", "accept", "--field", "name=bob")
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "the question 1-a-e1 is the MCP server t's, asked during call 1-a, which is in doubt")
	require.Contains(t, stderr, "resume thread t1")
	require.NotContains(t, stderr, "not an MCP server's")

	_, _, _ = harnessIn(t, dir, "resume", "t1", "--no-input")
	_, stderr, code = harnessIn(t, dir, "answer", "t1", "--request", "1-a-e1", "--elicit", "decline")
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "asked during call 1-a, which did not finish")
	log, _, _ := harnessIn(t, dir, "log", "t1", "-o", "jsonl")
	require.NotContains(t, log, `"kind":"question.answered"`)
}
