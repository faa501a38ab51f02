package stock

import (
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"slices"
)

// costOf is a max_cost as a number to compare: 0 is no budget.
func costOf(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// Budget is the tree budget the session's settings give (max_cost,
// max_tokens; see Settings.MaxCost): zero when they give none.
func (s *Session) Budget() facts.Spend {
	st := s.Settings()
	return facts.Spend{USD: costOf(st.MaxCost), Tokens: bound64(st.MaxTokens)}
}

// budgetSource is where the session's budget came from, as budget.set
// records it: "flag" when the last layer that set max_cost or
// max_tokens is the command line, else "settings".
func (s *Session) budgetSource() string {
	src := "settings"
	for _, l := range s.Layered.Sources {
		if slices.ContainsFunc(l.Applied, func(k string) bool { return k == "max_cost" || k == "max_tokens" }) {
			src = "settings"
			if l.Scope == ScopeFlag {
				src = "flag"
			}
		}
	}
	return src
}

// BudgetKey is the idempotency key of the budget.set a thread starts
// with.
const BudgetKey = "budget"

// StartingBudget is the budget.set a thread started by the session
// records with its first message, set by by, when the settings give a
// budget (ok false when they give none).
func (s *Session) StartingBudget(by string) (in harness.Ingress, ok bool, err error) {
	b := s.Budget()
	if b.IsZero() {
		return in, false, nil
	}
	d, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: b, By: by, Source: s.budgetSource()})
	if err != nil {
		return in, false, badSettings(err)
	}
	return harness.Ingress{Draft: d, Key: BudgetKey}, true, nil
}
