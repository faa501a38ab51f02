package harnesstest

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// Parked is a coding thread parked on the confirmation of a write, of any
// length, written straight to a store with the kinds and causes the
// runtime records — for benchmarks and tests of what reading or resuming
// a long thread costs, without a model running through every turn. It
// starts with its task (and its Policy, when set) and its configuration;
// then come model turns that each read a file (the turn, the request, the
// start, the completion), or notes; then the person's remarks that fill
// it to Facts; last, a turn whose write waits for a confirmation.
type Parked struct {
	// Facts is how many facts the thread has: at least 5, 6 with a Policy.
	Facts int
	// Notes puts facts of a kind no component reads (an application's
	// notes) in place of the turns that read files, so that a fold only
	// steps over them.
	Notes bool
	// Model and Workspace are what its system.configured records (Model
	// "bench" when empty).
	Model, Workspace string
	// Policy, when set, is the thread's starting policy, posted with its
	// task as a front end posts it (drive.StartingPolicy).
	Policy *facts.PolicySet
	// InputTokens is the usage each turn that reads a file reports.
	InputTokens int64
}

// Append appends the thread id to s, in batches of 1,000, and fails t
// unless every fact was appended.
func (p Parked) Append(t T, s thread.Store, id string) {
	least := 5
	if p.Policy != nil {
		least = 6
	}
	require.GreaterOrEqual(t, p.Facts, least, "a parked thread has at least its task, configuration, last turn, request and confirmation")
	ctx := context.Background()
	var batch []facts.Draft
	var head uint64
	n := 0 // facts added
	put := func(d facts.Draft) {
		batch = append(batch, d)
		n++
		if len(batch) == 1000 || n == p.Facts {
			h, err := s.Append(ctx, id, head, batch...)
			require.NoError(t, err)
			head, batch = h.Seq, batch[:0]
		}
	}
	add := func(kind facts.Kind, cause string, payload any) {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(t, err)
		put(d)
	}
	// request adds the action.requested of a model's call, as the
	// scheduler records it before anything runs or anyone is asked.
	request := func(ref, tool string, needs action.Capability, args string) {
		add(facts.KindActionRequested, "tool/request/"+ref, facts.ActionRequested{
			ActionID: ref, CallID: "call_1", Capability: needs, Instruction: tool + " " + args,
			IdempotencyKey: "tool/execute/" + ref, RequestedBy: "coding-actor", ActorID: "coding-actor", Adapter: tool,
			Payload: facts.RawJSON(args), Confirm: needs != action.Read,
		})
	}
	add(facts.KindUserMessage, facts.IngressCause(harness.StartKey), facts.UserMessage{Text: "Find why the session cache expires early and fix it."})
	if p.Policy != nil {
		pol, err := drive.StartingPolicy(*p.Policy)
		require.NoError(t, err)
		pol.Draft.Cause = facts.IngressCause(pol.Key)
		put(pol.Draft)
	}
	modelName := p.Model
	if modelName == "" {
		modelName = "bench"
	}
	add(facts.KindSystemConfigured, "system/configure", facts.SystemConfigured{
		Prompt: harness.DefaultSystemPrompt, Model: modelName, Version: "bench", Workspace: p.Workspace,
		Tools: []facts.ToolSchema{{Name: "write_file"}, {Name: "read_file"}, {Name: "run_command"}},
	})
	// The last model turn, its request and the confirmation it waits for.
	const tail = 3
	turn := 0
	if p.Notes {
		for i := 1; p.Facts-tail-n > 0; i++ {
			add("app.note", "note/"+strconv.Itoa(i), map[string]any{"text": "build 4711 is green", "n": i})
		}
	}
	for p.Facts-tail-n >= 4 {
		turn++
		ref := fmt.Sprintf("%d-call_1", turn)
		args := fmt.Sprintf(`{"path":"internal/auth/file%05d.go"}`, turn)
		add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{
			Turn: turn, Text: "Reading the next file to find where the session expires.",
			ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "read_file", Args: args}},
			Usage:     facts.Usage{InputTokens: p.InputTokens, OutputTokens: 200},
		})
		request(ref, "read_file", action.Read, args)
		add(facts.KindActionStarted, "tool/start/"+ref, facts.ActionStarted{ActionID: ref})
		add(facts.KindActionCompleted, "tool/execute/"+ref, facts.ActionCompleted{
			ActionID:    ref,
			Report:      facts.Report{Status: facts.StatusSucceeded, Stdout: strings.Repeat("func expire(s *Session) { s.ttl = 0 }\n", 5)},
			EffectState: facts.EffectReported,
		})
	}
	// The person added remarks while the agent read.
	for i := 1; p.Facts-tail-n > 0; i++ {
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
		RequestID: ref, CallID: ref, Tool: "write_file", Args: args, Digest: facts.CallDigest("write_file", args),
	})
	require.Empty(t, batch, "every fact is appended")
	require.EqualValues(t, p.Facts, head)
}
