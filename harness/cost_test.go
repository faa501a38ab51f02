package harness_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/model"
)

// withUsage is body (a provider's JSON answer) with its usage replaced.
func withUsage(t *testing.T, body string, usage map[string]any) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	m["usage"] = usage
	return providertest.JSONText(m)
}

// A model turn records what it cost by the price table, cached input
// priced apart, as each provider counts it: OpenAI's cached_tokens are
// part of prompt_tokens; Anthropic's cache reads and writes come beside
// input_tokens. The recorded cost is the table's arithmetic, with the
// table's version; a model the table does not price records tokens only;
// the budget's view totals the costs.
func TestModelTurnCost(t *testing.T) {
	price := model.Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}
	for _, c := range []struct {
		p        providertest.Provider
		spec     string
		usage    map[string]any
		want     facts.Usage
		plainIn  int64
		priced   bool
		tableKey string
	}{
		{providertest.OpenAI, "openai:gpt-test", map[string]any{"prompt_tokens": 1200, "completion_tokens": 50, "total_tokens": 1250,
			"prompt_tokens_details": map[string]any{"cached_tokens": 1000}},
			facts.Usage{InputTokens: 1200, OutputTokens: 50, CacheReadTokens: 1000}, 200, true, "openai:gpt-test"},
		{providertest.Anthropic, "anthropic:claude-test-20250101", map[string]any{"input_tokens": 100, "output_tokens": 50,
			"cache_read_input_tokens": 1000, "cache_creation_input_tokens": 200},
			facts.Usage{InputTokens: 1300, OutputTokens: 50, CacheReadTokens: 1000, CacheWriteTokens: 200}, 100, true, "anthropic:claude-test"},
		{providertest.OpenAI, "openai:unknown-model", map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
			facts.Usage{InputTokens: 10, OutputTokens: 5}, 10, false, "openai:gpt-test"},
	} {
		t.Run(c.spec, func(t *testing.T) {
			body := c.p.Text("Done.").Body
			f := providertest.NewFake(t, c.p.Path, providertest.Reply{Body: withUsage(t, body, c.usage)})
			prices := model.DefaultPrices().With("test", map[string]model.Price{c.tableKey: price})
			r := newRun(t, c.p.Open(t, f), harness.WithModelName(c.spec), func(c *harness.Config) { p := prices; c.Prices = &p })
			out, err := r.rt.Start(context.Background(), r.actor, "t", "Say done")
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status, out.Reason)
			var mt facts.ModelTurn
			for _, fact := range r.facts("t") {
				if fact.Kind == facts.KindModelTurn {
					mt, err = facts.Decode[facts.ModelTurn](fact)
					require.NoError(t, err)
				}
			}
			require.Equal(t, c.want, mt.Usage, "the usage as the provider counted it, cached tokens apart")
			th, err := r.rt.Open(context.Background(), r.actor, "t")
			require.NoError(t, err)
			v, err := th.View(context.Background())
			require.NoError(t, err)
			if !c.priced {
				require.Nil(t, mt.Cost, "an unknown model: tokens only")
				require.Equal(t, 1, v.Budget.Unpriced)
				require.Zero(t, v.Budget.USD)
				return
			}
			u := c.want
			want := (float64(c.plainIn)*3 + float64(u.CacheReadTokens)*0.30 + float64(u.CacheWriteTokens)*3.75 + float64(u.OutputTokens)*15) / 1e6
			require.NotNil(t, mt.Cost)
			require.InDelta(t, want, mt.Cost.USD, 1e-12)
			require.Equal(t, model.PricesVersion+"+test", mt.Cost.Table)
			require.InDelta(t, want, v.Budget.USD, 1e-12)
			require.Equal(t, []string{model.PricesVersion + "+test"}, v.Budget.Tables)
		})
	}
}
