package scheduler

import (
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
)

// A sampling turn is a turn of the thread's model an MCP server asked for
// while one of the thread's actions — a call of one of its tools — ran:
// the process that holds the call appends model.sampled under the cause
// SampleCause. The scheduler does not fold it (it is no turn of the
// conversation); it checks only that it belongs to the action that runs.

// SampleCause is the cause of the n-th sampling turn (from 1) of action
// id: a fact of the action's run, appended while it runs.
func SampleCause(actionID string, n int) string {
	return fmt.Sprintf("%s/sample/%d", executeKey(actionID), n)
}

// checkSampled returns why a sampling turn cannot come here: its action
// is not the one its cause names, or is not running.
func (s *state[S]) checkSampled(cause string, p facts.ModelSampled) error {
	id := p.ActionID
	switch {
	case cause != SampleCause(id, p.N):
		return fmt.Errorf("sampling turn %d of action %s under the cause %q, not the action's", p.N, id, cause)
	case !s.running(id):
		return fmt.Errorf("a sampling turn of action %s, which is not running", id)
	}
	return nil
}
