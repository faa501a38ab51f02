package serve_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
)

// The MCP server over HTTP is behind the page's tokens: it learns whom a
// request's token names, never whom the client says, and nothing but
// MCPPath is served.
func TestMCPHandlerPassesOnTheTokensPerson(t *testing.T) {
	tokens := serve.Tokens("ana", stock.Settings{Serve: &stock.ServeSettings{Tokens: []stock.ServeToken{{Name: "bob", Token: strings.Repeat("b", 32)}}}})
	require.Len(t, tokens, 2)
	require.Equal(t, "ana", tokens[0].Name)
	require.NotEmpty(t, tokens[0].Token)
	require.NotEqual(t, tokens[0].Token, serve.Tokens("ana", stock.Settings{})[0].Token, "a fresh token each time")

	var seen []string
	h, err := serve.MCPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get(serve.PersonHeader))
	}), tokens)
	require.NoError(t, err)
	do := func(path, token, claim string) int {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{}`))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		if claim != "" {
			r.Header.Set(serve.PersonHeader, claim)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	require.Equal(t, http.StatusUnauthorized, do(serve.MCPPath, "", "ana"))
	require.Equal(t, http.StatusUnauthorized, do(serve.MCPPath, "wrong", ""))
	require.Empty(t, seen)
	require.Equal(t, http.StatusOK, do(serve.MCPPath, tokens[0].Token, "mallory"))
	require.Equal(t, http.StatusOK, do(serve.MCPPath, tokens[1].Token, ""))
	require.Equal(t, []string{"ana", "bob"}, seen, "the token's person, not the client's claim")
	require.Equal(t, http.StatusNotFound, do("/api/threads", tokens[0].Token, ""))

	_, err = serve.MCPHandler(http.NotFoundHandler(), nil)
	require.ErrorIs(t, err, serve.ErrNoToken)
}

// ServeUntil serves until its context is done, then stops.
func TestServeUntil(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(serve.MCPURL(ln.Addr()), serve.MCPPath))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve.ServeUntil(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTeapot, resp.StatusCode)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeUntil did not stop")
	}
}

// ListenMCP serves behind the fresh token it names, says whether it
// listens beyond loopback, and an address it cannot listen at is
// ErrListen.
func TestListenMCP(t *testing.T) {
	m, err := serve.ListenMCP("127.0.0.1:0", "ana", stock.Settings{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Person", r.Header.Get(serve.PersonHeader))
	}))
	require.NoError(t, err)
	require.False(t, m.Beyond)
	require.True(t, strings.HasPrefix(m.URL, "http://"+m.Addr.String()), m.URL)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Until(ctx) }()
	post := func(token string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, m.URL, strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	require.Equal(t, http.StatusUnauthorized, post("wrong").StatusCode)
	resp := post(m.Token)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ana", resp.Header.Get("X-Person"))
	cancel()
	require.NoError(t, <-done)

	_, err = serve.ListenMCP(m.Addr.String()+"0000", "ana", stock.Settings{}, http.NotFoundHandler())
	require.ErrorIs(t, err, serve.ErrListen)
}
