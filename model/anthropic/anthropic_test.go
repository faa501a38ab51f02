package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/anthropic"
	"github.com/seed-7cc7a084/harness/model/internal/providertest"
)

// provider is this package's side of the shared suite: the messages API
// at /v1/messages.
var provider = providertest.Provider{
	Name: "anthropic", Path: "/v1/messages", KeyVar: "ANTHROPIC_API_KEY",
	Open: func(t testing.TB, f *providertest.Fake, opts ...model.Option) model.Streamer {
		m, err := anthropic.New("claude-test", append([]model.Option{
			model.WithBaseURL(f.Server.URL), model.WithAPIKey("test-key"), model.WithHTTPClient(f.Server.Client()),
		}, opts...)...)
		require.NoError(t, err)
		return m
	},
	Text: func(text string) providertest.Reply { return providertest.Reply{Body: anMessage(text)} },
	Calls: func(text string, calls ...[3]string) providertest.Reply {
		var cs []anCall
		for _, c := range calls {
			cs = append(cs, anCall{id: c[0], name: c[1], input: json.RawMessage(c[2])})
		}
		return providertest.Reply{Body: anMessage(text, cs...)}
	},
	Stream: func(pieces []string, complete bool, calls ...[3]string) providertest.Reply {
		var cs []anCall
		for _, c := range calls {
			cs = append(cs, anCall{id: c[0], name: c[1], input: c[2]})
		}
		return providertest.Reply{Events: anStream(pieces, cs, complete)}
	},
	ErrBody:  anError,
	ErrEvent: func(typ, msg string) string { return "event: error\ndata: " + anError(typ, msg) },
	Cut: func(r providertest.Reply) providertest.Reply {
		rp := strings.NewReplacer(`"stop_reason":"end_turn"`, `"stop_reason":"max_tokens"`, `"stop_reason":"tool_use"`, `"stop_reason":"max_tokens"`)
		r.Body = rp.Replace(r.Body)
		for i, e := range r.Events {
			r.Events[i] = rp.Replace(e)
		}
		return r
	},
	Usage:             facts.Usage{InputTokens: 23, OutputTokens: 7},
	LastCallAndResult: lastCallAndResult,
}

// TestProvider runs the suite every provider passes.
func TestProvider(t *testing.T) { providertest.Run(t, provider) }

// BenchmarkProviderTurn: see providertest.Bench.
func BenchmarkProviderTurn(b *testing.B) { providertest.Bench(b, provider) }

// TestDecisionQuirks: what servers send that the API does not.
func TestDecisionQuirks(t *testing.T) {
	providertest.CheckDecision(t, provider,
		providertest.Reply{Body: anMessage("", anCall{id: "c1", name: "write_file", input: `{"path":"a.toml"}`})},
		model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path":"a.toml"}`}}})
}

// lastCallAndResult reads a request's last tool call and tool result.
func lastCallAndResult(t *testing.T, body map[string]any) (callID, resultID, result string) {
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
				result = providertest.JSONText(block["content"])
			}
		}
	}
	return callID, resultID, result
}

// --- the messages API, as the fake server speaks it ---

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
	return providertest.JSONText(map[string]any{
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
		providertest.SSE("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 20, "output_tokens": 1}}}),
		"event: ping\ndata: {\"type\": \"ping\"}",
	}
	idx := 0
	if len(pieces) > 0 {
		out = append(out, providertest.SSE("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, p := range pieces {
			out = append(out, providertest.SSE("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": p}}))
		}
		out = append(out, providertest.SSE("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	for _, c := range calls {
		in, _ := c.input.(string)
		out = append(out, providertest.SSE("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": map[string]any{}}}))
		for _, part := range []string{in[:len(in)/2], in[len(in)/2:]} {
			out = append(out, providertest.SSE("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}}))
		}
		out = append(out, providertest.SSE("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}))
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
		providertest.SSE("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 9}}),
		providertest.SSE("message_stop", map[string]any{"type": "message_stop"}))
}

func anError(typ, msg string) string {
	return providertest.JSONText(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}
