package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// This file holds what the crash, race and benchmark files share: a long
// scripted coding thread, a driver that runs a thread to its end the way an
// unattended operator would, and readers of a finished log.

// codingScript returns a script of turns model turns. Each but the last
// calls tools, in a cycle of three: a write (confirmed), a read (not
// confirmed), then a write and a command at once (two requests, each
// answered on its own). The last turn answers with text.
func codingScript(t testing.TB, turns int) *model.Scripted {
	t.Helper()
	var b strings.Builder
	for turn := 1; turn < turns; turn++ {
		var calls []facts.ToolCall
		call := func(name, args string) {
			calls = append(calls, facts.ToolCall{ID: fmt.Sprintf("call_%d_%d", turn, len(calls)+1), Name: name, Args: args})
		}
		switch turn % 3 {
		case 1:
			call("write_file", fmt.Sprintf(`{"path":"f%d.txt","content":"line %d\n"}`, turn, turn))
		case 2:
			call("read_file", fmt.Sprintf(`{"path":"f%d.txt"}`, turn-1))
		case 0:
			call("write_file", fmt.Sprintf(`{"path":"g%d.txt","content":"x"}`, turn))
			call("run_command", fmt.Sprintf(`{"cmd":"go test ./pkg%d/..."}`, turn))
		}
		line, err := json.Marshal(model.Decision{
			Text:      fmt.Sprintf("Step %d.", turn),
			ToolCalls: calls,
			Usage:     facts.Usage{InputTokens: int64(100 * turn), OutputTokens: 20},
		})
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString(`{"text": "All steps are done."}` + "\n")
	s, err := model.ParseScript("coding", []byte(b.String()))
	require.NoError(t, err)
	return s
}

// codingTools returns the toolbox of codingScript: write_file and
// run_command ask for confirmation, read_file does not. Each tool calls
// run with its name and the arguments it was given.
func codingTools(t testing.TB, run func(ctx context.Context, name, args string) (facts.Report, error)) *harness.Toolbox {
	t.Helper()
	tool := func(name string, needs action.Capability) harness.ToolAdapter {
		return harness.Tool{
			Spec:  facts.ToolSchema{Name: name},
			Needs: needs,
			Run: func(ctx context.Context, args json.RawMessage) (facts.Report, error) {
				return run(ctx, name, string(args))
			},
		}
	}
	tb, err := harness.NewToolbox(
		tool("write_file", action.Write),
		tool("read_file", action.Read),
		tool("run_command", action.Execute),
	)
	require.NoError(t, err)
	return tb
}

// operator names who answers in the driven threads.
const operator = "operator"

// answerKey is the idempotency key under which drive answers a request, so
// that an answer posted twice (say, by a process killed right after posting
// it, then by the one that resumes) is appended once.
func answerKey(w fold.Wait) string { return string(w.Kind) + "-" + w.RequestID }

// drive runs thread id to its end the way an unattended operator would: it
// starts it with message (a no-op if it was started), approves every
// confirmation it parks on, has every action left in doubt by a crash tried
// again, and resumes, until the thread is done, failed or stopped. A
// question is an error: nobody here answers questions.
func drive(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id, message string) (harness.Outcome, error) {
	out, err := startOrResume(ctx, rt, actor, id, message)
	for {
		if err != nil {
			return out, err
		}
		switch out.Status {
		case harness.StatusParked:
			for _, w := range out.Waits {
				if err := answer(ctx, rt, actor, id, w); err != nil {
					return out, err
				}
			}
		case harness.StatusStepLimit:
		default:
			return out, nil
		}
		out, err = rt.Resume(ctx, actor, id)
	}
}

// answer posts the operator's answer to w under answerKey(w): an approval,
// or a reconciliation that tries the action again.
func answer(ctx context.Context, rt *harness.Runtime, actor harness.Actor, id string, w fold.Wait) error {
	var d facts.Draft
	var err error
	switch w.Kind {
	case fold.WaitConfirmation:
		d, err = facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: w.RequestID, Approved: true, By: operator})
	case fold.WaitReconcile:
		d, err = facts.NewDraft(facts.KindEffectReconciled, "", facts.EffectReconciled{ActionID: w.RequestID, Decision: facts.DecisionRetry, By: operator})
	default:
		return fmt.Errorf("thread %s waits for a %s (%s): nobody answers those here", id, w.Kind, w.Summary)
	}
	if err != nil {
		return err
	}
	_, err = rt.Post(ctx, actor, id, d, answerKey(w))
	return err
}

// logEntry is a fact as the comparisons of whole logs see it: its kind and
// its cause. Seqs, times and hashes are left out.
type logEntry struct {
	Kind  facts.Kind
	Cause string
}

// readLog returns the thread's facts.
func readLog(t testing.TB, s thread.Store, id string) []facts.Fact {
	t.Helper()
	var out []facts.Fact
	for f, err := range s.Read(context.Background(), id, 1) {
		require.NoError(t, err)
		out = append(out, f)
	}
	return out
}

// entriesOf returns the kind and cause of each fact of log.
func entriesOf(log []facts.Fact) []logEntry {
	out := make([]logEntry, len(log))
	for i, f := range log {
		out[i] = logEntry{f.Kind, f.Cause}
	}
	return out
}

// kindsOf returns the kind of each fact of log.
func kindsOf(log []facts.Fact) []facts.Kind {
	out := make([]facts.Kind, len(log))
	for i, f := range log {
		out[i] = f.Kind
	}
	return out
}

// requireCausesOnce checks that every cause of the log was appended once:
// the facts with one cause are one contiguous run (the facts of a single
// append may share a cause; the same cause again later would be a key run
// or posted twice).
func requireCausesOnce(t testing.TB, log []facts.Fact) {
	t.Helper()
	runs := map[string]int{}
	for i, f := range log {
		require.NotEmpty(t, f.Cause, "seq %d has no cause", f.Seq)
		if i == 0 || log[i-1].Cause != f.Cause {
			runs[f.Cause]++
		}
	}
	for cause, n := range runs {
		require.Equal(t, 1, n, "cause %q appended %d times", cause, n)
	}
}

// requestedCalls returns the tool calls of a log's action.requested facts,
// as "name args", one per action (an action tried again after a crash
// counts again).
func requestedCalls(t testing.TB, log []facts.Fact) []string {
	t.Helper()
	var out []string
	for _, f := range log {
		if f.Kind != facts.KindActionRequested {
			continue
		}
		ar, err := facts.Decode[facts.ActionRequested](f)
		require.NoError(t, err)
		out = append(out, ar.Instruction)
	}
	return out
}

// mustDecode decodes the payload of f, failing the test if it cannot.
func mustDecode[T any](t testing.TB, f facts.Fact) T {
	t.Helper()
	v, err := facts.Decode[T](f)
	require.NoError(t, err)
	return v
}

// threadEntry is a fact that is no tool call's — the user's message, the
// system configuration, a model turn — as the comparisons of logs by call
// see it: its kind and its decoded payload (its raw payload for a kind the
// comparisons do not decode).
type threadEntry struct {
	Kind    facts.Kind
	Payload any
}

// callRef names a tool call in a thread: the model turn that made it and
// the call's id. For an id without a dot it is the scheduler's ref, which
// confirmation requests carry as their call id.
func callRef(turn int, id string) string { return fmt.Sprintf("%d-%s", turn, id) }

// byCall splits a log by tool call, the way a crash may reorder it and a
// run never killed must still match it: for each call, by callRef, a line
// per fact of the call, in log order, saying what the fact says of the
// call but no action id, seq or time (so the attempt that tried an action
// again reads like a first one); and, in log order, the facts that are no
// call's. A call's facts are its action.requested, its
// confirmation.requested and confirmation.answered, and the
// action.started, action.completed, check.recorded, action.interrupted and
// effect.reconciled of its actions. Only the facts keep accepts are said
// (a nil keep accepts all); the others still count for the checks below.
//
// A call's facts must all come after the model.turn that made the call and
// before the next model.turn — a turn's calls settle before the model is
// asked again — and name a request or action the log has; else byCall
// returns an error.
func byCall(t testing.TB, log []facts.Fact, keep func(facts.Fact) bool) (calls map[string][]string, rest []threadEntry, err error) {
	t.Helper()
	calls = map[string][]string{}
	current := map[string]bool{}         // the refs of the calls of the latest model turn
	turn := 0                            // the latest model turn
	actions := map[string]string{}       // action id → ref
	confirmations := map[string]string{} // confirmation request id → ref
	for _, f := range log {
		var ref, line, id string
		var entry any // the payload of a fact that is no call's
		switch f.Kind {
		case facts.KindActionRequested:
			p := mustDecode[facts.ActionRequested](t, f)
			ref, line = callRef(turn, p.CallID), fmt.Sprintf("%s %s %s check=%v", f.Kind, p.Capability, p.Instruction, p.Check)
			actions[p.ActionID] = ref
		case facts.KindConfirmationRequested:
			p := mustDecode[facts.ConfirmationRequested](t, f)
			ref, line = p.CallID, fmt.Sprintf("%s %s %s %s", f.Kind, p.Tool, p.Args, p.Digest)
			confirmations[p.RequestID] = ref
		case facts.KindConfirmationAnswered:
			p := mustDecode[facts.ConfirmationAnswered](t, f)
			r, ok := confirmations[p.RequestID]
			if !ok {
				return nil, nil, fmt.Errorf("seq %d answers confirmation %q, never requested", f.Seq, p.RequestID)
			}
			ref, line = r, fmt.Sprintf("%s approved=%t by %s", f.Kind, p.Approved, p.By)
		case facts.KindActionStarted:
			p := mustDecode[facts.ActionStarted](t, f)
			id, line = p.ActionID, string(f.Kind)
		case facts.KindActionCompleted:
			p := mustDecode[facts.ActionCompleted](t, f)
			id, line = p.ActionID, fmt.Sprintf("%s %s %q %q %s", f.Kind, p.Report.Status, p.Report.Stdout, p.Report.Error, p.EffectState)
		case facts.KindCheckRecorded:
			p := mustDecode[facts.CheckRecorded](t, f)
			id, line = p.ActionID, fmt.Sprintf("%s %s %s", f.Kind, p.Check.Name, p.Verdict)
		case facts.KindActionInterrupted:
			p := mustDecode[facts.ActionInterrupted](t, f)
			id, line = p.ActionID, string(f.Kind)
		case facts.KindEffectReconciled:
			p := mustDecode[facts.EffectReconciled](t, f)
			id, line = p.ActionID, fmt.Sprintf("%s %s", f.Kind, p.Decision)
		case facts.KindModelTurn:
			p := mustDecode[facts.ModelTurn](t, f)
			turn, current = p.Turn, map[string]bool{}
			for _, c := range p.ToolCalls {
				current[callRef(p.Turn, c.ID)] = true
			}
			entry = p
		case facts.KindUserMessage:
			entry = mustDecode[facts.UserMessage](t, f)
		case facts.KindSystemConfigured:
			entry = mustDecode[facts.SystemConfigured](t, f)
		default:
			entry = string(f.Data)
		}
		if entry != nil {
			if keep == nil || keep(f) {
				rest = append(rest, threadEntry{f.Kind, entry})
			}
			continue
		}
		if id != "" {
			r, ok := actions[id]
			if !ok {
				return nil, nil, fmt.Errorf("seq %d (%s) is of action %q, never requested", f.Seq, f.Kind, id)
			}
			ref = r
		}
		if !current[ref] {
			return nil, nil, fmt.Errorf("seq %d (%s) is of call %q, not a call of the latest model turn (%d)", f.Seq, f.Kind, ref, turn)
		}
		if keep == nil || keep(f) {
			calls[ref] = append(calls[ref], line)
		}
	}
	return calls, rest, nil
}
