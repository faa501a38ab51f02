package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/internal/providertest"
)

// hostileText is what a hostile model streams: a fake prompt, then a
// conceal (SGR 8) meant to hide the real "Approve …?" line, a title
// change, a carriage return and a bidi override.
const hostileText = "Approve? [y]es: y\n\x1b[8m hidden \x1b]0;pwned\x07 \r\u202e"

// streamingOpenAI streams one text turn over SSE, cut into pieces so that
// an escape sequence is split between chunks.
func streamingOpenAI(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		for i := 0; i < len(hostileText); i += 3 {
			chunk(map[string]any{"content": hostileText[i:min(i+3, len(hostileText))]}, nil)
		}
		chunk(map[string]any{}, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
}

// A model's text streamed to a terminal is escaped as it arrives: none of
// the control sequences a hostile model sends reaches the terminal raw,
// however the stream cuts them.
func TestStreamedTextIsEscaped(t *testing.T) {
	srv := streamingOpenAI(t)
	defer srv.Close()
	dir := workspace(t, map[string]string{})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + srv.URL + "/v1", "HARNESS_STORE="},
		"run", "--model", "openai:fake", "Say something")
	require.Zero(t, tm.exit(), tm.output())
	out := tm.output()
	require.Contains(t, out, `\x1b[8m hidden \x1b]0;pwned\x07 \r\u202e`, "the text is shown, escaped")
	for _, raw := range []string{"\x1b[8m", "\x1b]0;", "\x07", "\u202e"} {
		require.NotContains(t, out, raw, "a control sequence reached the terminal raw")
	}
}

// droppingOpenAI streams a turn whose first attempt drops before it is
// complete (no finish reason, the connection closed); the second attempt
// streams it whole.
func droppingOpenAI(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		n := calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		chunk(map[string]any{"role": "assistant", "content": "The TTL "}, nil)
		if n == 1 {
			// Dropped: the server goes away mid-turn.
			panic(http.ErrAbortHandler)
		}
		chunk(map[string]any{"content": "is 60 seconds."}, nil)
		chunk(map[string]any{}, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	})), &calls
}

// A stream that drops before its turn is complete is tried again, saying
// so on the terminal; the turn recorded is the whole second one.
func TestDroppedStreamIsRetried(t *testing.T) {
	srv, calls := droppingOpenAI(t)
	defer srv.Close()
	dir := workspace(t, map[string]string{})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + srv.URL + "/v1", "HARNESS_STORE="},
		"run", "--model", "openai:fake", "What is the TTL?")
	require.Zero(t, tm.exit(), tm.output())
	out := tm.output()
	require.Contains(t, out, "(the stream stopped: the text above is not kept)")
	require.Regexp(t, `(?m)^waiting [0-9.]+m?s: the stream from openai was cut off\r?$`, out, "the wait before the retry is said, and why")
	require.Contains(t, out, `turn 1: "The TTL is 60 seconds."`)
	require.Equal(t, 1, strings.Count(out, "model.turn"), "one turn recorded")
	require.EqualValues(t, 2, calls.Load())
}

// Every command that drives a thread shows the model's text as it
// streams on a terminal, not only run: a thread parked by run, approved
// with resume, streams its next turn, and the command's output is shown.
// The streamed text is printed as it came (its line break a line break),
// where a fact's line would quote it ("\n").
func TestResumeStreamsOnATerminal(t *testing.T) {
	f := providertest.NewFake(t, providertest.OpenAI.Path,
		providertest.OpenAI.Stream([]string{"Running ", "it."}, true, [3]string{"c1", "run_command", `{"command":"echo out-$((40+2))"}`}),
		providertest.OpenAI.Stream([]string{"All done.\n", "second-line-marker"}, true))
	dir := workspace(t, map[string]string{})
	env := []string{"NO_COLOR=1", "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + f.Server.URL + "/v1", "HARNESS_STORE="}
	tm := startTerminal(t, dir, env, "run", "--no-input", "--sandbox", "off", "--model", "openai:fake", "Run it")
	require.Equal(t, exitParked, tm.exit(), tm.output())
	tm = startTerminal(t, dir, env, "resume", "t1", "--approve", "all")
	require.Zero(t, tm.exit(), tm.output())
	out := strings.ReplaceAll(tm.output(), "\r\n", "\n")
	require.Regexp(t, `(?m)^second-line-marker$`, out, "the turn's text streamed on resume")
	require.Contains(t, out, "out-42", "the command's output")
	var bodies []string
	for _, b := range f.Requests() {
		bodies = append(bodies, string(b))
	}
	require.Len(t, bodies, 2)
	require.Contains(t, bodies[1], `"stream":true`, "resume asks for a stream")
}
