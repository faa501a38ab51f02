package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The write the fake models ask for, and what they say after it.
const (
	fakeArgs  = `{"path":"cache.toml","content":"ttl_seconds = 300\n"}`
	fakeFirst = "I'll set the TTL to 300."
	fakeDone  = "Done: cache.toml sets ttl_seconds = 300."
)

// assistantTurns counts the assistant messages a request carries: the
// model's turns so far.
func assistantTurns(t *testing.T, r *http.Request) int {
	var body struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	data, err := io.ReadAll(r.Body)
	if err != nil || json.Unmarshal(data, &body) != nil {
		t.Errorf("fake model: a request that is not JSON: %s", data)
		return 0
	}
	n := 0
	for _, m := range body.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// fakeOpenAI speaks enough of the chat completions API for a coding thread:
// a tool call first, then text. The first request is refused with a 429
// asking for a second's wait, to be retried by the harness after it.
func fakeOpenAI(t *testing.T) *httptest.Server {
	var calls atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit"}}`)
			return
		}
		msg := map[string]any{"role": "assistant", "content": fakeDone}
		finish := "stop"
		if assistantTurns(t, r) == 0 {
			msg = map[string]any{"role": "assistant", "content": fakeFirst, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "write_file", "arguments": fakeArgs}}}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
		})
	}))
}

// fakeAnthropic speaks enough of the messages API for a coding thread.
// The first request is refused as overloaded (529), asking for a wait in
// milliseconds.
func fakeAnthropic(t *testing.T) *httptest.Server {
	var calls atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`, http.StatusNotFound)
			return
		}
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After-Ms", "700")
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		content := []any{map[string]any{"type": "text", "text": fakeDone}}
		stop := "end_turn"
		if assistantTurns(t, r) == 0 {
			var input any
			json.Unmarshal([]byte(fakeArgs), &input)
			content = []any{map[string]any{"type": "text", "text": fakeFirst},
				map[string]any{"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": input}}
			stop = "tool_use"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "fake", "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 20},
		})
	}))
}

// TestProviderScripts drives the built command against fake OpenAI and
// Anthropic servers: run → parked → approve → resume → done → verified.
func TestProviderScripts(t *testing.T) {
	openai, anthropic := fakeOpenAI(t), fakeAnthropic(t)
	// The scripts run as parallel subtests, after this function returns.
	t.Cleanup(openai.Close)
	t.Cleanup(anthropic.Close)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/providers",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("USER", "tester")
			env.Setenv("OPENAI_BASE_URL", openai.URL+"/v1")
			env.Setenv("OPENAI_API_KEY", "sk-test")
			env.Setenv("ANTHROPIC_BASE_URL", anthropic.URL)
			env.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"exits": cmdExits},
	})
}
