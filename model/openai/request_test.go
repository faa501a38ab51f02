package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/model"
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
	p := providertest.OpenAI
	f := providertest.NewFake(t, p.Path, p.Text("ok"))
	_, err := p.Open(t, f).Turn(context.Background(), providertest.Conversation())
	require.NoError(t, err)
	require.Equal(t, "Bearer test-key", f.Header(0).Get("Authorization"))
	body := f.Request(t, 0)
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
		{"type": "function", "function": {"name": "ask_person", "description": `+providertest.JSONText(model.AskSchema().Description)+`, "parameters": `+string(model.AskSchema().Schema)+`}}
	]`), body["tools"])
}
