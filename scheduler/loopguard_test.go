package scheduler_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// The loop guard: the model's third call in a row of the same tool with
// the same arguments — across turns, as the log says — is requested with
// a confirmation, though the tool needs none, and the confirmation says
// why; a call with other arguments in between breaks the run.
func TestLoopGuard(t *testing.T) {
	e := env()
	e.Policy = func(facts.ToolCall) scheduler.Policy { return scheduler.Policy{Capability: action.Read} }
	e.LoopGuard = 3
	for _, c := range []struct {
		name    string
		args    []string // of the turns before the one asked about
		repeats int      // 0: no confirmation
	}{
		{"the third in a row", []string{`{"path":"a"}`, `{"path":"a"}`}, 3},
		{"the fourth in a row", []string{`{"path":"a"}`, `{"path":"a"}`, `{"path":"a"}`}, 4},
		{"the second in a row", []string{`{"path":"b"}`, `{"path":"a"}`}, 0},
		{"a run broken by another call", []string{`{"path":"a"}`, `{"path":"b"}`, `{"path":"a"}`}, 0},
		{"the same value spelled otherwise is the same call", []string{`{"path":"a"}`, `{ "path" : "\u0061" }`}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log []facts.Fact
			add := func(kind facts.Kind, cause string, payload any) {
				d, err := facts.NewDraft(kind, cause, payload)
				require.NoError(t, err)
				log = append(log, facts.Fact{Thread: "t", Seq: uint64(len(log) + 1), Kind: kind, Cause: cause, Data: d.Data, At: time.Unix(1, 0).UTC()})
			}
			add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "read"})
			for i, args := range append(c.args, `{"path":"a"}`) {
				turn := i + 1
				ref := strconv.Itoa(turn) + "-c"
				add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{Turn: turn, ToolCalls: []facts.ToolCall{{ID: "c", Name: "read_file", Args: args}}})
				if i == len(c.args) {
					break
				}
				add(facts.KindActionRequested, "tool/request/"+ref, facts.ActionRequested{ActionID: ref, Capability: "read", Payload: facts.RawJSON(args), Adapter: "read_file"})
				add(facts.KindActionStarted, "tool/start/"+ref, facts.ActionStarted{ActionID: ref})
				add(facts.KindActionCompleted, "tool/execute/"+ref, facts.ActionCompleted{ActionID: ref, Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectReported})
			}
			s := scheduler.New(e)
			for _, f := range log {
				require.NoError(t, s.Step(f))
			}
			out := s.Output()
			require.Len(t, out.Transitions, 1)
			ex := effect.Run(t.Context(), out.Transitions[0].Effect, S{})
			require.True(t, ex.IsSuccess(), "%v", ex)
			drafts, _ := ex.Value()
			require.Len(t, drafts, 1)
			req := decodeDraft[facts.ActionRequested](t, drafts[0])
			require.Equal(t, c.repeats > 0, req.Confirm)
			require.Equal(t, c.repeats, req.Repeats)
			if c.repeats == 0 {
				return
			}
			// Folded, the request waits for a person, saying why.
			add(facts.KindActionRequested, out.Transitions[0].Key, req)
			require.NoError(t, s.Step(log[len(log)-1]))
			out = s.Output()
			require.Len(t, out.Transitions, 1)
			ex = effect.Run(t.Context(), out.Transitions[0].Effect, S{})
			require.True(t, ex.IsSuccess(), "%v", ex)
			drafts, _ = ex.Value()
			cr := decodeDraft[facts.ConfirmationRequested](t, drafts[0])
			require.Contains(t, cr.Reason, "times in a row")
			add(facts.KindConfirmationRequested, out.Transitions[0].Key, cr)
			require.NoError(t, s.Step(log[len(log)-1]))
			require.Equal(t, fold.WaitConfirmation, s.Output().Waits[0].Kind)
		})
	}
}

// decodeDraft is a draft's payload.
func decodeDraft[T any](t *testing.T, d facts.Draft) T {
	t.Helper()
	p, err := facts.Decode[T](facts.Fact{Thread: "t", Seq: 1, Kind: d.Kind, Data: d.Data})
	require.NoError(t, err)
	return p
}
