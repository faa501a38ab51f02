package providertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/anthropic"
)

// Anthropic is the Anthropic provider's side of the shared suite: the messages API
// at /v1/messages.
var Anthropic = Provider{
	Name: "anthropic", Path: "/v1/messages", KeyVar: "ANTHROPIC_API_KEY",
	Open: func(t testing.TB, f *Fake, opts ...model.Option) model.Streamer {
		m, err := anthropic.New("claude-test", append([]model.Option{
			model.WithBaseURL(f.Server.URL), model.WithAPIKey("test-key"), model.WithHTTPClient(f.Server.Client()),
		}, opts...)...)
		require.NoError(t, err)
		return m
	},
	Text: func(text string) Reply { return Reply{Body: AnthropicMessage(text)} },
	Calls: func(text string, calls ...[3]string) Reply {
		var cs []AnthropicCall
		for _, c := range calls {
			cs = append(cs, AnthropicCall{ID: c[0], Name: c[1], Input: json.RawMessage(c[2])})
		}
		return Reply{Body: AnthropicMessage(text, cs...)}
	},
	Stream: func(pieces []string, complete bool, calls ...[3]string) Reply {
		var cs []AnthropicCall
		for _, c := range calls {
			cs = append(cs, AnthropicCall{ID: c[0], Name: c[1], Input: c[2]})
		}
		return Reply{Events: anStream(pieces, cs, complete)}
	},
	ErrBody:  anError,
	ErrEvent: func(typ, msg string) string { return "event: error\ndata: " + anError(typ, msg) },
	Cut: func(r Reply) Reply {
		rp := strings.NewReplacer(`"stop_reason":"end_turn"`, `"stop_reason":"max_tokens"`, `"stop_reason":"tool_use"`, `"stop_reason":"max_tokens"`)
		r.Body = rp.Replace(r.Body)
		for i, e := range r.Events {
			r.Events[i] = rp.Replace(e)
		}
		return r
	},
	Overflow: []Reply{
		{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210344 tokens > 200000 maximum"}}`},
		{Status: 413, Body: `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`},
	},
	Usage:             facts.Usage{InputTokens: 23, OutputTokens: 7, CacheReadTokens: 3},
	LastCallAndResult: anthropicCallAndResult,
}

// anthropicCallAndResult reads a request's last tool call and tool result.
func anthropicCallAndResult(t *testing.T, body map[string]any) (callID, resultID, result string) {
	t.Helper()
	for _, m := range body["messages"].([]any) {
		msg := m.(map[string]any)
		content, ok := msg["content"].([]any)
		if !ok {
			continue
		}
		for _, b := range content {
			block := b.(map[string]any)
			switch block["type"] {
			case "tool_use":
				callID = block["id"].(string)
			case "tool_result":
				resultID = block["tool_use_id"].(string)
				result = JSONText(block["content"])
			}
		}
	}
	return callID, resultID, result
}

// --- the messages API, as the fake server speaks it ---

// AnthropicCall is a tool_use block of a message the fake server sends.
type AnthropicCall struct {
	ID, Name string
	Input    any // an object, or a string holding JSON
}

func anContent(text string, calls []AnthropicCall) []any {
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, c := range calls {
		b := map[string]any{"type": "tool_use", "name": c.Name, "input": c.Input}
		if c.ID != "" {
			b["id"] = c.ID
		}
		content = append(content, b)
	}
	if content == nil {
		content = []any{}
	}
	return content
}

// AnthropicMessage is a messages API body.
func AnthropicMessage(text string, calls ...AnthropicCall) string {
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	return JSONText(map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": anContent(text, calls), "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 20, "output_tokens": 7, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 0},
	})
}

// anStream is a streamed message: text in pieces, each call's input JSON in
// two pieces, message_stop. stop false leaves out message_delta and
// message_stop.
func anStream(pieces []string, calls []AnthropicCall, stop bool) []string {
	out := []string{
		SSE("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 20, "output_tokens": 1}}}),
		"event: ping\ndata: {\"type\": \"ping\"}",
	}
	idx := 0
	if len(pieces) > 0 {
		out = append(out, SSE("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, p := range pieces {
			out = append(out, SSE("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": p}}))
		}
		out = append(out, SSE("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	for _, c := range calls {
		in, _ := c.Input.(string)
		out = append(out, SSE("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}}))
		for _, part := range []string{in[:len(in)/2], in[len(in)/2:]} {
			out = append(out, SSE("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}}))
		}
		out = append(out, SSE("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
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
		SSE("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 9}}),
		SSE("message_stop", map[string]any{"type": "message_stop"}))
}

func anError(typ, msg string) string {
	return JSONText(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}
