package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// The last observation an action is compared with is the whole log's:
// one recorded in an earlier model turn is found by a scheduler that
// stepped every fact and by one restored from a snapshot that holds only
// the latest turn on.
func TestActGetsTheLastObservation(t *testing.T) {
	b := &logBuilder{t: t}
	b.add(facts.KindUserMessage, "ingress/m", facts.UserMessage{Text: "go"})
	b.turn(1, facts.EffectNone) // its completion has no observation: nobody looked
	b.add(facts.KindModelTurn, "infer/turn/2", facts.ModelTurn{Turn: 2,
		ToolCalls: []facts.ToolCall{{ID: "c", Name: "read_file", Args: `{"path":"f2"}`}}})
	b.add(facts.KindActionRequested, "tool/request/2-c", facts.ActionRequested{ActionID: "2-c", Capability: "read", Adapter: "read_file",
		IdempotencyKey: "tool/execute/2-c", Payload: facts.RawJSON(`{"path":"f2"}`)})
	b.add(facts.KindActionStarted, "tool/start/2-c", facts.ActionStarted{ActionID: "2-c", ObservedBefore: "h1", Manifest: "m1"})
	observedAt := b.add(facts.KindActionCompleted, "tool/execute/2-c", facts.ActionCompleted{ActionID: "2-c",
		Report:      facts.Report{Status: facts.StatusSucceeded},
		Observation: facts.Observation{Available: true, Before: "h1", After: "h1", Manifest: "m1"}, EffectState: facts.EffectNone})
	b.add(facts.KindModelTurn, "infer/turn/3", facts.ModelTurn{Turn: 3,
		ToolCalls: []facts.ToolCall{{ID: "c", Name: "read_file", Args: `{"path":"f3"}`}}})
	b.add(facts.KindActionRequested, "tool/request/3-c", facts.ActionRequested{ActionID: "3-c", Capability: "read", Adapter: "read_file",
		IdempotencyKey: "tool/execute/3-c", Payload: facts.RawJSON(`{"path":"f3"}`)})

	since := func(s *scheduler.Scheduler[S], got *action.Observed) {
		t.Helper()
		out := s.Output()
		require.Len(t, out.Transitions, 1)
		require.Equal(t, "tool/execute/3-c", out.Transitions[0].Key)
		out.Transitions[0].Staged(nil)
	}
	env := func(got *action.Observed) scheduler.Env[S] {
		e := dataEnv()
		e.Act = func(_ action.Request, o action.Observed, _ fold.Journal) effect.Effect[S, []facts.Draft] {
			*got = o
			return effect.Succeed[S]([]facts.Draft(nil))
		}
		return e
	}
	want := action.Observed{Seq: observedAt, Hash: "h1", Manifest: "m1"}

	var whole action.Observed
	s := scheduler.New(env(&whole))
	for _, f := range b.log {
		require.NoError(t, s.Step(f))
	}
	since(s, &whole)
	require.Equal(t, want, whole)

	// Restored after the whole log: the snapshot holds turn 3 on only.
	before := scheduler.New(env(new(action.Observed)))
	for _, f := range b.log {
		require.NoError(t, before.Step(f))
	}
	snap, err := before.Snapshot()
	require.NoError(t, err)
	var got action.Observed
	r := scheduler.New(env(&got))
	var reads []uint64
	require.NoError(t, r.Restore(snap, prefix{log: b.log, n: len(b.log), reads: &reads}))
	since(r, &got)
	require.Equal(t, want, got)
	require.Empty(t, reads, "found without reading the log again")
}
