package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's streamable HTTP handler answers a call the client cancelled
// (notifications/cancelled) like any other: the handler's context is
// cancelled, and whatever it returns is written to the call's stream and
// kept in the event store for a client that resumes it. The cancellation
// utility of revision 2025-11-25 says a cancelled call gets no response.
// The SDK offers no hook between a handler's result and the wire, so
// harness marks the response itself and leaves it out on the way:
//
//   - around every method handler (cancelled, a receiving middleware): a
//     call whose context was cancelled while it ran is answered with the
//     error context.Canceled, as the SDK itself answers a call cancelled
//     before its handler ran. Only a cancellation the SDK took cancels a
//     call's context: one it read from a post it accepted, naming a call
//     of that session in flight (or the session's end). A post the SDK
//     refuses (a session not found, a malformed body, a bad header, too
//     large), a cancellation of a call answered already, never made or of
//     another session cancels nothing, so nothing of it is left out;
//   - in its event store (cancelStore.Append), through which every
//     message to a session's streams passes before it is written: such a
//     response is kept as an empty event (so that the stream's event ids
//     stay in step), never sent to a client that resumes the stream;
//   - on its response writers (dropWriter): its event is not written. The
//     stream still ends, as after any response.
//
// What a cancelled call appended reaches the client as log messages as
// usual, and the hint that its thread is resumable goes to the session's
// own stream (server.drive).
//
// In front of the SDK (cancelGuard.ServeHTTP), a request naming a
// protocol revision this server does not serve (MCP-Protocol-Version) is
// refused with 400, as the transport says it must be: the SDK lets a
// revision from its draft (2026-07-28) or any later one through, and
// writes what such a request is answered outside the event store.

// cancelGuard is the streamable HTTP handler's front: the protocol
// revision check, and writers that leave out cancelled calls' responses.
type cancelGuard struct {
	next     http.Handler
	versions []string // the revisions served
}

// guardCancels is a streamable HTTP handler of srv that does not answer
// a call cancelled while in flight: the SDK's, srv's handlers wrapped
// (cancelled), its event store wrapped (cancelStore) and behind the
// guard. srv is to serve no other transport: a stdio connection keeps
// its own bookkeeping (lineConn).
func guardCancels(srv *sdk.Server, opts sdk.StreamableHTTPOptions) http.Handler {
	srv.AddReceivingMiddleware(cancelled)
	if opts.EventStore == nil {
		opts.EventStore = sdk.NewMemoryEventStore(nil)
	}
	opts.EventStore = cancelStore{EventStore: opts.EventStore}
	return &cancelGuard{
		next:     sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &opts),
		versions: servedVersions(),
	}
}

// cancelled answers a call whose context was cancelled while its handler
// ran with context.Canceled (a response left out: isCancelled). An error
// that only reads so, of a call not cancelled, is told apart.
func cancelled(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if ctx.Err() != nil {
			return nil, context.Canceled
		}
		if err != nil && err.Error() == context.Canceled.Error() {
			err = fmt.Errorf("%s: %w", method, err)
		}
		return res, err
	}
}

// isCancelled says whether data is the response to a call cancelled
// while in flight: an error with no code and context.Canceled's words,
// as the SDK answers a call cancelled before its handler ran and
// cancelled after.
func isCancelled(data []byte) bool {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return false
	}
	var we *jsonrpc.Error
	return errors.As(resp.Error, &we) && we.Code == 0 && we.Message == context.Canceled.Error()
}

// ServeHTTP refuses a request naming a revision not served, then lets the
// handler serve it on a writer that leaves out cancelled calls' responses.
func (g *cancelGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, v := range r.Header.Values("Mcp-Protocol-Version") {
		if !slices.Contains(g.versions, v) {
			g.refuseVersion(w, r, v)
			return
		}
	}
	g.next.ServeHTTP(&dropWriter{ResponseWriter: w}, r)
}

// refuseVersion answers 400 to a request naming revision v, not served,
// with a JSON-RPC error that names the revisions served (as the SDK's own
// refusal does), to the call the post carries if it is one: a client that
// probes a newer revision learns to fall back.
func (g *cancelGuard) refuseVersion(w http.ResponseWriter, r *http.Request, v string) {
	var id jsonrpc.ID
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes))
		if err == nil {
			if msg, err := jsonrpc.DecodeMessage(body); err == nil {
				if req, ok := msg.(*jsonrpc.Request); ok {
					id = req.ID
				}
			}
		}
	}
	data, _ := json.Marshal(sdk.UnsupportedProtocolVersionData{Supported: g.versions, Requested: v})
	msg := fmt.Sprintf("Bad Request: unsupported protocol version %q (supported versions: %s)", v, strings.Join(g.versions, ","))
	if !id.IsValid() {
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	resp, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id,
		Error: &jsonrpc.Error{Code: sdk.CodeUnsupportedProtocolVersion, Message: msg, Data: data}})
	if err != nil {
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(resp)
}

// eventData is the data of one server-sent event as the SDK writes it
// (one Write an event: "event: message", an "id: …" line, one "data: …"
// line, a blank line).
func eventData(event []byte) ([]byte, bool) {
	for line := range bytes.Lines(event) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			return bytes.TrimRight(d, "\n"), true
		}
	}
	return nil, false
}

// dropWriter is a response writer that leaves out the events of
// responses to cancelled calls.
type dropWriter struct {
	http.ResponseWriter
}

func (w *dropWriter) Write(p []byte) (int, error) {
	if data, ok := eventData(p); ok && isCancelled(data) {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *dropWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// cancelStore is the handler's event store: the response to a cancelled
// call is stored empty, never to be sent to a client that resumes the
// stream.
type cancelStore struct {
	sdk.EventStore
}

// Append implements sdk.EventStore.
func (s cancelStore) Append(ctx context.Context, sid, stream string, data []byte) error {
	if len(data) > 0 && isCancelled(data) {
		data = nil
	}
	return s.EventStore.Append(ctx, sid, stream, data)
}
