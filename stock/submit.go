package stock

import (
	"context"

	"github.com/seed-7cc7a084/harness/facts"
)

// SubmitThread starts a thread with prompt for the workers and runs
// nothing (Submit), recording as its own, in the same append, the policy
// a thread started by the session starts with (Policy(by)) — when there
// is one to record, or given says the command named a rule — so that the
// workers decide its confirmations by it, as run records it. A rule that
// does not parse wraps ErrBadSettings, and nothing is recorded.
func (s *Session) SubmitThread(ctx context.Context, id, prompt, by string, given bool) (string, uint64, error) {
	pol, ok, err := s.Policy(by)
	if err != nil {
		return "", 0, err
	}
	var own *facts.PolicySet
	if ok || given {
		own = &pol
	}
	return s.Submit(ctx, id, prompt, own)
}
