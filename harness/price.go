package harness

import (
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// priced is what a model turn (or a compaction turn) that answered d
// cost by cfg.Prices, priced by the model that ran it — d.Model, when the
// service says, else the thread's recorded one — and that model's spec
// when it is not the recorded one ("" when it is). No table, or a model
// the table does not price, is no cost.
func priced(cfg Config, recorded string, d model.Decision) (*facts.TurnCost, string) {
	spec, ran := recorded, ""
	if d.Model != "" && d.Model != recorded {
		spec, ran = d.Model, d.Model
	}
	if cfg.Prices == nil {
		return nil, ran
	}
	if c, ok := cfg.Prices.Cost(spec, d.Usage); ok {
		return &c, ran
	}
	return nil, ran
}

// reserve is what system.configured records of how the thread's budget
// reserves a model turn (facts.BudgetReserve): the input price of the
// thread's model by cfg.Prices, when it has one.
func (cfg Config) reserve() *facts.BudgetReserve {
	if cfg.noReserve {
		return nil
	}
	r := &facts.BudgetReserve{}
	if !cfg.noTurnsWait {
		r.Turns, r.MaxTurns = true, cfg.MaxTurns
	}
	if cfg.Prices == nil {
		return r
	}
	if pr, ok := cfg.Prices.Lookup(cfg.ModelName); ok {
		r.Priced, r.InputUSD, r.Table = true, pr.Input, cfg.Prices.Version
	}
	return r
}
