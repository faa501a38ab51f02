package anthropic_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/anthropic"
)

// roundTrip decodes JSON text into plain Go values, for comparing.
func roundTrip(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

// TestRequest: the request a turn sends, byte for byte in JSON.
func TestRequest(t *testing.T) {
	p := providertest.Anthropic
	f := providertest.NewFake(t, p.Path, p.Text("ok"))
	_, err := p.Open(t, f).Turn(context.Background(), providertest.Conversation())
	require.NoError(t, err)
	require.Equal(t, "Bearer test-key", f.Header(0).Get("Authorization"), "this SDK sends the key as a bearer token")
	require.NotEmpty(t, f.Header(0).Get("Anthropic-Version"))
	body := f.Request(t, 0)
	require.Equal(t, "claude-test", body["model"])
	require.EqualValues(t, anthropic.DefaultMaxTokens, body["max_tokens"])
	// Prompt caching: the system prompt (after the tools) and the whole
	// conversation are the cached prefix of the next turn.
	require.Equal(t, roundTrip(t, `[{"type": "text", "text": "Be careful.", "cache_control": {"type": "ephemeral"}}]`), body["system"])
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
			{"type": "text", "text": "And keep comments.", "cache_control": {"type": "ephemeral"}}
		]}
	]`), body["messages"], "the results of one message together, first in one user message; the last block marks the cached prefix")
	tools := body["tools"].([]any)
	require.Len(t, tools, 3)
	require.Equal(t, roundTrip(t, `{"name": "write_file", "description": "Write a file.", "input_schema":
		{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}}`), tools[0])
	require.Equal(t, roundTrip(t, `{"name": "list_files", "input_schema": {"type": "object", "properties": {}}}`), tools[1])
	require.Equal(t, model.AskTool, tools[2].(map[string]any)["name"])
}

// TestToolUseID: a call id the API takes, the same way for a call and its
// result.
func TestToolUseID(t *testing.T) {
	for in, want := range map[string]string{"call_1": "call_1", "call-2'": "call-2_", "": "call", "toolu_01A": "toolu_01A", "a.b/c": "a_b_c"} {
		require.Equal(t, want, anthropic.ToolUseID(in), in)
	}
}
