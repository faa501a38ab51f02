package openai_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/model"
)

// TestProvider runs the suite every provider passes.
func TestProvider(t *testing.T) { providertest.Run(t, providertest.OpenAI) }

// BenchmarkProviderTurn: see providertest.Bench.
func BenchmarkProviderTurn(b *testing.B) { providertest.Bench(b, providertest.OpenAI) }

// TestDecisionQuirks: what OpenAI-compatible servers send that OpenAI
// does not.
func TestDecisionQuirks(t *testing.T) {
	tests := []struct {
		name  string
		reply providertest.Reply
		want  model.Decision
	}{
		{"arguments as a JSON object instead of a string", providertest.Reply{Body: providertest.OpenAICompletion("", providertest.OpenAICall{ID: "c1", Name: "write_file", Args: map[string]any{"path": "a.toml"}})},
			model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path":"a.toml"}`}}}},
		{"malformed arguments are kept as written", providertest.Reply{Body: providertest.OpenAICompletion("", providertest.OpenAICall{ID: "c1", Name: "write_file", Args: `{"path": "a.toml"`})},
			model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path": "a.toml"`}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { providertest.CheckDecision(t, providertest.OpenAI, tc.reply, tc.want) })
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
	f := providertest.NewFake(t, providertest.OpenAI.Path, providertest.Reply{Events: []string{
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
	d, err := providertest.OpenAI.Open(t, f).Stream(context.Background(), providertest.SimpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, []facts.ToolCall{
		{ID: "a", Name: "write_file", Args: `{"path":"a.toml"}`},
		{ID: "b", Name: "write_file", Args: `{"path":"b.toml"}`},
	}, d.ToolCalls)
}
