package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// planScript plans, then carries the plan out once acted on.
const planScript = `{"text": "Plan: set the TTL to 300 in cache.toml."}
{"text": "Carried out."}
`

// thePlanPrompt is what the terminal asks of planScript's plan.
const thePlanPrompt = "Act on the plan plan-1? [y]es: plan mode off, and the model carries it out; [s]kip (or write to the thread for another plan): "

// TestPlanPromptNoticesAnAnswerGivenElsewhere: a terminal asking whether
// to act on a plan watches the log; acted on through the API of a server
// (as the page and the MCP server do, through drive.AnswerPending), the
// prompt stops asking, says who acted, and the run goes on to the model's
// next turn; a key typed late answers nothing. An answer naming a plan
// that does not wait is refused.
func TestPlanPromptNoticesAnAnswerGivenElsewhere(t *testing.T) {
	t.Parallel()
	dir := workspace(t, map[string]string{"script.jsonl": planScript})
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0")
	base, token := srv.url()
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--plan", "--model", "scripted:script.jsonl", "Make the TTL 300")
	tm.expect(thePlanPrompt)

	answer := func(body string) (int, string) {
		req, err := http.NewRequest("POST", base+"/api/threads/t1/answer", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := answer(`{"kind": "plan", "request_id": "plan-1", "approved": true, "text": "and more"}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	code, body = answer(`{"kind": "plan", "request_id": "plan-7", "approved": true, "resume": false}`)
	require.NotEqual(t, http.StatusOK, code, body)
	require.Contains(t, body, "no longer waits", "a plan other than the one waiting is not acted on")
	code, body = answer(`{"kind": "plan", "request_id": "plan-1", "approved": true, "resume": false}`)
	require.Equal(t, http.StatusCreated, code, body)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &res), body)
	require.Equal(t, "plan-1", res["request_id"], body)

	tm.expect("answered elsewhere: plan-1: the plan of turn 1 acted on by ")
	tm.send("y") // late: the prompt is gone
	require.Equal(t, exitOK, tm.exit(), tm.output())
	out := tm.output()
	require.Contains(t, out, "not asking any more")
	require.Contains(t, out, `"Carried out."`)
	require.Contains(t, out, "done: thread t1")
	log, _, _ := harnessIn(t, dir, "log", "t1", "-o", "jsonl")
	require.Equal(t, 1, bytes.Count([]byte(log), []byte(`"acts":1`)), log)
	require.Equal(t, 1, bytes.Count([]byte(log), []byte("is approved: carry it out")), log)
}

// TestMCPServePlan: the MCP server's answer tool answers a plan: text asks
// for another plan (any client may write to the thread); acting on it is a
// person's word, refused from a client the server was not told answers
// for one (naming the command a person runs), and taken from one it was.
func TestMCPServePlan(t *testing.T) {
	t.Parallel()
	dir := workspace(t, map[string]string{"script.jsonl": `{"text": "Plan A."}
{"text": "Plan B."}
{"text": "Carried out."}
`})
	_, stderr, code := harnessIn(t, dir, "run", "--plan", "--no-input", "--model", "scripted:script.jsonl", "Make the TTL 300")
	require.Equal(t, exitParked, code, stderr)

	cs := serveClient(t, dir, "--model", "scripted:script.jsonl")
	var v tourView
	text, isErr := callTool(t, cs, "answer", map[string]any{"thread": "t1", "request_id": "plan-1", "approve": true}, nil)
	require.True(t, isErr)
	require.Contains(t, text, "cannot act on the plan plan-1; a person acts on it with: harness plan t1 act (then resume it here)")
	text, isErr = callTool(t, cs, "answer", map[string]any{"thread": "t1", "request_id": "plan-1", "text": "Cover the CLI too"}, &v)
	require.False(t, isErr, text)
	require.Equal(t, "parked", v.Status)
	require.Equal(t, "plan-2", v.Waits[0].RequestID)
	require.NoError(t, cs.Close())

	cs = serveClient(t, dir, "--model", "scripted:script.jsonl", "--client-approves")
	text, isErr = callTool(t, cs, "answer", map[string]any{"thread": "t1", "request_id": "plan-2", "approve": true}, &v)
	require.False(t, isErr, text)
	require.Equal(t, "done", v.Status)
	log, _, _ := harnessIn(t, dir, "log", "t1", "-o", "jsonl")
	require.Contains(t, log, `"text":"Cover the CLI too"`)
	require.Regexp(t, `"kind":"plan.mode_set".*"acts":2`, log)
}

// TestPlanPromptNoticesAPlanActedOnElsewhere: a terminal asking whether
// to act on a plan watches the log; acted on from another process
// (harness plan t1 act), the prompt stops asking, says who acted, and
// ends as the thread did, the plan acted on once.
func TestPlanPromptNoticesAPlanActedOnElsewhere(t *testing.T) {
	t.Parallel()
	dir := workspace(t, map[string]string{"plan.jsonl": planScript})
	env := []string{"NO_COLOR=1", "HARNESS_STORE=", "XDG_CONFIG_HOME=" + t.TempDir()}
	tm := startTerminal(t, dir, env, "run", "--plan", "--model", "scripted:plan.jsonl", "Plan it")
	tm.expect("Act on the plan plan-1? ")
	out, stderr, code := harnessEnv(t, dir, env, "plan", "t1", "act")
	require.Zero(t, code, out+stderr)
	tm.expect("answered elsewhere: plan-1: the plan of turn 1 acted on by ")
	tm.send("y") // late: the prompt is gone
	require.Equal(t, exitOK, tm.exit(), tm.output())
	require.Contains(t, tm.output(), "not asking any more")
	require.Contains(t, tm.output(), "done: thread t1")
	log, _, _ := harnessEnv(t, dir, env, "log", "t1")
	require.Equal(t, 1, strings.Count(log, "to act on the plan of turn 1"), log)
}
