package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/stock"
)

// PersonHeader is the request header through which MCPHandler tells the
// MCP server it guards whom the request's token names; the header a
// request brings of its own is dropped.
const PersonHeader = "X-Harness-Person"

// MCPPath is where MCPHandler serves.
const MCPPath = "/mcp"

// maxMCPBody bounds an MCP request's body.
const maxMCPBody = 64 << 10

// Tokens are the tokens of a server a person starts: a fresh one naming
// who, then those the settings name.
func Tokens(who string, settings stock.Settings) []stock.ServeToken {
	tokens := []stock.ServeToken{{Name: who, Token: NewToken()}}
	if settings.Serve != nil {
		tokens = append(tokens, settings.Serve.Tokens...)
	}
	return tokens
}

// MCPHandler serves h, an MCP server's streamable HTTP, at MCPPath behind
// the tokens as the page's API is (a bearer token, or ?token=; a post
// from another origin refused), passing on whom the token names in
// PersonHeader.
func MCPHandler(h http.Handler, tokens []stock.ServeToken) (http.Handler, error) {
	guard, err := NewGuard(tokens, maxMCPBody)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(MCPPath, guard.Bearer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(PersonHeader)
		if id, ok := IdentityOf(r.Context()); ok {
			r.Header.Set(PersonHeader, id.Name)
		}
		h.ServeHTTP(w, r)
	})))
	return mux, nil
}

// MCPURL is the address of MCPHandler on a listener at addr.
func MCPURL(addr net.Addr) string {
	return strings.TrimSuffix(URL(addr, ""), "/") + MCPPath
}

// ServeUntil serves h on ln until ctx is done, then shuts the server down
// (waiting up to 5 s for the requests in flight); an error of the server
// before that is returned.
func ServeUntil(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 32 << 10}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// ErrListen is an address an MCP server cannot listen at (ListenMCP).
var ErrListen = errors.New("cannot listen")

// MCPServing is an MCP server's streamable HTTP listening behind the
// tokens of a server a person starts (MCPHandler).
type MCPServing struct {
	// URL is where clients reach it; Addr the address it listens at.
	URL  string
	Addr net.Addr
	// Token is the fresh token naming the person.
	Token string
	// Beyond: the address is beyond loopback, where anyone who reaches
	// it with a token acts as the person the token names.
	Beyond bool
	ln     net.Listener
	h      http.Handler
}

// ListenMCP listens at addr for h, an MCP server's streamable HTTP,
// behind a fresh token naming who and the settings' serve tokens
// (Tokens, MCPHandler). An address it cannot listen at is ErrListen.
func ListenMCP(addr, who string, settings stock.Settings, h http.Handler) (*MCPServing, error) {
	tokens := Tokens(who, settings)
	guarded, err := MCPHandler(h, tokens)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrListen, err)
	}
	return &MCPServing{URL: MCPURL(ln.Addr()), Addr: ln.Addr(), Token: tokens[0].Token,
		Beyond: stock.LoopbackAddr(ln.Addr().String()) != nil, ln: ln, h: guarded}, nil
}

// Until serves until ctx is done (ServeUntil).
func (m *MCPServing) Until(ctx context.Context) error { return ServeUntil(ctx, m.ln, m.h) }
