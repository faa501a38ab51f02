package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// A thread that records a policy of its own (what it was submitted with,
// a person's "always for this thread") is driven by a worker under that
// policy, with what the worker's own flags add to it — as harness resume
// with the same flags decides; the worker's approval (its settings)
// decides only a thread that records none.
func TestAWorkerFollowsTheThreadsPolicy(t *testing.T) {
	srv := natstest.Server(t)
	for _, tc := range []struct {
		name   string
		worker string           // the worker's approval mode (flags and settings)
		policy *facts.PolicySet // the thread's; nil: none
		// The worker's own flags (AmendPolicy).
		approve     string
		allow, deny []string
		// What happens: the lines written, and whether the thread parks on
		// its first call (else it is done).
		lines  map[string]int
		parked bool
		rules  []string // the rules that answered, in order
	}{
		{name: "the thread's policy approves what the worker's asks", worker: "ask", policy: &facts.PolicySet{Approve: "all"},
			lines: map[string]int{"t1 1": 1, "t1 2": 1}, rules: []string{"approve all", "approve all"}},
		{name: "an always for this thread approves", worker: "ask", policy: &facts.PolicySet{Allow: []string{"append_line"}},
			lines: map[string]int{"t1 1": 1, "t1 2": 1}, rules: []string{"allow append_line", "allow append_line"}},
		{name: "the thread's policy asks what the worker's settings approve", worker: "all", policy: &facts.PolicySet{},
			lines: map[string]int{}, parked: true},
		{name: "the worker's --allow adds to the thread's policy", worker: "ask", policy: &facts.PolicySet{}, allow: []string{"append_line"},
			lines: map[string]int{"t1 1": 1, "t1 2": 1}, rules: []string{"allow append_line", "allow append_line"}},
		{name: "the worker's --deny adds to the thread's policy", worker: "ask", policy: &facts.PolicySet{Approve: "all"}, deny: []string{"append_line"},
			lines: map[string]int{}, rules: []string{"deny append_line", "deny append_line"}},
		{name: "the worker's --approve replaces the thread's mode", worker: "all", policy: &facts.PolicySet{Approve: "all"}, approve: "ask",
			lines: map[string]int{}, parked: true},
		{name: "a thread with no policy: the worker's approval", worker: "all",
			lines: map[string]int{"t1 1": 1, "t1 2": 1}, rules: []string{"approve all", "approve all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := newScenario(t, srv.ClientURL(), twoCalls)
			sc.Approve, sc.FlagApprove, sc.FlagAllow, sc.FlagDeny = tc.worker, tc.approve, tc.allow, tc.deny
			store := sc.dial(t)
			ids := submit(t, sc, store, "t", 1)
			if tc.policy != nil {
				// As harness submit records it: after the prompt, before any
				// worker looks.
				actor, cfg, err := sc.parts()
				require.NoError(t, err)
				rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
				require.NoError(t, err)
				p := *tc.policy
				p.By = "ana"
				_, err = drive.SetPolicy(context.Background(), rt.Thread(actor, "t1"), p)
				require.NoError(t, err)
			}
			startWorker(t, sc)
			if tc.parked {
				waitFor(t, sc, store, ids, 20*time.Second, func(st drive.State) bool {
					return st.Status == harness.StatusParked && len(st.Waits) == 1 && st.Waits[0].Kind == fold.WaitConfirmation && st.Waits[0].RequestID == "1-c1"
				})
			} else {
				waitFor(t, sc, store, ids, 20*time.Second, func(st drive.State) bool { return st.Status == harness.StatusDone })
			}
			require.Equal(t, tc.lines, lines(t, sc))
			require.Equal(t, tc.rules, policyRules(t, store, "t1"))
			verifyAll(t, sc, store, ids)
		})
	}
}

// policyRules are the rules of the policy's answers in the thread's log.
func policyRules(t *testing.T, store thread.Store, id string) []string {
	t.Helper()
	var out []string
	for f, err := range store.Read(context.Background(), id, 1) {
		require.NoError(t, err)
		if f.Kind != facts.KindConfirmationAnswered {
			continue
		}
		a, err := facts.Decode[facts.ConfirmationAnswered](f)
		require.NoError(t, err)
		require.Equal(t, drive.PolicyBy, a.By)
		out = append(out, a.Reason)
	}
	return out
}
