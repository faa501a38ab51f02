package model_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// conversation is a thread's conversation after two tool calls, a person's
// message posted while they waited, and their results.
func conversation() model.Request {
	return model.Request{Turn: 2, System: "Be careful.", Tools: []facts.ToolSchema{writeSchema, {Name: "list_files"}},
		Messages: []facts.Message{
			{Role: facts.RoleUser, Text: "Set the TTL to 300."},
			{Role: facts.RoleAssistant, Text: "Writing both.", ToolCalls: []facts.ToolCall{
				{ID: "call_1", Name: "write_file", Args: `{"path":"a.toml","content":"ttl = 300"}`},
				{ID: "call-2'", Name: "write_file", Args: `{"path": "b.toml"`},
			}},
			{Role: facts.RoleUser, Text: "And keep comments."},
			{Role: facts.RoleTool, ToolCallID: "call_1", Text: "succeeded"},
			{Role: facts.RoleTool, ToolCallID: "call-2'", Text: "the arguments are not valid JSON"},
		}}
}

// roundTrip decodes JSON text into plain Go values, for comparing.
func roundTrip(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func TestOpenAIRequest(t *testing.T) {
	p := providers[0]
	f := newFake(t, p.path, p.text("ok"))
	_, err := p.open(t, f).Turn(context.Background(), conversation())
	require.NoError(t, err)
	require.Equal(t, "Bearer test-key", f.header(0).Get("Authorization"))
	body := f.request(t, 0)
	require.Equal(t, "gpt-test", body["model"])
	require.NotContains(t, body, "stream")
	require.Equal(t, roundTrip(t, `[
		{"role": "system", "content": "Be careful."},
		{"role": "user", "content": "Set the TTL to 300."},
		{"role": "assistant", "content": "Writing both.", "tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\":\"a.toml\",\"content\":\"ttl = 300\"}"}},
			{"id": "call-2'", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"b.toml\""}}
		]},
		{"role": "tool", "tool_call_id": "call_1", "content": "succeeded"},
		{"role": "tool", "tool_call_id": "call-2'", "content": "the arguments are not valid JSON"},
		{"role": "user", "content": "And keep comments."}
	]`), body["messages"], "each call's result follows it; the person's message after")
	require.Equal(t, roundTrip(t, `[
		{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters":
			{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}}},
		{"type": "function", "function": {"name": "list_files", "parameters": {"type": "object", "properties": {}}}},
		{"type": "function", "function": {"name": "ask_person", "description": `+jsonText(model.AskSchema().Description)+`, "parameters": `+string(model.AskSchema().Schema)+`}}
	]`), body["tools"])
}

func TestAnthropicRequest(t *testing.T) {
	p := providers[1]
	f := newFake(t, p.path, p.text("ok"))
	_, err := p.open(t, f).Turn(context.Background(), conversation())
	require.NoError(t, err)
	require.Equal(t, "Bearer test-key", f.header(0).Get("Authorization"), "this SDK sends the key as a bearer token")
	require.NotEmpty(t, f.header(0).Get("Anthropic-Version"))
	body := f.request(t, 0)
	require.Equal(t, "claude-test", body["model"])
	require.EqualValues(t, model.DefaultAnthropicMaxTokens, body["max_tokens"])
	require.Equal(t, roundTrip(t, `[{"type": "text", "text": "Be careful."}]`), body["system"])
	require.Equal(t, roundTrip(t, `[
		{"role": "user", "content": [{"type": "text", "text": "Set the TTL to 300."}]},
		{"role": "assistant", "content": [
			{"type": "text", "text": "Writing both."},
			{"type": "tool_use", "id": "call_1", "name": "write_file", "input": {"path":"a.toml","content":"ttl = 300"}},
			{"type": "tool_use", "id": "call-2_", "name": "write_file", "input": {}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "succeeded"}], "is_error": false},
			{"type": "tool_result", "tool_use_id": "call-2_", "content": [{"type": "text", "text": "the arguments are not valid JSON"}], "is_error": false},
			{"type": "text", "text": "And keep comments."}
		]}
	]`), body["messages"], "the results of one message together, first in one user message")
	tools := body["tools"].([]any)
	require.Len(t, tools, 3)
	require.Equal(t, roundTrip(t, `{"name": "write_file", "description": "Write a file.", "input_schema":
		{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}}`), tools[0])
	require.Equal(t, roundTrip(t, `{"name": "list_files", "input_schema": {"type": "object", "properties": {}}}`), tools[1])
	require.Equal(t, model.AskTool, tools[2].(map[string]any)["name"])
}

func TestAskToolOffered(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		names := func(body map[string]any) []string {
			var out []string
			for _, tl := range body["tools"].([]any) {
				m := tl.(map[string]any)
				if fn, ok := m["function"].(map[string]any); ok {
					m = fn
				}
				out = append(out, m["name"].(string))
			}
			return out
		}
		tests := []struct {
			name  string
			tools []facts.ToolSchema
			opts  []model.Option
			want  []string
		}{
			{"offered after the actor's tools", []facts.ToolSchema{writeSchema}, nil, []string{"write_file", model.AskTool}},
			{"offered alone", nil, nil, []string{model.AskTool}},
			{"not offered WithoutAskTool", []facts.ToolSchema{writeSchema}, []model.Option{model.WithoutAskTool()}, []string{"write_file"}},
			{"an actor's own ask_person wins", []facts.ToolSchema{{Name: model.AskTool}}, nil, []string{model.AskTool}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				f := newFake(t, p.path, p.calls("", [3]string{"c1", model.AskTool, `{"text":"Which?"}`}))
				req := simpleRequest()
				req.Tools = tc.tools
				d, err := p.open(t, f, tc.opts...).Turn(context.Background(), req)
				require.NoError(t, err)
				require.Equal(t, tc.want, names(f.request(t, 0)))
				offered := tc.name == "offered after the actor's tools" || tc.name == "offered alone"
				require.Equal(t, offered, d.Question != nil, "a call is a question only when the pseudo-tool was offered")
			})
		}
	})
}
