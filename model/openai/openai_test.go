package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/internal/providertest"
	"github.com/seed-7cc7a084/harness/model/openai"
)

// provider is this package's side of the shared suite: a chat completions
// API at /v1/chat/completions.
var provider = providertest.Provider{
	Name: "openai", Path: "/v1/chat/completions", KeyVar: "OPENAI_API_KEY",
	Open: func(t testing.TB, f *providertest.Fake, opts ...model.Option) model.Streamer {
		m, err := openai.New("gpt-test", append([]model.Option{
			model.WithBaseURL(f.Server.URL + "/v1"), model.WithAPIKey("test-key"), model.WithHTTPClient(f.Server.Client()),
		}, opts...)...)
		require.NoError(t, err)
		return m
	},
	Text: func(text string) providertest.Reply { return providertest.Reply{Body: oaCompletion(text)} },
	Calls: func(text string, calls ...[3]string) providertest.Reply {
		var cs []oaCall
		for _, c := range calls {
			cs = append(cs, oaCall{id: c[0], name: c[1], args: c[2]})
		}
		return providertest.Reply{Body: oaCompletion(text, cs...)}
	},
	Stream: func(pieces []string, complete bool, calls ...[3]string) providertest.Reply {
		var cs []oaCall
		for _, c := range calls {
			cs = append(cs, oaCall{id: c[0], name: c[1], args: c[2]})
		}
		return providertest.Reply{Events: oaStream(pieces, cs, complete)}
	},
	ErrBody: oaError,
	ErrEvent: func(typ, msg string) string {
		return providertest.SSE("", map[string]any{"error": map[string]any{"type": typ, "message": msg}})
	},
	Cut: func(r providertest.Reply) providertest.Reply {
		// llama-server's and OpenAI's shape of a turn stopped at -n or
		// max_completion_tokens.
		r.Body = strings.NewReplacer(`"finish_reason":"stop"`, `"finish_reason":"length"`, `"finish_reason":"tool_calls"`, `"finish_reason":"length"`).Replace(r.Body)
		for i, e := range r.Events {
			r.Events[i] = strings.NewReplacer(`"finish_reason":"stop"`, `"finish_reason":"length"`, `"finish_reason":"tool_calls"`, `"finish_reason":"length"`).Replace(e)
		}
		return r
	},
	Usage:             facts.Usage{InputTokens: 12, OutputTokens: 5},
	LastCallAndResult: lastCallAndResult,
}

// TestProvider runs the suite every provider passes.
func TestProvider(t *testing.T) { providertest.Run(t, provider) }

// BenchmarkProviderTurn: see providertest.Bench.
func BenchmarkProviderTurn(b *testing.B) { providertest.Bench(b, provider) }

// TestDecisionQuirks: what OpenAI-compatible servers send that OpenAI
// does not.
func TestDecisionQuirks(t *testing.T) {
	tests := []struct {
		name  string
		reply providertest.Reply
		want  model.Decision
	}{
		{"arguments as a JSON object instead of a string", providertest.Reply{Body: oaCompletion("", oaCall{id: "c1", name: "write_file", args: map[string]any{"path": "a.toml"}})},
			model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path":"a.toml"}`}}}},
		{"malformed arguments are kept as written", providertest.Reply{Body: oaCompletion("", oaCall{id: "c1", name: "write_file", args: `{"path": "a.toml"`})},
			model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path": "a.toml"`}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { providertest.CheckDecision(t, provider, tc.reply, tc.want) })
	}
}

// TestStreamQuirks: what OpenAI-compatible servers send in streams that
// OpenAI does not — a whole call in one chunk with its arguments as a JSON
// object, tool calls without an index.
func TestStreamQuirks(t *testing.T) {
	chunk := func(delta map[string]any, reason any) string {
		return providertest.SSE("", map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": reason}}})
	}
	f := providertest.NewFake(t, provider.Path, providertest.Reply{Events: []string{
		chunk(map[string]any{"tool_calls": []any{
			map[string]any{"id": "a", "type": "function", "function": map[string]any{"name": "write_file", "arguments": map[string]any{"path": "a.toml"}}},
			map[string]any{"id": "b", "type": "function", "function": map[string]any{"name": "write_file", "arguments": `{"path":`}},
		}}, nil),
		chunk(map[string]any{"tool_calls": []any{
			map[string]any{"function": map[string]any{"arguments": `"b.toml"}`}},
		}}, nil),
		chunk(map[string]any{"tool_calls": []any{
			map[string]any{"function": map[string]any{"arguments": ``}},
			map[string]any{"function": map[string]any{"arguments": ``}},
		}}, "tool_calls"),
		"data: [DONE]",
	}})
	d, err := provider.Open(t, f).Stream(context.Background(), providertest.SimpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, []facts.ToolCall{
		{ID: "a", Name: "write_file", Args: `{"path":"a.toml"}`},
		{ID: "b", Name: "write_file", Args: `{"path":"b.toml"}`},
	}, d.ToolCalls)
}

// lastCallAndResult reads a request's last tool call and tool result.
func lastCallAndResult(t *testing.T, body map[string]any) (callID, resultID, result string) {
	t.Helper()
	for _, m := range body["messages"].([]any) {
		msg := m.(map[string]any)
		if tcs, ok := msg["tool_calls"].([]any); ok {
			callID = tcs[len(tcs)-1].(map[string]any)["id"].(string)
		}
		if msg["role"] == "tool" {
			resultID, result = msg["tool_call_id"].(string), msg["content"].(string)
		}
	}
	return callID, resultID, result
}

// --- the chat completions API, as the fake server speaks it ---

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
	return providertest.JSONText(map[string]any{
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
		return providertest.SSE("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
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
	out = append(out, providertest.SSE("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}))
	return append(out, "data: [DONE]")
}

func oaError(typ, msg string) string {
	return providertest.JSONText(map[string]any{"error": map[string]any{"type": typ, "message": msg, "code": nil, "param": nil}})
}
