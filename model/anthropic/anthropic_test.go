package anthropic_test

import (
	"testing"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/model"
)

// TestProvider runs the suite every provider passes.
func TestProvider(t *testing.T) { providertest.Run(t, providertest.Anthropic) }

// BenchmarkProviderTurn: see providertest.Bench.
func BenchmarkProviderTurn(b *testing.B) { providertest.Bench(b, providertest.Anthropic) }

// TestDecisionQuirks: what servers send that the API does not.
func TestDecisionQuirks(t *testing.T) {
	providertest.CheckDecision(t, providertest.Anthropic,
		providertest.Reply{Body: providertest.AnthropicMessage("", providertest.AnthropicCall{ID: "c1", Name: "write_file", Input: `{"path":"a.toml"}`})},
		model.Decision{ToolCalls: []facts.ToolCall{{ID: "c1", Name: "write_file", Args: `{"path":"a.toml"}`}}})
}
