package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// harness mcp serve --http killed (SIGKILL) while a start call runs its
// command: the streams of its sessions resume only while it lives, so
// the next server answers the old session 404 (and the client starts a
// new one, as the transport says it must); the call got no response; the
// thread, named in what the call sent before, is in the store and the new
// session resumes it: the command in doubt is not run again (reconcile
// asks whether it happened), and the thread ends done. A start retried with the thread's name starts
// nothing.
func TestMCPServeHTTPRestart(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": cancelScript})
	url, token, first := serveHTTPCmd(t, dir, "--model", "scripted:script.jsonl", "--approve", "all")
	logs := make(chan string, 1024)
	client := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			raw, _ := json.Marshal(r.Params)
			logs <- string(raw)
		}})
	ctx := context.Background()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: token}}, MaxRetries: 1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	require.NoError(t, cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}))

	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "start", Arguments: map[string]any{"task": "Wait a while", "thread": "w1"}})
		errc <- err
	}()
	for started := false; !started; {
		select {
		case l := <-logs:
			started = strings.Contains(l, `"kind":"action.started"`) && strings.Contains(l, `"thread":"w1"`)
		case <-time.After(2 * time.Minute):
			t.Fatal("the command did not start")
		}
	}
	require.NoError(t, first.Process.Kill())
	_, _ = first.Process.Wait()
	select {
	case err := <-errc:
		require.Error(t, err, "the call cut by the crash got no response")
	case <-time.After(2 * time.Minute):
		t.Fatal("the call did not end with its server")
	}

	url2, token2 := serveHTTP(t, dir, "--model", "scripted:script.jsonl", "--approve", "all", "--client-approves")
	// The old session is not the new server's: 404, on a resumption
	// (GET with Last-Event-ID) as on a post.
	for _, method := range []string{"GET", "POST"} {
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"view","arguments":{"thread":"w1"}}}`)
		}
		req, err := http.NewRequest(method, url2, body)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token2)
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if method == "GET" {
			req.Header.Set("Last-Event-ID", "x_1")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, method)
	}

	cs2, err := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url2, HTTPClient: &http.Client{Transport: bearer{token: token2}}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs2.Close() })
	text, isErr := callTool(t, cs2, "start", map[string]any{"task": "Wait a while", "thread": "w1"}, nil)
	require.True(t, isErr, "a start retried with the thread's name starts nothing: %s", text)
	text, isErr = callTool(t, cs2, "facts", map[string]any{"thread": "w1"}, nil)
	require.False(t, isErr, text)
	require.Equal(t, 1, strings.Count(text, "action.started"), text)
	require.NotContains(t, text, "action.completed")

	// The command cut by the crash is in doubt: resume observes the
	// workspace, records it interrupted and asks a person whether it
	// happened (reconcile); an answer runs the thread on to done.
	var v tourView
	text, isErr = callTool(t, cs2, "resume", map[string]any{"thread": "w1"}, &v)
	require.False(t, isErr, text)
	require.Equal(t, "parked", v.Status, text)
	require.Len(t, v.Waits, 1, text)
	require.Equal(t, "reconcile", v.Waits[0].Kind, text)
	text, isErr = callTool(t, cs2, "answer", map[string]any{"thread": "w1", "request_id": v.Waits[0].RequestID, "decision": "abandon"}, &v)
	require.False(t, isErr, text)
	require.Equal(t, "done", v.Status, "the thread cut by the crash was resumable: %s", text)
	text, isErr = callTool(t, cs2, "facts", map[string]any{"thread": "w1"}, nil)
	require.False(t, isErr, text)
	require.Equal(t, 1, strings.Count(text, `"kind":"action.started"`), "the command in doubt was not run again: %s", text)
	require.Contains(t, text, "action.interrupted")
}
