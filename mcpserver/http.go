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
// session nobody used for an hour is closed. A call the client cancels
// (notifications/cancelled) while it runs gets no response, on its
// stream or on a stream resumed after; the hint that its thread is
// resumable goes to the session's own stream (a GET without
// Last-Event-ID), as the client has stopped reading the call's. A
// request naming a protocol revision not served (MCP-Protocol-Version) is
// refused with 400.
func HTTPHandler(ws Workspace, opts ServerOptions) http.Handler {
	srv := NewServer(ws, opts)
	return guardCancels(srv, sdk.StreamableHTTPOptions{SessionTimeout: time.Hour})
}
