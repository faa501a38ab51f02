package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's streamable HTTP handler answers a call the client cancelled
// (notifications/cancelled) like any other: the handler's context is
// cancelled, and whatever it returns is written to the call's stream and
// kept in the event store for a client that resumes it. The cancellation
// utility of revision 2025-11-25 says a cancelled call gets no response.
// The SDK offers no hook between a handler's result and the wire, so
// harness keeps the bookkeeping the stdio connection keeps (lineConn) on
// both sides of the handler it does not own:
//
//   - in front of it (cancelGuard.ServeHTTP): the calls each session
//     posts, and the cancellations of those of them still in flight (a
//     cancellation of no call in flight, answered already or never made,
//     marks nothing, so a later call that reuses the id is answered);
//   - in its event store (cancelStore.Append), through which every
//     message to a session's streams passes before it is written: the
//     response to a cancelled call is kept as an empty event (so that
//     the stream's event ids stay in step) and named to be dropped;
//   - on its response writers (dropWriter): the named response's event
//     is not written. The stream still ends, as after any response.
//
// What a cancelled call appended reaches the client as log messages as
// usual, and the hint that its thread is resumable goes to the session's
// own stream (server.drive).

// maxTracked bounds the calls of one session tracked at once: a client
// that keeps more in flight may see responses to calls it cancelled
// beyond them (as it would before the cancellation arrived).
const maxTracked = 4096

// cancelGuard is the bookkeeping of cancelled calls for one handler.
type cancelGuard struct {
	next http.Handler

	// mu guards sessions: by session id, the calls in flight and those
	// of them cancelled, and the responses named to be dropped.
	mu       sync.Mutex
	sessions map[string]*calls
}

// calls are one session's calls in flight (true: cancelled), and the
// responses to drop (by id) that were stored and not yet written.
type calls struct {
	inflight map[jsonrpc.ID]bool
	drop     map[jsonrpc.ID]bool
}

func (c *calls) empty() bool { return len(c.inflight) == 0 && len(c.drop) == 0 }

// guardCancels is a streamable HTTP handler of srv that does not answer
// a call cancelled while in flight: the SDK's, its event store wrapped
// (cancelStore) and behind the guard.
func guardCancels(srv *sdk.Server, opts sdk.StreamableHTTPOptions) http.Handler {
	g := &cancelGuard{sessions: map[string]*calls{}}
	if opts.EventStore == nil {
		opts.EventStore = sdk.NewMemoryEventStore(nil)
	}
	opts.EventStore = cancelStore{EventStore: opts.EventStore, g: g}
	g.next = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &opts)
	return g
}

// ServeHTTP notes the calls and cancellations a post carries, then lets
// the handler serve it on a writer that drops the responses named.
func (g *cancelGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		g.next.ServeHTTP(w, r) // initialize: nothing to cancel yet
		return
	}
	var marked []jsonrpc.ID
	if r.Method == http.MethodPost && r.Body != nil {
		// Read what the handler would (it bounds the body too: a longer
		// one is passed on unread and refused there).
		const limit = sdk.DefaultMaxRequestBodyBytes
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		if err == nil && len(body) <= limit {
			marked = g.posted(sid, body)
		}
	}
	dw := &dropWriter{ResponseWriter: w, g: g, sid: sid}
	g.next.ServeHTTP(dw, r)
	if len(marked) > 0 && (dw.status < 200 || dw.status > 299) {
		// Refused before the server saw them (a session not found, a
		// malformed post): no response will come.
		g.mu.Lock()
		if c := g.sessions[sid]; c != nil {
			for _, id := range marked {
				delete(c.inflight, id)
			}
			g.tidy(sid, c)
		}
		g.mu.Unlock()
	}
}

// posted notes the messages of a post to session sid (one, or a batch of
// an older revision), and returns the calls it marked in flight.
func (g *cancelGuard) posted(sid string, body []byte) []jsonrpc.ID {
	var raws []json.RawMessage
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &raws) != nil {
			return nil
		}
	} else {
		raws = []json.RawMessage{body}
	}
	var marked []jsonrpc.ID
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			continue
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		c := g.sessions[sid]
		if req.IsCall() {
			if c == nil {
				c = &calls{inflight: map[jsonrpc.ID]bool{}, drop: map[jsonrpc.ID]bool{}}
				g.sessions[sid] = c
			}
			// An id already in flight is refused by the handler as a
			// duplicate: the call in flight keeps its mark.
			if _, dup := c.inflight[req.ID]; !dup && len(c.inflight) < maxTracked {
				c.inflight[req.ID] = false
				marked = append(marked, req.ID)
			}
			continue
		}
		if req.Method != "notifications/cancelled" || c == nil {
			continue
		}
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			continue
		}
		id, err := jsonrpc.MakeID(p.RequestID)
		if err != nil {
			continue
		}
		if _, ok := c.inflight[id]; ok {
			c.inflight[id] = true
		}
	}
	return marked
}

// answered is told of each message stored for session sid before it is
// written, and says whether it is the response to a cancelled call (then
// named to be dropped when written).
func (g *cancelGuard) answered(sid string, data []byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.sessions[sid]
	if c == nil {
		return false
	}
	id, ok := responseID(data)
	if !ok {
		return false
	}
	cancelled, inflight := c.inflight[id]
	delete(c.inflight, id)
	// A response not dropped clears a name left by a response stored but
	// never written (its stream gone): it is not this one's.
	delete(c.drop, id)
	if inflight && cancelled {
		c.drop[id] = true
	}
	g.tidy(sid, c)
	return inflight && cancelled
}

// dropped says whether the event written to session sid is a response
// named to be dropped, and forgets the name.
func (g *cancelGuard) dropped(sid string, event []byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.sessions[sid]
	if c == nil || len(c.drop) == 0 {
		return false
	}
	data, ok := eventData(event)
	if !ok {
		return false
	}
	id, ok := responseID(data)
	if !ok || !c.drop[id] {
		return false
	}
	delete(c.drop, id)
	g.tidy(sid, c)
	return true
}

// closed forgets session sid.
func (g *cancelGuard) closed(sid string) {
	g.mu.Lock()
	delete(g.sessions, sid)
	g.mu.Unlock()
}

// tidy forgets a session with nothing in flight. g.mu is held.
func (g *cancelGuard) tidy(sid string, c *calls) {
	if c.empty() {
		delete(g.sessions, sid)
	}
}

// responseID is the id of data when it is a JSON-RPC response.
func responseID(data []byte) (jsonrpc.ID, bool) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return jsonrpc.ID{}, false
	}
	return resp.ID, true
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

// dropWriter is a response writer of session sid that leaves out the
// events of responses named to be dropped.
type dropWriter struct {
	http.ResponseWriter
	g      *cancelGuard
	sid    string
	status int
}

func (w *dropWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *dropWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.g.dropped(w.sid, p) {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *dropWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// cancelStore is the handler's event store, telling the guard of each
// message: the response to a cancelled call is stored empty, never to be
// sent again to a client that resumes the stream.
type cancelStore struct {
	sdk.EventStore
	g *cancelGuard
}

// Append implements sdk.EventStore.
func (s cancelStore) Append(ctx context.Context, sid, stream string, data []byte) error {
	if len(data) > 0 && s.g.answered(sid, data) {
		data = nil
	}
	return s.EventStore.Append(ctx, sid, stream, data)
}

// SessionClosed implements sdk.EventStore.
func (s cancelStore) SessionClosed(ctx context.Context, sid string) error {
	s.g.closed(sid)
	return s.EventStore.SessionClosed(ctx, sid)
}
