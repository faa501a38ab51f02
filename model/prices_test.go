package model_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// A price table prices a model by its spec, or by the longest spec in
// the table that a dated or tagged name extends; a person's prices
// replace the shipped ones model by model, and the version says so.
func TestPrices(t *testing.T) {
	p := model.DefaultPrices()
	sonnet, ok := p.Lookup("anthropic:claude-sonnet-4-5")
	require.True(t, ok)
	dated, ok := p.Lookup("anthropic:claude-sonnet-4-5-20250929")
	require.True(t, ok)
	require.Equal(t, sonnet, dated)
	mini, ok := p.Lookup("openai:gpt-4o-mini-2024-07-18")
	require.True(t, ok, "the longest spec it extends: gpt-4o-mini, not gpt-4o")
	require.Equal(t, p.Models["openai:gpt-4o-mini"], mini)
	_, ok = p.Lookup("openai:gpt-4o2")
	require.False(t, ok, "a name that only starts like one is not that model")
	_, ok = p.Lookup("scripted:x.jsonl")
	require.False(t, ok)

	over := p.With("user:abc", map[string]model.Price{"openai:gpt-4o": {Input: 1, Output: 2}})
	require.Equal(t, model.PricesVersion+"+user:abc", over.Version)
	require.Equal(t, model.PricesVersion, p.Version, "the shipped table is left as it was")
	c, ok := over.Cost("openai:gpt-4o", facts.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadTokens: 500_000})
	require.True(t, ok)
	require.InDelta(t, 0.5*1+0.5*1+2, c.USD, 1e-12, "no cache price: cached input at the input price")
	require.Equal(t, over.Version, c.Table)
}
