package model_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// reply is what a fake API server answers one request with.
type reply struct {
	status int    // default 200
	body   string // sent as application/json unless contentType says otherwise
	// events, when set, are sent as server-sent events, each followed by a
	// blank line and flushed; the body is then ignored.
	events      []string
	contentType string
	// abort cuts the connection after the events (or at once).
	abort bool
	// delay holds the reply back.
	delay time.Duration
}

// fake is a hand-written server speaking one provider's API at one path.
// It answers requests with its replies in order; the last one repeats.
type fake struct {
	t    *testing.T
	path string
	srv  *httptest.Server

	mu      sync.Mutex
	replies []reply
	bodies  [][]byte
	headers []http.Header
	sent    [][]byte // the response bodies written, byte for byte
}

func newFake(t testing.TB, path string, replies ...reply) *fake {
	f := &fake{path: path, replies: replies}
	if tt, ok := t.(*testing.T); ok {
		f.t = tt
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != f.path || r.Method != http.MethodPost {
		http.Error(w, fmt.Sprintf(`{"error":{"type":"not_found_error","message":"no route %s %s"}}`, r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	rp := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()

	if rp.delay > 0 {
		select {
		case <-time.After(rp.delay):
		case <-r.Context().Done():
			return
		}
	}
	var sent bytes.Buffer
	defer func() {
		f.mu.Lock()
		f.sent = append(f.sent, sent.Bytes())
		f.mu.Unlock()
	}()
	status := rp.status
	if status == 0 {
		status = http.StatusOK
	}
	if rp.events != nil {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		fl := w.(http.Flusher)
		for _, e := range rp.events {
			chunk := e + "\n\n"
			sent.WriteString(chunk)
			io.WriteString(w, chunk)
			fl.Flush()
		}
		if rp.abort {
			panic(http.ErrAbortHandler)
		}
		return
	}
	if rp.abort {
		panic(http.ErrAbortHandler)
	}
	ct := rp.contentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	sent.WriteString(rp.body)
	io.WriteString(w, rp.body)
}

// requests returns the request bodies received, in order.
func (f *fake) requests() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
}

// request decodes the nth request body (from 0).
func (f *fake) request(t testing.TB, n int) map[string]any {
	t.Helper()
	reqs := f.requests()
	require.Greater(t, len(reqs), n, "request %d never came", n)
	var v map[string]any
	require.NoError(t, json.Unmarshal(reqs[n], &v))
	return v
}

func (f *fake) header(n int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[n]
}

func (f *fake) response(n int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent[n]
}

// sse formats one server-sent event: data alone, or an event name and data.
func sse(event string, data any) string {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event == "" {
		return "data: " + string(b)
	}
	return "event: " + event + "\ndata: " + string(b)
}

// jsonText marshals v.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// --- OpenAI chat completions ---

type oaCall struct {
	id, name string
	args     any // a string, or any other JSON value sent as it is
}

func oaToolCalls(calls []oaCall) []map[string]any {
	var out []map[string]any
	for _, c := range calls {
		tc := map[string]any{"type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}}
		if c.id != "" {
			tc["id"] = c.id
		}
		out = append(out, tc)
	}
	return out
}

// oaCompletion is a chat completion body.
func oaCompletion(text string, calls ...oaCall) string {
	msg := map[string]any{"role": "assistant", "content": nil}
	if text != "" {
		msg["content"] = text
	}
	finish := "stop"
	if len(calls) > 0 {
		msg["tool_calls"] = oaToolCalls(calls)
		finish = "tool_calls"
	}
	return jsonText(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
	})
}

// oaStream is a streamed chat completion: the text in pieces, each call's
// arguments in two pieces, the finish, the usage, [DONE]. finish false
// leaves out the finish, the usage and [DONE].
func oaStream(pieces []string, calls []oaCall, finish bool) []string {
	chunk := func(delta map[string]any, reason any) string {
		return sse("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": reason}}})
	}
	out := []string{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	for _, p := range pieces {
		out = append(out, chunk(map[string]any{"content": p}, nil))
	}
	for i, c := range calls {
		args, _ := c.args.(string)
		head := map[string]any{"index": i, "type": "function", "function": map[string]any{"name": c.name, "arguments": args[:len(args)/2]}}
		if c.id != "" {
			head["id"] = c.id
		}
		out = append(out, chunk(map[string]any{"tool_calls": []any{head}}, nil))
		out = append(out, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args[len(args)/2:]}}}}, nil))
	}
	if !finish {
		return out
	}
	reason := "stop"
	if len(calls) > 0 {
		reason = "tool_calls"
	}
	out = append(out, chunk(map[string]any{}, reason))
	out = append(out, sse("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}))
	return append(out, "data: [DONE]")
}

func oaError(typ, msg string) string {
	return jsonText(map[string]any{"error": map[string]any{"type": typ, "message": msg, "code": nil, "param": nil}})
}

// --- Anthropic messages ---

type anCall struct {
	id, name string
	input    any // an object, or a string holding JSON
}

func anContent(text string, calls []anCall) []any {
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, c := range calls {
		b := map[string]any{"type": "tool_use", "name": c.name, "input": c.input}
		if c.id != "" {
			b["id"] = c.id
		}
		content = append(content, b)
	}
	if content == nil {
		content = []any{}
	}
	return content
}

// anMessage is a messages API body.
func anMessage(text string, calls ...anCall) string {
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	return jsonText(map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": anContent(text, calls), "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 20, "output_tokens": 7, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 0},
	})
}

// anStream is a streamed message: text in pieces, each call's input JSON in
// two pieces, message_stop. stop false leaves out message_delta and
// message_stop.
func anStream(pieces []string, calls []anCall, stop bool) []string {
	out := []string{
		sse("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 20, "output_tokens": 1}}}),
		"event: ping\ndata: {\"type\": \"ping\"}",
	}
	idx := 0
	if len(pieces) > 0 {
		out = append(out, sse("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, p := range pieces {
			out = append(out, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": p}}))
		}
		out = append(out, sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	for _, c := range calls {
		in, _ := c.input.(string)
		out = append(out, sse("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": map[string]any{}}}))
		for _, part := range []string{in[:len(in)/2], in[len(in)/2:]} {
			out = append(out, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}}))
		}
		out = append(out, sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	if !stop {
		return out
	}
	reason := "end_turn"
	if len(calls) > 0 {
		reason = "tool_use"
	}
	return append(out,
		sse("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 9}}),
		sse("message_stop", map[string]any{"type": "message_stop"}))
}

func anError(typ, msg string) string {
	return jsonText(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// lines joins strings with newlines; for reading failures.
func lines(s ...string) string { return strings.Join(s, "\n") }
