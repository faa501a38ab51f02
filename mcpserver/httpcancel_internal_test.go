package mcpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// post posts body to the server at url in session sid ("" for none) and
// returns the status, the session id the server named and the body.
func post(t *testing.T, url, sid, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// Over HTTP as on stdio, a cancellation of a call already answered, of
// one never made, of another session's or a malformed one silences
// nothing: a later call with the same id is answered; and the guard
// keeps nothing once no call is in flight (nor for posts refused).
func TestHTTPStaleCancel(t *testing.T) {
	h := HTTPHandler(nil, ServerOptions{})
	g := h.(*cancelGuard)
	ts := httptest.NewServer(h)
	defer ts.Close()
	code, sid, body := post(t, ts.URL, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, http.StatusOK, code, body)
	require.NotEmpty(t, sid)
	code, _, body = post(t, ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, code, body)

	code, _, body = post(t, ts.URL, sid, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"id":5,"result"`)
	for _, cancel := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"an":"object"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"5"}`,
	} {
		post(t, ts.URL, sid, cancel)
	}
	code, _, body = post(t, ts.URL, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"id":5,"result"`)
	require.Contains(t, body, `"start"`)

	// A call to a session that is not (forged, or closed): refused, and
	// nothing kept for it.
	code, _, body = post(t, ts.URL, "forged", `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	require.Equal(t, http.StatusNotFound, code, body)
	post(t, ts.URL, "forged", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	// A malformed post in the session.
	code, _, _ = post(t, ts.URL, sid, `{"jsonrpc":"2.0","id":8,"method":"no/such/method"}`)
	require.NotEqual(t, http.StatusOK, code)

	g.mu.Lock()
	defer g.mu.Unlock()
	require.Empty(t, g.sessions, "nothing in flight, nothing kept")
}

// The guard's bookkeeping, a session with a call in flight throughout: a
// stale cancellation marks nothing, a cancellation of the call in flight
// drops its response once (stored empty, its event not written), and a
// forged session's cancellation touches no other session.
func TestCancelGuardBookkeeping(t *testing.T) {
	g := &cancelGuard{sessions: map[string]*calls{}}
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"start"}}`
	}
	cancel := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`
	}
	resp := func(id string) []byte { return []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`) }
	event := func(id string) []byte {
		return append(append([]byte("event: message\nid: s_1\ndata: "), resp(id)...), "\n\n"...)
	}

	require.Len(t, g.posted("a", []byte(call("1"))), 1)
	require.Len(t, g.posted("a", []byte(call("5"))), 1)
	require.Empty(t, g.posted("a", []byte(call("5"))), "a duplicate in flight is not marked again")
	require.False(t, g.answered("a", resp("5")))
	require.False(t, g.dropped("a", event("5")))
	// Stale: 5 was answered; "5" (a string) was never a call.
	g.posted("a", []byte(cancel("5")))
	g.posted("a", []byte(cancel(`"5"`)))
	g.posted("b", []byte(cancel("1"))) // another session's call
	g.posted("a", []byte(call("5")))
	require.False(t, g.answered("a", resp("5")), "a later call with a cancelled id is answered")
	require.False(t, g.dropped("a", event("5")))

	// Cancelled in flight: stored empty, not written, once.
	g.posted("a", []byte(`[`+cancel("1")+`]`))
	require.True(t, g.answered("a", resp("1")))
	require.False(t, g.dropped("b", event("1")), "only its session's")
	require.True(t, g.dropped("a", event("1")))
	require.False(t, g.dropped("a", event("1")))
	require.Empty(t, g.sessions)

	// A response stored but never written (the stream gone) does not
	// drop a later call's response with the same id.
	g.posted("a", []byte(call("2")))
	g.posted("a", []byte(cancel("2")))
	require.True(t, g.answered("a", resp("2")))
	g.posted("a", []byte(call("2")))
	require.False(t, g.answered("a", resp("2")))
	require.False(t, g.dropped("a", event("2")))
	require.Empty(t, g.sessions)
}
