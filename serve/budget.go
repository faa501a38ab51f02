package serve

import (
	"context"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// A raise of a tree's budget, from the page's form or the API's answer
// of kind budget: {"kind": "budget", "request_id": "budget", "usd": 5,
// "tokens": 200000, "turns": 10} (turns: the root's bound in model turns). The budget is the tree's, so the raise is posted to
// the tree's root whichever thread of it the request names (a child's
// page answers for its root), as the person the token names; the root is
// resumed afterwards unless "resume" is false.

// formBudget reads the amounts of the page's raise form: blank is none,
// anything else a number ≥ 0.
func formBudget(f url.Values, a AnswerRequest) (AnswerRequest, error) {
	if v := strings.TrimSpace(f.Get("usd")); v != "" {
		usd, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		if err != nil || math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 {
			return a, badRequest("usd %q: want US dollars ≥ 0", v)
		}
		a.USD = usd
	}
	if v := strings.TrimSpace(f.Get("tokens")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return a, badRequest("tokens %q: want a whole number of tokens ≥ 0", v)
		}
		a.Tokens = n
	}
	if v := strings.TrimSpace(f.Get("turns")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return a, badRequest("turns %q: want a whole number of model turns ≥ 0", v)
		}
		a.Turns = n
	}
	return a, nil
}

// budgetReply is the reply an answer of kind budget gives: a raise by
// the amounts, which must add something.
func budgetReply(a AnswerRequest, r drive.Reply) (drive.Reply, error) {
	r.USD, r.Tokens, r.Turns = a.USD, a.Tokens, a.Turns
	if err := (facts.BudgetRaised{Add: r.Raise()}).Validate(); err != nil {
		return r, badRequest("a budget is raised by an amount (usd, tokens, turns): %v", err)
	}
	return r, nil
}

// answerRoot is the thread an answer to id is posted to: the root of
// id's tree for a raise of its budget, else id.
func (s *Server) answerRoot(ctx context.Context, id string, a AnswerRequest) (string, error) {
	if a.Kind != fold.WaitBudget {
		return id, nil
	}
	return harness.RootOf(ctx, s.store, id)
}
