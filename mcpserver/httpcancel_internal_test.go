package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// post posts body to the server at url in session sid ("" for none) and
// returns the status, the session id the server named and the body.
func post(t *testing.T, url, sid, body string) (int, string, string) {
	t.Helper()
	return postWith(t, url, sid, body, nil)
}

// postWith is post with the headers hdr set over the usual ones ("" to
// leave one out).
func postWith(t *testing.T, url, sid, body string, hdr http.Header) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	for k, vs := range hdr {
		req.Header.Del(k)
		for _, v := range vs {
			if v != "" {
				req.Header.Add(k, v)
			}
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

const initCall = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// session initializes a session with the server at url.
func initSession(t *testing.T, url string) string {
	t.Helper()
	code, sid, body := post(t, url, "", initCall)
	require.Equal(t, http.StatusOK, code, body)
	require.NotEmpty(t, sid)
	code, _, body = post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	return sid
}

// Over HTTP as on stdio, a cancellation of a call already answered, of
// one never made, of another session's or a malformed one silences
// nothing: a later call is answered. (It has an id of its own, as the
// protocol says a session's ids must: over HTTP each notification is a
// post of its own, handled beside the next, so a cancellation of id 5
// still on its way when a reused id 5 arrives could reach that one; on a
// loaded machine it did.)
func TestHTTPStaleCancel(t *testing.T) {
	ts := httptest.NewServer(HTTPHandler(nil, ServerOptions{}))
	defer ts.Close()
	sid := initSession(t, ts.URL)
	other := initSession(t, ts.URL)

	code, _, body := post(t, ts.URL, sid, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"id":5,"result"`)
	for _, cancel := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"an":"object"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"5"}`,
	} {
		post(t, ts.URL, sid, cancel)
		post(t, ts.URL, other, cancel)
	}
	code, _, body = post(t, ts.URL, sid, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"id":6,"result"`)
	require.Contains(t, body, `"start"`)

	// A call to a session that is not (forged, or closed): refused.
	code, _, body = post(t, ts.URL, "forged", `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	require.Equal(t, http.StatusNotFound, code, body)
}

// waiter is a server over guardCancels whose tool "wait" runs until its
// name is released or its call is cancelled, and whose prompt "bare"
// fails with an error that reads like a cancellation.
type waiter struct {
	url       string
	started   chan string // the name of each call begun
	cancelled chan string // the name of each call whose context ended

	mu       sync.Mutex // guards releases
	releases map[string]chan struct{}
}

func newWaiter(t *testing.T) *waiter {
	w := &waiter{started: make(chan string, 16), cancelled: make(chan string, 16), releases: map[string]chan struct{}{}}
	srv := sdk.NewServer(&sdk.Implementation{Name: "waiter", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: servedVersions()})
	sdk.AddTool(srv, &sdk.Tool{Name: "wait"}, func(ctx context.Context, _ *sdk.CallToolRequest, a struct {
		Name string `json:"name"`
	}) (*sdk.CallToolResult, any, error) {
		w.started <- a.Name
		select {
		case <-w.release(a.Name):
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "released " + a.Name}}}, nil, nil
		case <-ctx.Done():
			w.cancelled <- a.Name
			return nil, nil, ctx.Err()
		}
	})
	srv.AddPrompt(&sdk.Prompt{Name: "bare"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return nil, context.Canceled
	})
	ts := httptest.NewServer(guardCancels(srv, sdk.StreamableHTTPOptions{}))
	t.Cleanup(ts.Close)
	w.url = ts.URL
	return w
}

func (w *waiter) release(name string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.releases[name] == nil {
		w.releases[name] = make(chan struct{})
	}
	return w.releases[name]
}

// call posts a call of wait named name with id in session sid; its
// stream's body is sent on the channel returned when the stream ends.
func (w *waiter) call(t *testing.T, sid string, id int, name string) <-chan string {
	got := make(chan string, 1)
	go func() {
		_, _, body := post(t, w.url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait","arguments":{"name":%q}}}`, id, name))
		got <- body
	}()
	select {
	case n := <-w.started:
		require.Equal(t, name, n)
	case <-time.After(time.Minute):
		t.Fatalf("call %s did not begin", name)
	}
	return got
}

func streamEnd(t *testing.T, c <-chan string) string {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(time.Minute):
		t.Fatal("the call's stream did not end")
		return ""
	}
}

// A post the SDK refuses cancels nothing, though it carries a
// cancellation of a call in flight: that call is answered. Only a
// cancellation the SDK takes leaves the call's response out, on its
// stream and on a stream resumed after.
func TestHTTPRefusedCancel(t *testing.T) {
	w := newWaiter(t)
	sid := initSession(t, w.url)
	got := w.call(t, sid, 3, "a")

	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`
	for _, refused := range []struct {
		name string
		sid  string
		body string
		hdr  http.Header
	}{
		{"a revision not served", sid, cancel, http.Header{"Mcp-Protocol-Version": {"1999-01-01"}}},
		{"a draft revision", sid, cancel, http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}},
		{"a revision after the draft", sid, cancel, http.Header{"Mcp-Protocol-Version": {"2099-01-01"}}},
		{"two revisions", sid, cancel, http.Header{"Mcp-Protocol-Version": {"2025-11-25", "2099-01-01"}}},
		{"a batch (none in 2025-11-25)", sid, "[" + cancel + "]", nil},
		{"a batch with a bad message", sid, "[" + cancel + `,{"jsonrpc":"1.0"}]`, nil},
		{"not JSON", sid, strings.TrimSuffix(cancel, "}"), nil},
		{"a wrong content type", sid, cancel, http.Header{"Content-Type": {"text/plain"}}},
		{"no event stream accepted", sid, cancel, http.Header{"Accept": {"application/json"}}},
		{"a Last-Event-ID on a post", sid, cancel, http.Header{"Last-Event-Id": {"x_0"}}},
		{"a forged session", "forged", cancel, nil},
		{"another session", initSession(t, w.url), cancel, nil},
		{"too large", sid, cancel + strings.Repeat(" ", sdk.DefaultMaxRequestBodyBytes), nil},
	} {
		code, _, body := postWith(t, w.url, refused.sid, refused.body, refused.hdr)
		if refused.name != "another session" {
			require.False(t, code >= 200 && code < 300, "%s: %d %s", refused.name, code, body)
		}
	}
	select {
	case n := <-w.cancelled:
		t.Fatalf("call %s cancelled by a refused post", n)
	case <-time.After(100 * time.Millisecond):
	}
	close(w.release("a"))
	require.Contains(t, streamEnd(t, got), `"id":3,"result"`, "a refused cancellation leaves the call answered")

	// A cancellation taken: no response, and none on a resumed stream.
	got = w.call(t, sid, 4, "b")
	code, _, body := post(t, w.url, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`)
	require.Equal(t, http.StatusAccepted, code, body)
	require.Equal(t, "b", <-w.cancelled)
	stream := streamEnd(t, got)
	require.NotContains(t, stream, `"id":4`)
	prime := sseEventIDs(stream)
	require.NotEmpty(t, prime, "%s", stream)
	streamID, _, _ := strings.Cut(prime[0], "_")
	req, err := http.NewRequest("GET", w.url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", streamID+"_0")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	replay, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", replay)
	require.NotContains(t, string(replay), `"id":4`)

	// The id of the cancelled call, used again, is answered.
	got = w.call(t, sid, 4, "c")
	close(w.release("c"))
	require.Contains(t, streamEnd(t, got), `"id":4,"result"`)

	// An error that only reads like a cancellation is answered.
	code, _, body = post(t, w.url, sid, `{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"bare"}}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"id":9,"error"`)
	require.Contains(t, body, "prompts/get: context canceled")
}

// sseEventIDs are the ids of the events of a stream, in order.
func sseEventIDs(stream string) []string {
	var ids []string
	for line := range strings.Lines(stream) {
		if id, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "id: "); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// A request naming a revision not served is refused with 400 before the
// SDK sees it: a call is answered a JSON-RPC error naming the revisions
// served; and the SDK's own client, which first probes its draft
// revision, falls back to 2025-11-25 and is served.
func TestHTTPUnservedRevision(t *testing.T) {
	w := newWaiter(t)
	sid := initSession(t, w.url)
	for _, v := range []string{"2026-07-28", "2099-01-01", "1999-01-01", "2025-11-25x", "x"} {
		code, _, body := postWith(t, w.url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Protocol-Version": {v}})
		require.Equal(t, http.StatusBadRequest, code, "%q: %s", v, body)
		code, _, body = postWith(t, w.url, "", `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}}`, http.Header{"Mcp-Protocol-Version": {v}})
		require.Equal(t, http.StatusBadRequest, code, "%q: %s", v, body)
		var resp struct {
			ID    string `json:"id"`
			Error struct {
				Code int                                `json:"code"`
				Data sdk.UnsupportedProtocolVersionData `json:"data"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &resp), body)
		require.Equal(t, "d", resp.ID)
		require.Equal(t, sdk.CodeUnsupportedProtocolVersion, resp.Error.Code)
		require.Equal(t, servedVersions(), resp.Error.Data.Supported)
		require.Equal(t, v, resp.Error.Data.Requested)

		req, err := http.NewRequest("GET", w.url, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", v)
		r, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		r.Body.Close()
		require.Equal(t, http.StatusBadRequest, r.StatusCode, v)
	}

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: w.url}, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)
	close(w.release("d"))
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "wait", Arguments: map[string]any{"name": "d"}})
	require.NoError(t, err)
	require.Equal(t, "released d", res.Content[0].(*sdk.TextContent).Text)
}
