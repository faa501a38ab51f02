package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
)

const contractScript = `{"text": "Two things.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}, {"id": "c", "name": "run_command", "args": "{\"command\":\"echo hi\"}"}]}
{"text": "Done."}
`

// stateOf reads a front end's document as the State it holds, written
// back: the one document, whatever a front end put beside it.
func stateOf(t *testing.T, what string, doc []byte) (string, drive.State) {
	t.Helper()
	var st drive.State
	require.NoError(t, json.Unmarshal(doc, &st), "%s: %s", what, doc)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	return string(b), st
}

// The command line (-o json), the HTTP API and the MCP server give the
// same State document of the same parked thread: drive.State, as it is,
// whatever each puts beside it — of a thread that waits on two calls, and
// of one whose child waits.
func TestOneStateDocument(t *testing.T) {
	t.Run("two calls", func(t *testing.T) {
		st := oneStateDocument(t, contractScript, 2)
		require.NotEmpty(t, st.Waits[0].Preview, "the write is previewed")
		require.NotNil(t, st.Waits[1].Sandbox, "the command's sandbox is told")
	})
	t.Run("a child", func(t *testing.T) {
		st := oneStateDocument(t, delegateTerminalScript, 1)
		require.Len(t, st.Children, 1)
		require.Equal(t, "t1.1-d1", st.Waits[0].Thread, "the child's request, named by the child")
		require.Equal(t, "t1", st.Children[0].Parent)
		require.Equal(t, "t1", st.Children[0].Root)
	})
}

// oneStateDocument parks a thread of script in a fresh workspace and
// checks that every front end gives the same state of it, which it
// returns; the thread waits for n requests.
func oneStateDocument(t *testing.T, script string, n int) drive.State {
	dir := workspace(t, map[string]string{"script.jsonl": script})
	_, stderr, code := harnessIn(t, dir, "run", "-o", "json", "--model", "scripted:script.jsonl", "Set the TTL and say hi")
	require.Equal(t, exitParked, code, stderr)

	// The command line.
	cli, stderr, code := harnessIn(t, dir, "resume", "t1", "-o", "json")
	require.Equal(t, exitParked, code, stderr)
	want, st := stateOf(t, "harness resume -o json", []byte(cli))
	require.Equal(t, "parked", string(st.Status))
	require.Len(t, st.Waits, n)
	var extra map[string]any
	require.NoError(t, json.Unmarshal([]byte(cli), &extra))
	require.Contains(t, extra, "answers", "the command's own keys stand beside the state")

	// The MCP server.
	cs := serveClient(t, dir)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "view", Arguments: map[string]any{"thread": "t1"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	mcp, _ := stateOf(t, "mcp view", raw)
	require.JSONEq(t, want, mcp, "the MCP server's view is the command's state")
	require.NoError(t, cs.Close())

	// The HTTP API, of a server holding the store.
	srv := startServer(t, dir, "serve", "--addr", "127.0.0.1:0")
	base, token := srv.url()
	get := func(path string) []byte {
		req, err := http.NewRequest("GET", base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		return b
	}
	api, _ := stateOf(t, "GET state", get("/api/threads/t1/state"))
	require.JSONEq(t, want, api, "the API's state is the command's")
	detail, _ := stateOf(t, "GET thread", get("/api/threads/t1"))
	require.JSONEq(t, want, detail, "the API's thread holds the same state")

	// The lists (through the server, and the API's own) hold the same
	// state, but for the previews a list does not make.
	unpreviewed := func(s string) string {
		var st drive.State
		require.NoError(t, json.Unmarshal([]byte(s), &st))
		st.Preview("", func(string, string, string) string { return "" })
		b, err := json.Marshal(st)
		require.NoError(t, err)
		return string(b)
	}
	var list struct{ Threads []json.RawMessage }
	require.NoError(t, json.Unmarshal(get("/api/threads"), &list))
	row, _ := stateOf(t, "GET threads", list.Threads[0])
	require.JSONEq(t, unpreviewed(want), row)
	out, stderr, code := harnessIn(t, dir, "threads", "-o", "json")
	require.Zero(t, code, stderr)
	var rows []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, len(list.Threads), "the same threads, a child among them")
	cliRow, _ := stateOf(t, "harness threads -o json", rows[0])
	require.JSONEq(t, unpreviewed(want), cliRow)
	require.Zero(t, srv.stop(), srv.output())
	return st
}
