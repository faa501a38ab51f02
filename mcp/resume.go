package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// Resuming a call after a restart (see session.go): the process that made
// a call to a remote server died while the server's question waited; the
// person answers later, from any front end; a process that holds the
// thread then posts the answer in the session, as the JSON-RPC response
// to the server's request, and reads the call's stream again from the
// question's event (GET with Last-Event-ID), until the call's result.
// Where that cannot be done — the server no longer knows the session
// (404), offers no stream to resume, or the stream ends without the
// result — the call is in doubt, saying why, and a person settles it as
// after any crash; the answer stays recorded.

// resumeAttempts bounds the times a call's stream is read again when it
// ends without the call's result.
const resumeAttempts = 5

// maxRetryWait bounds the wait a server's retry field asks before the
// stream is read again.
const maxRetryWait = 5 * time.Second

// jsonrpcID is raw as a JSON-RPC id (a string of at most 256 bytes, or an
// integer), encoded again; nil when it is not one.
func jsonrpcID(raw []byte) json.RawMessage {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil
	}
	switch v := v.(type) {
	case string:
		if len(v) > 256 {
			return nil
		}
	case json.Number:
		if _, err := v.Int64(); err != nil {
			return nil
		}
	default:
		return nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return out
}

// resumable is what the question with message, asked during call, needs
// to be answered after a restart (facts.ElicitResume), its session kept
// in the person's token store; nil when the server gave no session id or
// no event id (its streams cannot be resumed), or no token store keeps
// sessions.
func (s *conn) resumable(call *inflight, message string) *facts.ElicitResume {
	s.mu.Lock()
	tp, protocol := s.tap, s.protocol
	s.mu.Unlock()
	tokens := s.client.opts.Tokens
	if tp == nil || tokens == nil {
		return nil
	}
	q, session, ok := tp.claim(message)
	request, callID := jsonrpcID(q.request), jsonrpcID(q.call)
	if !ok || !isEventID(q.event) || request == nil || callID == nil || !isProtocolRevision(protocol) {
		return nil
	}
	digest, err := tokens.SaveSession(s.cfg.URL, session)
	if err != nil {
		return nil
	}
	s.calls.mu.Lock()
	call.kept = append(call.kept, digest)
	s.calls.mu.Unlock()
	return &facts.ElicitResume{URL: s.endpoint, Session: digest, Protocol: protocol, Event: q.event,
		Request: facts.RawJSON(request), Call: facts.RawJSON(callID)}
}

// forget forgets the sessions kept for the questions of the call f, which
// ended: nothing resumes it any more.
func (s *conn) forget(f *inflight) {
	s.calls.mu.Lock()
	kept := f.kept
	f.kept = nil
	s.calls.mu.Unlock()
	if tokens := s.client.opts.Tokens; tokens != nil {
		for _, d := range kept {
			_ = tokens.DeleteSession(s.cfg.URL, d)
		}
	}
}

// Resume delivers answer, a person's answer to asked — a question the
// server asked during the call req, made by a process that died — over
// the resumable session the question names, and reads the call's result
// on the call's stream. The report is the result's, as Execute's; in
// doubt, saying why, when the answer cannot be delivered or the result
// not read. A further question of the server on the stream is put to a
// person as during the call (action.ElicitOf).
func (t *tool) Resume(ctx context.Context, req action.Request, asked facts.QuestionAsked, answer facts.QuestionAnswered) facts.Report {
	s := t.c
	doubt := func(format string, args ...any) facts.Report {
		return inDoubt(t.failed(facts.ClassTransport, "the call was made by a process that died while the server's question %s waited: %s; whether the call took effect is unknown",
			asked.RequestID, fmt.Sprintf(format, args...)))
	}
	var r facts.ElicitResume
	switch {
	case asked.Elicit == nil || asked.Elicit.Resume == nil:
		return doubt("the question names no session to resume")
	case s.transport != facts.MCPHTTP:
		return doubt("the server %q is not a remote server here", s.name)
	case asked.Elicit.Server != s.name:
		return doubt("the question is the server %q's, not %q's", asked.Elicit.Server, s.name)
	case s.endpoint != asked.Elicit.Resume.URL:
		return doubt("the server %q is now configured at %s, not %s where the call was made", s.name, s.endpoint, serverWord(asked.Elicit.Resume.URL, 200))
	}
	r = *asked.Elicit.Resume
	if why := t.refusal(req); why != "" {
		return doubt("%s", why)
	}
	request, call := jsonrpcID(r.Request), jsonrpcID(r.Call)
	if request == nil || call == nil || !isEventID(r.Event) || !isProtocolRevision(r.Protocol) {
		return doubt("the question's record of the session is malformed")
	}
	tokens := s.client.opts.Tokens
	if tokens == nil {
		return doubt("no token store keeps the session's id here")
	}
	session, err := tokens.LoadSession(s.cfg.URL, r.Session)
	if err != nil {
		return doubt("the answer was not delivered: %v", err)
	}
	x := &resumption{t: t, r: r, session: session, call: call, hc: &http.Client{Transport: s.roundTripper()}, actionID: req.ActionID}
	if x.auth, err = s.bearer(ctx); err != nil {
		return doubt("the answer was not delivered: %v", err)
	}
	res, err := elicitResult(answer)
	if err != nil {
		return doubt("the answer was not delivered: %v", err)
	}
	refused := x.respond(ctx, request, res, nil)
	if errors.Is(refused, ErrSessionGone) || (refused != nil && ctx.Err() != nil) {
		return doubt("the answer was not delivered: %v", refused)
	}
	// Refused otherwise, the answer may have reached the server before
	// the crash (the process that died delivered it, then died before
	// it recorded the result): the stream says.
	// The call's timeout runs from the delivery; not while a person is
	// asked again.
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	clock := time.AfterFunc(s.timeout, cancel)
	defer clock.Stop()
	x.pause = func() func() {
		if !clock.Stop() {
			return func() {}
		}
		return func() { clock.Reset(s.timeout) }
	}
	rep, err := x.follow(callCtx, ctx)
	if err != nil && refused != nil {
		return doubt("the answer was not delivered (%v), and the call's result was not read: %v", refused, err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return t.failed(facts.ClassCancelled, "the call's result was not read: %v", ctx.Err())
		}
		if callCtx.Err() != nil {
			return doubt("the answer was delivered, and no result came within %v", s.timeout)
		}
		return doubt("the answer was delivered, and the call's result was not read: %v", err)
	}
	_ = tokens.DeleteSession(s.cfg.URL, r.Session)
	return rep
}

// bearer is the Authorization header of the person's kept token for the
// server, refreshed when it expired; "" where none is kept or the
// settings give the header.
func (s *conn) bearer(ctx context.Context) (string, error) {
	tokens := s.client.opts.Tokens
	if tokens == nil || hasHeader(s.cfg.Headers, "Authorization") {
		return "", nil
	}
	a, err := newStoredAuth(s.name, s.cfg.URL, *tokens, oauthClient(s.client.opts.HTTPClient))
	if err != nil {
		return "", err
	}
	ts, err := a.TokenSource(ctx)
	if err != nil || ts == nil {
		return "", err
	}
	tok, err := ts.Token()
	if err != nil {
		return "", err
	}
	return tok.Type() + " " + tok.AccessToken, nil
}

// resumption is one call being resumed.
type resumption struct {
	t       *tool
	r       facts.ElicitResume
	session string
	call    json.RawMessage
	hc      *http.Client
	auth    string
	pause   func() func()
	// actionID is the call's action.
	actionID string
}

// request is an HTTP request in the session.
func (x *resumption) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, x.t.c.cfg.URL, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Mcp-Session-Id", x.session)
	req.Header.Set("MCP-Protocol-Version", x.r.Protocol)
	if x.auth != "" {
		req.Header.Set("Authorization", x.auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// respond posts the response to the server's request id: result, or the
// JSON-RPC error.
func (x *resumption) respond(ctx context.Context, id json.RawMessage, result any, rpcErr *rpcError) error {
	msg := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *rpcError       `json:"error,omitempty"`
	}{"2.0", id, result, rpcErr}
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := x.request(ctx, http.MethodPost, body)
	if err != nil {
		return err
	}
	res, err := x.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	said, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	switch {
	case res.StatusCode == http.StatusNotFound:
		return ErrSessionGone
	case res.StatusCode/100 != 2:
		return fmt.Errorf("the server refused it: HTTP %d %s", res.StatusCode, serverWord(string(said), 200))
	}
	return nil
}

// rpcError is a JSON-RPC error.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// follow reads the call's stream again from the question's event, until
// the call's result: its report. ctx bounds the reading (the call's
// timeout); outer is the run's (a person asked again waits under it).
func (x *resumption) follow(ctx, outer context.Context) (facts.Report, error) {
	last := x.r.Event
	var why error
	for attempt := 0; attempt < resumeAttempts; attempt++ {
		req, err := x.request(ctx, http.MethodGet, nil)
		if err != nil {
			return facts.Report{}, err
		}
		req.Header.Set("Last-Event-ID", last)
		res, err := x.hc.Do(req)
		if err != nil {
			return facts.Report{}, err
		}
		switch {
		case res.StatusCode == http.StatusNotFound:
			res.Body.Close()
			return facts.Report{}, ErrSessionGone
		case res.StatusCode == http.StatusMethodNotAllowed:
			res.Body.Close()
			return facts.Report{}, fmt.Errorf("the server offers no stream to resume (HTTP 405)")
		case res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream"):
			said, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
			res.Body.Close()
			return facts.Report{}, fmt.Errorf("the server answered the stream's resumption with HTTP %d %s", res.StatusCode, serverWord(string(said), 200))
		}
		rep, done, retry, err := x.read(ctx, outer, res.Body, &last)
		res.Body.Close()
		if done || err != nil {
			return rep, err
		}
		why = fmt.Errorf("the stream ended %d times without the call's result", attempt+1)
		if attempt == 0 {
			why = errors.New("the stream ended without the call's result")
		}
		select {
		case <-ctx.Done():
			return facts.Report{}, ctx.Err()
		case <-time.After(retry):
		}
	}
	return facts.Report{}, why
}

// read reads one connection of the call's stream: done with the report
// when the call's result came; last follows the events read; retry is
// the wait the server asked before the next reading.
func (x *resumption) read(ctx, outer context.Context, body io.Reader, last *string) (rep facts.Report, done bool, retry time.Duration, err error) {
	retry = 500 * time.Millisecond
	var events []sseEvent
	sse := sseReader{event: func(e sseEvent) { events = append(events, e) }}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := body.Read(buf)
		sse.feed(buf[:n])
		for len(events) > 0 {
			e := events[0]
			events = events[1:]
			if isEventID(e.id) {
				*last = e.id
			}
			if ms, err := strconv.Atoi(e.retry); err == nil && ms >= 0 {
				retry = min(time.Duration(ms)*time.Millisecond, maxRetryWait)
			}
			if rep, done, err := x.handle(ctx, outer, e); done || err != nil {
				return rep, done, retry, err
			}
		}
		if rerr == io.EOF {
			return facts.Report{}, false, retry, nil
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return facts.Report{}, false, retry, ctx.Err()
			}
			return facts.Report{}, false, retry, nil // read again
		}
	}
}

// handle handles one event of the call's stream.
func (x *resumption) handle(ctx, outer context.Context, e sseEvent) (facts.Report, bool, error) {
	if len(bytes.TrimSpace(e.data)) == 0 {
		return facts.Report{}, false, nil // a priming event
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(e.data, &msg); err != nil {
		return facts.Report{}, false, nil // not JSON-RPC: not the result
	}
	id := jsonrpcID(msg.ID)
	switch {
	case msg.Method == "" && id != nil && bytes.Equal(id, x.call):
		if msg.Error != nil {
			return x.t.failed(facts.ClassBusiness, "the server answered with an error (code %d): %s", msg.Error.Code, serverWord(msg.Error.Message, 500)), true, nil
		}
		var res sdk.CallToolResult
		if err := json.Unmarshal(msg.Result, &res); err != nil {
			return x.t.failed(facts.ClassInvalidOutput, "the server's result is malformed: %v", err), true, nil
		}
		return x.t.report(ctx, &res), true, nil
	case msg.Method == "elicitation/create" && id != nil:
		return facts.Report{}, false, x.ask(ctx, outer, e.id, id, msg.Params)
	case msg.Method == "ping" && id != nil:
		return facts.Report{}, false, x.respond(ctx, id, struct{}{}, nil)
	case msg.Method != "" && id != nil:
		return facts.Report{}, false, x.respond(ctx, id, nil, &rpcError{Code: -32601,
			Message: fmt.Sprintf("harness resumes this call after a restart and answers only elicitation/create and ping here, not %s", serverWord(msg.Method, 100))})
	}
	return facts.Report{}, false, nil
}

// ask puts a further question of the server, the request id carried by
// the event, to a person, and posts the answer.
func (x *resumption) ask(ctx, outer context.Context, event string, id json.RawMessage, params json.RawMessage) error {
	var p sdk.ElicitParams
	if err := json.Unmarshal(params, &p); err != nil {
		return x.respond(ctx, id, nil, &rpcError{Code: -32602, Message: "the parameters do not parse"})
	}
	q, err := question(&p)
	if err != nil {
		return x.respond(ctx, id, nil, &rpcError{Code: -32602, Message: err.Error()})
	}
	ask := action.ElicitOf(outer)
	if ask == nil {
		return x.respond(ctx, id, nil, &rpcError{Code: -32602, Message: "nobody can be asked where this call runs"})
	}
	q.Elicit.ActionID, q.Elicit.Server = x.actionID, x.t.c.name
	if isEventID(event) {
		r := x.r
		r.Event, r.Request = event, facts.RawJSON(id)
		q.Elicit.Resume = &r
	}
	resume := x.pause()
	ans, err := ask(outer, q)
	resume()
	if err != nil {
		return err
	}
	res, err := elicitResult(ans)
	if err != nil {
		return x.respond(ctx, id, nil, &rpcError{Code: -32602, Message: err.Error()})
	}
	return x.respond(ctx, id, res, nil)
}
