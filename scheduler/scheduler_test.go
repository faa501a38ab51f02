package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

type S = struct{}

func env() scheduler.Env[S] {
	return scheduler.Env[S]{
		Infer: func(scheduler.Request) effect.Effect[S, facts.ModelTurn] {
			return effect.Succeed[S](facts.ModelTurn{Text: "ok"})
		},
		Policy: func(facts.ToolCall) scheduler.Policy {
			return scheduler.Policy{Confirm: true, Capability: action.Write}
		},
		Actor: "actor",
	}
}

// thread builds a log: two turns, each a confirmed write; the first ran,
// the second waits for its confirmation.
func thread(t *testing.T, damageFirstTurn bool) []facts.Fact {
	t.Helper()
	var out []facts.Fact
	add := func(kind facts.Kind, cause string, payload any) {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(t, err)
		out = append(out, facts.Fact{Thread: "t", Seq: uint64(len(out) + 1), Kind: kind, Cause: cause, Data: d.Data, At: time.Unix(1, 0).UTC()})
	}
	call := func(turn int) {
		ref := map[int]string{1: "1-c", 2: "2-c"}[turn]
		add(facts.KindModelTurn, map[int]string{1: "infer/turn/1", 2: "infer/turn/2"}[turn],
			facts.ModelTurn{Turn: turn, ToolCalls: []facts.ToolCall{{ID: "c", Name: "write_file", Args: "{}"}}})
		add(facts.KindActionRequested, "tool/request/"+ref, facts.ActionRequested{ActionID: ref, Capability: "write", Confirm: true, Payload: facts.RawJSON("{}"), Adapter: "write_file"})
		add(facts.KindConfirmationRequested, "confirm/"+ref, facts.ConfirmationRequested{RequestID: ref, CallID: ref, Tool: "write_file", Args: "{}"})
	}
	add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "write twice"})
	call(1)
	add(facts.KindConfirmationAnswered, "ingress/a1", facts.ConfirmationAnswered{RequestID: "1-c", Approved: true})
	add(facts.KindActionStarted, "tool/start/1-c", facts.ActionStarted{ActionID: "1-c"})
	add(facts.KindActionCompleted, "tool/execute/1-c", facts.ActionCompleted{ActionID: "1-c", Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectReported})
	if damageFirstTurn {
		out[len(out)-1].Data = []byte{0xc1} // never a msgpack value
	}
	call(2)
	return out
}

func TestOutputFoldsOnlyTheLatestTurn(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		s := scheduler.New(env())
		for _, f := range thread(t, damaged) {
			require.NoError(t, s.Step(f), "stepping decodes nothing")
		}
		out := s.Output()
		require.Nil(t, out.Stop, "a damaged fact of an earlier turn is not read to say what waits now")
		require.Equal(t, []fold.Wait{{Kind: fold.WaitConfirmation, RequestID: "2-c", Summary: "run write_file {}"}}, out.Waits)
		v := out.View.(scheduler.View)
		require.Equal(t, scheduler.PhaseConfirm, v.Phase)
		require.Equal(t, 2, v.Turns)

		// An answer is checked against the whole log: the first turn's
		// request was answered.
		d, err := facts.NewDraft(facts.KindConfirmationAnswered, "ingress/x", facts.ConfirmationAnswered{RequestID: "1-c", Approved: true})
		require.NoError(t, err)
		err = s.Accept(d)
		if damaged {
			require.ErrorContains(t, err, "seq 7", "the damage is named when the whole log is read")
			require.NotNil(t, s.Output().Stop)
			continue
		}
		require.ErrorIs(t, err, scheduler.ErrAnswered)
		msgs := s.Messages()
		require.Len(t, msgs, 4, "user, turn 1, its result, turn 2")
	}
}

// A model turn's request is the conversation where it was projected, the
// model's own copy: what is folded after, and what the model does to its
// messages, change neither that request nor the fold's conversation.
func TestTurnRequestIsTheConversationAtItsProjection(t *testing.T) {
	var got []scheduler.Request
	var saw []string
	e := env()
	e.Infer = func(req scheduler.Request) effect.Effect[S, facts.ModelTurn] {
		got = append(got, req)
		saw = append(saw, req.Messages[0].Text)
		req.Messages[0].Text = "the model scribbled here"
		return effect.Succeed[S](facts.ModelTurn{Text: "ok"})
	}
	s := scheduler.New(e)
	log := thread(t, false)
	require.NoError(t, s.Step(log[0]))
	out := s.Output()
	require.Len(t, out.Transitions, 1)
	turn := out.Transitions[0]
	require.Equal(t, "infer/turn/1", turn.Key)
	require.Empty(t, got, "projecting asks nothing of the model")
	for _, f := range log[1:] {
		require.NoError(t, s.Step(f))
	}
	require.Len(t, s.Messages(), 4)
	for range 2 {
		ex := effect.Run(t.Context(), turn.Effect, S{})
		require.True(t, ex.IsSuccess(), "%v", ex)
	}
	require.Len(t, got, 2)
	for _, req := range got {
		require.Len(t, req.Messages, 1, "the conversation at the projection")
	}
	require.Equal(t, []string{"write twice", "write twice"}, saw, "each run gives the model its own copy")
	require.Equal(t, "write twice", s.Messages()[0].Text, "the fold's conversation is untouched")
}
