package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// A retry runs what was approved: in the sandbox its first attempt was
// requested (and approved) in, not the one the thread would give a new
// call now — a command a person let run read-only in plan mode is not run
// again writable after plan mode ended.
func TestRetryKeepsTheApprovedSandbox(t *testing.T) {
	e := env()
	e.Policy = func(facts.ToolCall) scheduler.Policy {
		return scheduler.Policy{Confirm: true, Capability: action.Execute}
	}
	e.Sandbox = func(facts.ToolCall) *facts.Sandbox { return &facts.Sandbox{Mode: "workspace-write"} }
	var log []facts.Fact
	add := func(kind facts.Kind, cause string, payload any) {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(t, err)
		log = append(log, facts.Fact{Thread: "t", Seq: uint64(len(log) + 1), Kind: kind, Cause: cause, Data: d.Data, At: time.Unix(1, 0).UTC()})
	}
	args := `{"command":"make"}`
	add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "plan"})
	add(facts.KindModelTurn, "infer/turn/1", facts.ModelTurn{Turn: 1, ToolCalls: []facts.ToolCall{{ID: "c", Name: "run_command", Args: args}}})
	add(facts.KindActionRequested, "tool/request/1-c", facts.ActionRequested{ActionID: "1-c", Capability: "execute", Payload: facts.RawJSON(args),
		Adapter: "run_command", Confirm: true, Sandbox: &facts.Sandbox{Mode: "read-only"}})
	add(facts.KindConfirmationRequested, "confirm/1-c", facts.ConfirmationRequested{RequestID: "1-c", CallID: "1-c", Tool: "run_command", Args: args, Digest: scheduler.Digest("run_command", args)})
	add(facts.KindConfirmationAnswered, "ingress/confirm-1-c", facts.ConfirmationAnswered{RequestID: "1-c", Approved: true, By: "ana", Digest: scheduler.Digest("run_command", args)})
	add(facts.KindActionStarted, "tool/start/1-c", facts.ActionStarted{ActionID: "1-c", ObservedBefore: "h0"})
	add(facts.KindActionInterrupted, "tool/recover/1-c", facts.ActionInterrupted{ActionID: "1-c", ObservedBefore: "h0", ObservedNow: "h1"})
	add(facts.KindEffectReconciled, "ingress/reconcile-1-c", facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionRetry, By: "ana"})

	s := scheduler.New(e)
	for _, f := range log {
		require.NoError(t, s.Step(f))
	}
	out := s.Output()
	require.Len(t, out.Transitions, 1)
	require.Equal(t, "tool/request/1-c.2", out.Transitions[0].Key)
	ex := effect.Run(t.Context(), out.Transitions[0].Effect, S{})
	require.True(t, ex.IsSuccess(), "%v", ex)
	drafts, _ := ex.Value()
	require.NotEmpty(t, drafts)
	req := decodeDraft[facts.ActionRequested](t, drafts[0])
	require.NotNil(t, req.Sandbox)
	require.Equal(t, "read-only", req.Sandbox.Mode, "the retry runs in the sandbox that was approved")
}
