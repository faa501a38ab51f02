package scheduler_test

import (
	"iter"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// A lean scheduler (a verifier's, see Scheduler.Lean) answers as one that
// keeps everything, at every fact of a thread whose model keeps making
// the same call: what is enabled and waited for, the loop guard's count
// of the same call in a row (which reaches back into the calls the lean
// one let go of), its checks and answers of facts naming calls of earlier
// turns, the reading of the whole thread and the conversation.
func TestLeanAnswersAsTheWholeFold(t *testing.T) {
	e := env()
	e.Policy = func(facts.ToolCall) scheduler.Policy { return scheduler.Policy{Capability: action.Read} }
	e.LoopGuard = 3
	// The arguments of each turn's calls: runs of the same call that
	// reach the guard, broken, and a turn of two calls.
	turns := [][]string{{"a"}, {"a"}, {"a"}, {"a"}, {"b"}, {"a"}, {"a", "a"}, {"a"}, {"c"}, {"c"}, {"a"}, {"a"}, {"a"}, {"a"}, {"a"}}
	var log []facts.Fact
	add := func(kind facts.Kind, cause string, payload any) facts.Fact {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(t, err)
		f := facts.Fact{Thread: "t", Seq: uint64(len(log) + 1), Kind: kind, Cause: cause, Data: d.Data, At: time.Unix(1, 0).UTC()}
		log = append(log, f)
		return f
	}
	src := fold.SourceFunc(func(from uint64) iter.Seq2[facts.Fact, error] {
		return func(yield func(facts.Fact, error) bool) {
			for _, f := range log {
				if f.Seq >= from && !yield(f, nil) {
					return
				}
			}
		}
	})
	whole, lean := scheduler.New(e), scheduler.New(e)
	lean.Lean(src)
	step := func(f facts.Fact) {
		t.Helper()
		require.Equal(t, errString(whole.Check(f)), errString(lean.Check(f)), "check of seq %d", f.Seq)
		require.NoError(t, whole.Step(f))
		require.NoError(t, lean.Step(f))
	}
	// same compares what both enable now, and returns the whole one's.
	same := func() fold.Output[S] {
		t.Helper()
		w, l := whole.Output(), lean.Output()
		require.Equal(t, w.View, l.View)
		require.Equal(t, w.Waits, l.Waits)
		require.Equal(t, w.Stop, l.Stop)
		require.Equal(t, keys(w), keys(l))
		return w
	}
	run := func(tr fold.Transition[S]) []facts.Draft {
		ex := effect.Run(t.Context(), tr.Effect, S{})
		require.True(t, ex.IsSuccess(), "%s: %v", tr.Key, ex)
		d, _ := ex.Value()
		return d
	}
	step(add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "read"}))
	guarded := 0
	for i, args := range turns {
		turn := i + 1
		var calls []facts.ToolCall
		for j, a := range args {
			calls = append(calls, facts.ToolCall{ID: "c" + strconv.Itoa(j), Name: "read_file", Args: `{"path":"` + a + `"}`})
		}
		require.Equal(t, []string{"infer/turn/" + strconv.Itoa(turn)}, keys(same()))
		step(add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{Turn: turn, Text: "reading", ToolCalls: calls}))
		for {
			out := same()
			if len(out.Waits) > 0 {
				// The loop guard asks a person: approved.
				step(add(facts.KindConfirmationAnswered, "ingress/ok-"+out.Waits[0].RequestID, facts.ConfirmationAnswered{RequestID: out.Waits[0].RequestID, Approved: true}))
				continue
			}
			require.NotEmpty(t, out.Transitions)
			tr := out.Transitions[0] // a runtime runs the first
			switch key := tr.Key; {
			case strings.HasPrefix(key, "tool/request/"), strings.HasPrefix(key, "confirm/"):
				l := lean.Output()
				d := run(tr)
				require.Equal(t, d, run(l.Transitions[0]), "%s: the lean one's effect", key)
				if strings.HasPrefix(key, "tool/request/") && decodeDraft[facts.ActionRequested](t, d[0]).Repeats > 0 {
					guarded++
				}
				for _, x := range d {
					step(add(x.Kind, key, decodeAny(t, x)))
				}
			case strings.HasPrefix(key, "tool/execute/"):
				id := strings.TrimPrefix(key, "tool/execute/")
				step(add(facts.KindActionStarted, "tool/start/"+id, facts.ActionStarted{ActionID: id}))
				step(add(facts.KindActionCompleted, key, facts.ActionCompleted{ActionID: id, Report: facts.Report{Status: facts.StatusSucceeded, Stdout: "text of " + id}, EffectState: facts.EffectReported}))
			default:
				require.True(t, strings.HasPrefix(key, "infer/turn/"), key)
			}
			if strings.HasPrefix(tr.Key, "infer/turn/") {
				break
			}
		}
	}
	require.Greater(t, guarded, 3, "the guard asked in runs that reach back into earlier turns")

	// Facts and answers naming calls of the first turns, long settled.
	for _, f := range []struct {
		kind    facts.Kind
		payload any
	}{
		{facts.KindActionStarted, facts.ActionStarted{ActionID: "1-c0"}},
		{facts.KindActionCompleted, facts.ActionCompleted{ActionID: "2-c0", Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectReported}},
		{facts.KindCheckRecorded, facts.CheckRecorded{ActionID: "3-c0", Verdict: facts.VerdictPass}},
		{facts.KindActionInterrupted, facts.ActionInterrupted{ActionID: "3-c0"}},
	} {
		d, err := facts.NewDraft(f.kind, "tool/x", f.payload)
		require.NoError(t, err)
		x := facts.Fact{Thread: "t", Seq: uint64(len(log) + 1), Kind: f.kind, Cause: "tool/x", Data: d.Data}
		require.Error(t, whole.Check(x))
		require.Equal(t, errString(whole.Check(x)), errString(lean.Check(x)), "check of a %s", f.kind)
	}
	for _, d := range []facts.Draft{
		draft(t, facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "4-c0", Approved: true}),
		draft(t, facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c0", Decision: facts.DecisionAccept}),
	} {
		require.Error(t, whole.Accept(d))
		require.Equal(t, errString(whole.Accept(d)), errString(lean.Accept(d)), "answer %s", d.Kind)
	}
	wr, err := whole.Reading()
	require.NoError(t, err)
	lr, err := lean.Reading()
	require.NoError(t, err)
	require.Equal(t, wr, lr)
	require.Equal(t, whole.Messages(), lean.Messages())
	require.NotEmpty(t, lean.Messages())
}

// A lean scheduler that folded a thread keeps no conversation and none
// of the calls of its earlier turns: asked for the conversation, it reads
// the log again; a model turn it enables cannot run.
func TestLeanRunsNoModelTurn(t *testing.T) {
	e := env()
	e.Policy = func(facts.ToolCall) scheduler.Policy { return scheduler.Policy{Capability: action.Read} }
	var log []facts.Fact
	add := func(kind facts.Kind, cause string, payload any) {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(t, err)
		log = append(log, facts.Fact{Thread: "t", Seq: uint64(len(log) + 1), Kind: kind, Cause: cause, Data: d.Data, At: time.Unix(1, 0).UTC()})
	}
	add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "read"})
	add(facts.KindModelTurn, "infer/turn/1", facts.ModelTurn{Turn: 1, Text: "done"})
	reads := 0
	lean := scheduler.New(e)
	lean.Lean(fold.SourceFunc(func(from uint64) iter.Seq2[facts.Fact, error] {
		reads++
		return func(yield func(facts.Fact, error) bool) {
			for _, f := range log[from-1:] {
				if !yield(f, nil) {
					return
				}
			}
		}
	}))
	for _, f := range log {
		require.NoError(t, lean.Step(f))
	}
	require.NoError(t, lean.Accept(draft(t, facts.KindUserMessage, facts.UserMessage{Text: "more"})))
	add(facts.KindUserMessage, "ingress/more", facts.UserMessage{Text: "more"})
	require.NoError(t, lean.Step(log[2]))
	out := lean.Output()
	require.Equal(t, []string{"infer/turn/2"}, keys(out))
	ex := effect.Run(t.Context(), out.Transitions[0].Effect, S{})
	require.False(t, ex.IsSuccess())
	require.Contains(t, ex.String(), scheduler.ErrLean.Error())
	require.Zero(t, reads, "nothing was read again")
	require.Equal(t, []string{"read", "done", "more"}, texts(lean.Messages()))
	require.Equal(t, 1, reads, "the conversation was read again, once")
	require.Equal(t, []string{"read", "done", "more"}, texts(lean.Messages()))
	require.Equal(t, 1, reads, "and then kept")
}

func keys(o fold.Output[S]) []string {
	var out []string
	for _, t := range o.Transitions {
		out = append(out, t.Key)
	}
	return out
}

func texts(ms []facts.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func draft(t *testing.T, kind facts.Kind, payload any) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(kind, "ingress/x", payload)
	require.NoError(t, err)
	return d
}

// decodeAny is a draft's payload, of the kinds the test appends.
func decodeAny(t *testing.T, d facts.Draft) any {
	t.Helper()
	switch d.Kind {
	case facts.KindActionRequested:
		return decodeDraft[facts.ActionRequested](t, d)
	case facts.KindConfirmationRequested:
		return decodeDraft[facts.ConfirmationRequested](t, d)
	}
	t.Fatalf("a draft of kind %s", d.Kind)
	return nil
}
