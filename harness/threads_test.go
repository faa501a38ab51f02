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
func drive(ctx context.Context, rt *harness.Runtime[harness.Services], actor harness.Actor[harness.Services], id, message string) (harness.Outcome, error) {
	out, err := rt.Start(ctx, actor, id, message)
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
func answer(ctx context.Context, rt *harness.Runtime[harness.Services], actor harness.Actor[harness.Services], id string, w fold.Wait) error {
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
