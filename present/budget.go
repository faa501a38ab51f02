package present

import (
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// describeBudget says a budget.set, budget.raised or budget.shared.
func describeBudget(f facts.Fact) (string, error) {
	switch f.Kind {
	case facts.KindBudgetSet:
		p, err := facts.Decode[facts.BudgetSet](f)
		s := "tree budget " + SayBudget(p.Limit)
		if p.By != "" {
			s += " by " + p.By
		}
		if p.Source != "" {
			s += " (" + p.Source + ")"
		}
		return s, err
	case facts.KindBudgetRaised:
		p, err := facts.Decode[facts.BudgetRaised](f)
		s := "tree budget raised by " + SayBudget(p.Add)
		if p.By != "" {
			s += " by " + p.By
		}
		return s, err
	default:
		p, err := facts.Decode[facts.BudgetShared](f)
		return fmt.Sprintf("tree budget %s of %s; the rest of the tree spent %s", SayBudget(p.Limit), p.Root, SayBudget(p.Elsewhere)), err
	}
}

// SayBudget says an amount of money, tokens and model turns; "none" for no amount.
func SayBudget(s facts.Spend) string {
	var parts []string
	if s.USD != 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", s.USD))
	}
	if s.Tokens != 0 {
		parts = append(parts, Plural(s.Tokens, "token", "tokens"))
	}
	if s.Turns != 0 {
		parts = append(parts, Plural(s.Turns, "model turn", "model turns"))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
