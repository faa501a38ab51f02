package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// A tool's result is kept as its records and said when asked for: the
// conversation says the completion with the check recorded after it, and
// a turn projected before the check, run after it, is told the result as
// it stood at its projection.
func TestToolResultIsSaidWithItsCheck(t *testing.T) {
	var out []facts.Fact
	add := func(kind facts.Kind, cause string, payload any) {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(t, err)
		out = append(out, facts.Fact{Thread: "t", Seq: uint64(len(out) + 1), Kind: kind, Cause: cause, Data: d.Data, At: time.Unix(1, 0).UTC()})
	}
	spec := facts.CheckSpec{Name: "file_equals", Target: "a.txt"}
	done := facts.ActionCompleted{ActionID: "1-c", Report: facts.Report{Status: facts.StatusSucceeded, Stdout: "wrote a.txt"}, EffectState: facts.EffectReported}
	check := facts.CheckRecorded{ActionID: "1-c", Check: spec, Verdict: facts.VerdictPass, Reason: "it holds"}
	add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "write a.txt"})
	add(facts.KindModelTurn, "infer/turn/1", facts.ModelTurn{Turn: 1, ToolCalls: []facts.ToolCall{{ID: "c", Name: "write_file", Args: "{}"}}})
	add(facts.KindActionRequested, "tool/request/1-c", facts.ActionRequested{ActionID: "1-c", Capability: "write", Payload: facts.RawJSON("{}"), Adapter: "write_file", Check: &spec})
	add(facts.KindActionStarted, "tool/start/1-c", facts.ActionStarted{ActionID: "1-c"})
	add(facts.KindActionCompleted, "tool/execute/1-c", done)

	var told []string
	e := env()
	e.Infer = func(req scheduler.Request) effect.Effect[S, facts.ModelTurn] {
		told = append(told, req.Messages[len(req.Messages)-1].Text)
		return effect.Succeed[S](facts.ModelTurn{Text: "ok"})
	}
	s := scheduler.New(e)
	for _, f := range out {
		require.NoError(t, s.Step(f))
	}
	without := scheduler.ToolResult(done, nil)
	require.Equal(t, without, s.Messages()[2].Text)
	// A turn's request made here (the fold lends its conversation), run
	// after the check is folded.
	next := s.Output().Transitions
	require.NotEmpty(t, next)
	require.Equal(t, "infer/turn/2", next[0].Key)
	add(facts.KindCheckRecorded, "tool/execute/1-c", check)
	require.NoError(t, s.Step(out[len(out)-1]))
	with := scheduler.ToolResult(done, &check)
	require.Contains(t, with, "it holds")
	msgs := s.Messages()
	require.Len(t, msgs, 3)
	require.Equal(t, facts.Message{Role: facts.RoleTool, ToolCallID: "c", Text: with, Seq: 5}, msgs[2])
	ex := effect.Run(t.Context(), next[0].Effect, S{})
	require.True(t, ex.IsSuccess(), "%v", ex)
	require.Equal(t, []string{without}, told, "the result as it stood where the turn was projected")
}
