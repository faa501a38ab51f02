package model

import (
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// Price is a model's price in US dollars per million tokens: input,
// output, and input read from or written to the provider's prompt cache.
// A cache price of 0 is the input price (a provider that charges nothing
// apart for it).
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read,omitempty"`
	CacheWrite float64 `json:"cache_write,omitempty"`
}

// Prices is a price table: prices by model spec ("openai:gpt-4o",
// "anthropic:claude-sonnet-4-5"), under a version that each turn priced
// by it records.
type Prices struct {
	Version string
	Models  map[string]Price
}

// PricesVersion names the table DefaultPrices returns: the providers'
// public list prices (standard tier, no batch discount) as of November
// 2025.
const PricesVersion = "harness-2025-11"

// DefaultPrices is the table harness ships: the providers' common
// models at their list prices (PricesVersion). A person's settings
// override it model by model (With).
func DefaultPrices() Prices {
	return Prices{Version: PricesVersion, Models: map[string]Price{
		"openai:gpt-5":                {Input: 1.25, Output: 10, CacheRead: 0.125},
		"openai:gpt-5-mini":           {Input: 0.25, Output: 2, CacheRead: 0.025},
		"openai:gpt-5-nano":           {Input: 0.05, Output: 0.40, CacheRead: 0.005},
		"openai:gpt-4.1":              {Input: 2, Output: 8, CacheRead: 0.50},
		"openai:gpt-4.1-mini":         {Input: 0.40, Output: 1.60, CacheRead: 0.10},
		"openai:gpt-4.1-nano":         {Input: 0.10, Output: 0.40, CacheRead: 0.025},
		"openai:gpt-4o":               {Input: 2.50, Output: 10, CacheRead: 1.25},
		"openai:gpt-4o-mini":          {Input: 0.15, Output: 0.60, CacheRead: 0.075},
		"openai:o3":                   {Input: 2, Output: 8, CacheRead: 0.50},
		"openai:o4-mini":              {Input: 1.10, Output: 4.40, CacheRead: 0.275},
		"anthropic:claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
		"anthropic:claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
		"anthropic:claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
		"anthropic:claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"anthropic:claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"anthropic:claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"anthropic:claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25},
		"anthropic:claude-3-5-haiku":  {Input: 0.80, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	}}
}

// With returns the table with the prices of over in place of its own,
// model by model, under a version that names both (version is the
// overriding table's, e.g. "user:" and its digest). No override is the
// table itself.
func (p Prices) With(version string, over map[string]Price) Prices {
	if len(over) == 0 {
		return p
	}
	out := Prices{Version: p.Version + "+" + version, Models: make(map[string]Price, len(p.Models)+len(over))}
	for k, v := range p.Models {
		out.Models[k] = v
	}
	for k, v := range over {
		out.Models[k] = v
	}
	return out
}

// Lookup returns the price of the model spec: its own, or that of the
// longest spec in the table it extends with a dated or tagged suffix
// ("anthropic:claude-sonnet-4-5-20250929" is priced as
// "anthropic:claude-sonnet-4-5").
func (p Prices) Lookup(spec string) (Price, bool) {
	if pr, ok := p.Models[spec]; ok {
		return pr, true
	}
	best, found := "", false
	for k := range p.Models {
		if strings.HasPrefix(spec, k+"-") && len(k) > len(best) {
			best, found = k, true
		}
	}
	if !found {
		return Price{}, false
	}
	return p.Models[best], true
}

// Cost is what usage costs by the price of the model spec, and false
// when the table does not price it. Cached input is priced apart from
// the rest of the input (Usage.InputTokens holds it).
func (p Prices) Cost(spec string, u facts.Usage) (facts.TurnCost, bool) {
	pr, ok := p.Lookup(spec)
	if !ok {
		return facts.TurnCost{}, false
	}
	return facts.TurnCost{USD: pr.Of(u), Table: p.Version}, true
}

// Of is what usage costs at this price, in US dollars.
func (pr Price) Of(u facts.Usage) float64 {
	read, write := pr.CacheRead, pr.CacheWrite
	if read == 0 {
		read = pr.Input
	}
	if write == 0 {
		write = pr.Input
	}
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return (float64(plain)*pr.Input + float64(u.CacheReadTokens)*read + float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*pr.Output) / 1e6
}
