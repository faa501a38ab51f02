package mcpserver

import (
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPHandler is the server of ws over streamable HTTP (protocol revision
// 2025-11-25): one endpoint that takes JSON-RPC posts and answers with a
// response or a stream of events (Server-Sent Events), a session per
// client (Mcp-Session-Id), and streams that resume: a client that lost a
// stream reconnects with Last-Event-ID and is sent what it missed, for as
// long as this process lives. A request from a loopback connection that
// names another host (DNS rebinding) is refused with 403. It lets in
// everyone who reaches it: a front end wraps it in its tokens and Origin
// rules (harness mcp serve --http uses the page's: serve.Guard). A
// session nobody used for an hour is closed.
func HTTPHandler(ws Workspace, opts ServerOptions) http.Handler {
	srv := NewServer(ws, opts)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		EventStore:     sdk.NewMemoryEventStore(nil),
		SessionTimeout: time.Hour,
	})
}
