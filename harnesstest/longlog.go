package harnesstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// LoopActor is the coding actor the logs of AppendToolLoop are written
// by: the default configuration with write_file, read_file and
// run_command, whose runs fail (a log of it is read, never resumed).
func LoopActor(tb testing.TB) harness.Actor {
	tb.Helper()
	tool := func(name string, needs action.Capability) harness.ToolAdapter {
		return harness.Tool{Spec: facts.ToolSchema{Name: name}, Needs: needs,
			Run: func(context.Context, json.RawMessage) (facts.Report, error) {
				return facts.Report{}, errors.New("a replayed log ran a tool")
			}}
	}
	tools, err := harness.NewToolbox(tool("write_file", action.Write), tool("read_file", action.Read), tool("run_command", action.Execute))
	require.NoError(tb, err)
	cfg, err := harness.NewConfig()
	require.NoError(tb, err)
	a, err := harness.CodingActor(cfg, tools)
	require.NoError(tb, err)
	return a
}

// AppendToolLoop appends to store a coding thread id of n facts (n ≥ 5)
// as LoopActor's runtime writes one, in appends of at most 1,000 facts:
// its task, its configuration, model turns each reading a file (the turn,
// the action's request, start and completion), remarks of the person to
// fill up to n, and last a turn whose write waits for a confirmation. The
// log verifies (audit.VerifyLog) and the thread is parked.
func AppendToolLoop(tb testing.TB, store thread.Store, id string, n int) {
	tb.Helper()
	require.GreaterOrEqual(tb, n, 5)
	ctx := context.Background()
	var (
		batch []facts.Draft
		head  uint64
		added int
	)
	add := func(kind facts.Kind, cause string, payload any) {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(tb, err)
		batch = append(batch, d)
		added++
		if len(batch) == 1000 || added == n {
			h, err := store.Append(ctx, id, head, batch...)
			require.NoError(tb, err)
			head, batch = h.Seq, batch[:0]
		}
	}
	request := func(ref, tool string, needs action.Capability, args string) {
		add(facts.KindActionRequested, "tool/request/"+ref, facts.ActionRequested{
			ActionID: ref, CallID: "call_1", Capability: needs, Instruction: tool + " " + args,
			IdempotencyKey: "tool/execute/" + ref, RequestedBy: "coding-actor", ActorID: "coding-actor", Adapter: tool,
			Payload: facts.RawJSON(args), Confirm: needs != action.Read,
		})
	}
	add(facts.KindUserMessage, facts.IngressCause(harness.StartKey), facts.UserMessage{Text: "Find why the session cache expires early and fix it."})
	add(facts.KindSystemConfigured, "system/configure", facts.SystemConfigured{
		Prompt: harness.DefaultSystemPrompt, Model: "loop", Version: "loop",
		Tools: []facts.ToolSchema{{Name: "write_file"}, {Name: "read_file"}, {Name: "run_command"}},
	})
	const tail = 3
	turn := 0
	for n-tail-added >= 4 {
		turn++
		ref := fmt.Sprintf("%d-call_1", turn)
		args := fmt.Sprintf(`{"path":"internal/auth/file%05d.go"}`, turn)
		add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{
			Turn: turn, Text: "Reading the next file to find where the session expires.",
			ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "read_file", Args: args}},
			Usage:     facts.Usage{InputTokens: 1800, OutputTokens: 200},
		})
		request(ref, "read_file", action.Read, args)
		add(facts.KindActionStarted, "tool/start/"+ref, facts.ActionStarted{ActionID: ref})
		add(facts.KindActionCompleted, "tool/execute/"+ref, facts.ActionCompleted{
			ActionID:    ref,
			Report:      facts.Report{Status: facts.StatusSucceeded, Stdout: strings.Repeat("func expire(s *Session) { s.ttl = 0 }\n", 5)},
			EffectState: facts.EffectReported,
		})
	}
	for i := 1; n-tail-added > 0; i++ {
		add(facts.KindUserMessage, facts.IngressCause("remark-"+strconv.Itoa(i)), facts.UserMessage{Text: "Look at the refresh path too."})
	}
	turn++
	ref := fmt.Sprintf("%d-call_1", turn)
	args := `{"path":"internal/auth/session.go","content":"ttl = 300"}`
	add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{
		Turn: turn, Text: "Setting the TTL.", ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "write_file", Args: args}},
	})
	request(ref, "write_file", action.Write, args)
	add(facts.KindConfirmationRequested, "confirm/"+ref, facts.ConfirmationRequested{
		RequestID: ref, CallID: ref, Tool: "write_file", Args: args, Digest: scheduler.Digest("write_file", args),
	})
	require.Empty(tb, batch, "every fact is appended")
	require.EqualValues(tb, n, head)
}
