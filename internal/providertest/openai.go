package providertest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/openai"
)

// OpenAI is the OpenAI provider's side of the shared suite: a chat completions
// API at /v1/chat/completions.
var OpenAI = Provider{
	Name: "openai", Path: "/v1/chat/completions", KeyVar: "OPENAI_API_KEY",
	Open: func(t testing.TB, f *Fake, opts ...model.Option) model.Streamer {
		m, err := openai.New("gpt-test", append([]model.Option{
			model.WithBaseURL(f.Server.URL + "/v1"), model.WithAPIKey("test-key"), model.WithHTTPClient(f.Server.Client()),
		}, opts...)...)
		require.NoError(t, err)
		return m
	},
	Text: func(text string) Reply { return Reply{Body: OpenAICompletion(text)} },
	Calls: func(text string, calls ...[3]string) Reply {
		var cs []OpenAICall
		for _, c := range calls {
			cs = append(cs, OpenAICall{ID: c[0], Name: c[1], Args: c[2]})
		}
		return Reply{Body: OpenAICompletion(text, cs...)}
	},
	Stream: func(pieces []string, complete bool, calls ...[3]string) Reply {
		var cs []OpenAICall
		for _, c := range calls {
			cs = append(cs, OpenAICall{ID: c[0], Name: c[1], Args: c[2]})
		}
		return Reply{Events: oaStream(pieces, cs, complete)}
	},
	ErrBody: oaError,
	ErrEvent: func(typ, msg string) string {
		return SSE("", map[string]any{"error": map[string]any{"type": typ, "message": msg}})
	},
	Cut: func(r Reply) Reply {
		// llama-server's and OpenAI's shape of a turn stopped at -n or
		// max_completion_tokens.
		r.Body = strings.NewReplacer(`"finish_reason":"stop"`, `"finish_reason":"length"`, `"finish_reason":"tool_calls"`, `"finish_reason":"length"`).Replace(r.Body)
		for i, e := range r.Events {
			r.Events[i] = strings.NewReplacer(`"finish_reason":"stop"`, `"finish_reason":"length"`, `"finish_reason":"tool_calls"`, `"finish_reason":"length"`).Replace(e)
		}
		return r
	},
	Overflow: []Reply{
		// llama.cpp's llama-server, past -c.
		{Status: 400, Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5127,"n_ctx":4096}}`},
		// OpenAI.
		{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130415 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
		// vLLM.
		{Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5200 tokens (5000 in the messages, 200 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`},
	},
	Usage:             facts.Usage{InputTokens: 12, OutputTokens: 5},
	LastCallAndResult: openAICallAndResult,
}

// openAICallAndResult reads a request's last tool call and tool result.
func openAICallAndResult(t *testing.T, body map[string]any) (callID, resultID, result string) {
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

// OpenAICall is a tool call of a chat completion the fake server sends.
type OpenAICall struct {
	ID, Name string
	Args     any // a string, or any other JSON value sent as it is
}

func oaToolCalls(calls []OpenAICall) []map[string]any {
	var out []map[string]any
	for _, c := range calls {
		tc := map[string]any{"type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}}
		if c.ID != "" {
			tc["id"] = c.ID
		}
		out = append(out, tc)
	}
	return out
}

// OpenAICompletion is a chat completion body.
func OpenAICompletion(text string, calls ...OpenAICall) string {
	msg := map[string]any{"role": "assistant", "content": nil}
	if text != "" {
		msg["content"] = text
	}
	finish := "stop"
	if len(calls) > 0 {
		msg["tool_calls"] = oaToolCalls(calls)
		finish = "tool_calls"
	}
	return JSONText(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
	})
}

// oaStream is a streamed chat completion: the text in pieces, each call's
// arguments in two pieces, the finish, the usage, [DONE]. finish false
// leaves out the finish, the usage and [DONE].
func oaStream(pieces []string, calls []OpenAICall, finish bool) []string {
	chunk := func(delta map[string]any, reason any) string {
		return SSE("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": reason}}})
	}
	out := []string{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	for _, p := range pieces {
		out = append(out, chunk(map[string]any{"content": p}, nil))
	}
	for i, c := range calls {
		args, _ := c.Args.(string)
		head := map[string]any{"index": i, "type": "function", "function": map[string]any{"name": c.Name, "arguments": args[:len(args)/2]}}
		if c.ID != "" {
			head["id"] = c.ID
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
	out = append(out, SSE("", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}))
	return append(out, "data: [DONE]")
}

func oaError(typ, msg string) string {
	return JSONText(map[string]any{"error": map[string]any{"type": typ, "message": msg, "code": nil, "param": nil}})
}
