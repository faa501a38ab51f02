package model_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// run is a harness runtime on a real Pebble store, with a provider as its
// model and one write tool that records its calls.
type run struct {
	t     *testing.T
	store *thread.PebbleStore
	rt    *harness.Runtime
	actor harness.Actor

	mu     sync.Mutex
	writes []string
}

func newRun(t *testing.T, m model.Model) *run {
	t.Helper()
	r := &run{t: t}
	var err error
	r.store, err = thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.store.Close()) })
	tb, err := harness.NewToolbox(harness.Tool{Spec: writeSchema, Needs: action.Write,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			r.mu.Lock()
			r.writes = append(r.writes, string(args))
			r.mu.Unlock()
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "wrote cache.toml"}, nil
		}})
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	r.actor, err = harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	r.rt, err = harness.NewRuntime(r.store, harness.Services{Model: m, Tools: tb}, cfg)
	require.NoError(t, err)
	return r
}

func (r *run) post(id string, kind facts.Kind, payload any, key string) {
	d, err := facts.NewDraft(kind, "", payload)
	require.NoError(r.t, err)
	_, err = r.rt.Post(context.Background(), r.actor, id, d, key)
	require.NoError(r.t, err)
}

func (r *run) facts(id string) []facts.Fact {
	var out []facts.Fact
	for f, err := range r.store.Read(context.Background(), id, 1) {
		require.NoError(r.t, err)
		out = append(out, f)
	}
	return out
}

func kinds(fs []facts.Fact) []facts.Kind {
	var out []facts.Kind
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

// TestEndToEnd runs a thread through the harness against each fake server,
// streamed and not: the first call is refused with a 429 and retried by
// the harness, the model calls the write tool, the thread parks on the
// confirmation, a person approves, the tool runs, the model sees its
// result and finishes.
func TestEndToEnd(t *testing.T) {
	const args = `{"path":"cache.toml","content":"ttl_seconds = 300\n"}`
	for _, p := range providers {
		for _, streamed := range []bool{false, true} {
			name := p.name
			if streamed {
				name += "/streamed"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				// Streamed, the model leaves out the call's id: the
				// scheduler names it, and both sides of the next request
				// use that name.
				id, first, second := "call_1", p.calls("Setting the TTL.", [3]string{"call_1", "write_file", args}), p.text("Done: the TTL is 300.")
				if streamed {
					id = ""
					first = p.stream([]string{"Setting ", "the TTL."}, true, [3]string{"", "write_file", args})
					second = p.stream([]string{"Done: ", "the TTL is 300."}, true)
				}
				f := newFake(t, p.path, reply{status: 429, body: p.errBody("rate_limit_error", "slow down")}, first, second)
				var streamedText []string
				var opts []model.Option
				if streamed {
					opts = append(opts, model.WithStream(func(s string) { streamedText = append(streamedText, s) }))
				}
				r := newRun(t, p.open(t, f, opts...))
				ctx := context.Background()

				out, err := r.rt.Start(ctx, r.actor, "t", "Set the cache TTL to 300")
				require.NoError(t, err)
				require.Equal(t, harness.StatusParked, out.Status, out.Reason)
				require.Len(t, out.Waits, 1)
				require.Equal(t, fold.WaitConfirmation, out.Waits[0].Kind)
				require.Len(t, f.requests(), 2, "the 429 is retried by the harness, once")
				require.Empty(t, r.writes, "nothing runs before the approval")

				r.post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: out.Waits[0].RequestID, Approved: true, By: "ana"}, "approve")
				out, err = r.rt.Resume(ctx, r.actor, "t")
				require.NoError(t, err)
				require.Equal(t, harness.StatusDone, out.Status, out.Reason)
				require.Equal(t, []string{args}, r.writes, "the tool ran once, with the arguments as the model wrote them")
				require.Len(t, f.requests(), 3)

				log := r.facts("t")
				require.Equal(t, []facts.Kind{
					facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn, facts.KindActionRequested,
					facts.KindConfirmationRequested, facts.KindConfirmationAnswered, facts.KindActionStarted,
					facts.KindActionCompleted, facts.KindModelTurn,
				}, kinds(log), "no transition.failed: the retry is inside the turn")
				turn1, err := facts.Decode[facts.ModelTurn](log[2])
				require.NoError(t, err)
				require.Equal(t, "Setting the TTL.", turn1.Text)
				require.Len(t, turn1.ToolCalls, 1)
				if id == "" {
					id = turn1.ToolCalls[0].ID
					require.Equal(t, "call-1", id, "the scheduler names a call that came without an id")
				}
				require.Equal(t, facts.ToolCall{ID: id, Name: "write_file", Args: args}, turn1.ToolCalls[0])
				require.NotZero(t, turn1.Usage.InputTokens, "usage is recorded")
				last, err := facts.Decode[facts.ModelTurn](log[len(log)-1])
				require.NoError(t, err)
				require.Equal(t, "Done: the TTL is 300.", last.Text)
				if streamed {
					require.Equal(t, []string{"Setting ", "the TTL.", "Done: ", "the TTL is 300."}, streamedText)
				}

				// The second turn shows the model its call and the tool's
				// result under one id.
				callID, resultID, result := lastCallAndResult(t, p.name, f.request(t, 2))
				require.Equal(t, id, callID)
				require.Equal(t, id, resultID)
				require.Contains(t, result, "wrote cache.toml")
			})
		}
	}
}

// lastCallAndResult reads a request's last tool call and tool result.
func lastCallAndResult(t *testing.T, provider string, body map[string]any) (callID, resultID, result string) {
	t.Helper()
	for _, m := range body["messages"].([]any) {
		msg := m.(map[string]any)
		if provider == "openai" {
			if tcs, ok := msg["tool_calls"].([]any); ok {
				callID = tcs[len(tcs)-1].(map[string]any)["id"].(string)
			}
			if msg["role"] == "tool" {
				resultID, result = msg["tool_call_id"].(string), msg["content"].(string)
			}
			continue
		}
		content, ok := msg["content"].([]any)
		if !ok {
			continue
		}
		for _, b := range content {
			block := b.(map[string]any)
			switch block["type"] {
			case "tool_use":
				callID = block["id"].(string)
			case "tool_result":
				resultID = block["tool_use_id"].(string)
				result = jsonText(block["content"])
			}
		}
	}
	return callID, resultID, result
}

// TestEndToEndQuestion: the model asks through ask_person; the thread parks
// on the question; the answer is the next message the model sees.
func TestEndToEndQuestion(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		f := newFake(t, p.path, p.calls("", [3]string{"c1", model.AskTool, `{"text":"Which file?","options":["a.toml","b.toml"]}`}), p.text("Using b.toml."))
		r := newRun(t, p.open(t, f))
		ctx := context.Background()
		out, err := r.rt.Start(ctx, r.actor, "t", "Fix the config")
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, out.Status, out.Reason)
		require.Equal(t, fold.WaitQuestion, out.Waits[0].Kind)
		require.Equal(t, "Which file?", out.Waits[0].Summary)
		r.post("t", facts.KindQuestionAnswered, facts.QuestionAnswered{RequestID: out.Waits[0].RequestID, Text: "b.toml", By: "ana"}, "answer")
		out, err = r.rt.Resume(ctx, r.actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status, out.Reason)
		require.Contains(t, string(f.requests()[1]), "b.toml")
		require.Empty(t, r.writes)
	})
}

// TestEndToEndPermission: a 401 fails the turn with class permission and a
// message naming the key; nothing is retried.
func TestEndToEndPermission(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		f := newFake(t, p.path, reply{status: 401, body: p.errBody("authentication_error", "invalid api key")}, p.text("Hello."))
		r := newRun(t, p.open(t, f))
		out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
		require.NoError(t, err)
		require.Len(t, f.requests(), 1, "a permission failure is not retried")
		log := r.facts("t")
		failed, err := facts.Decode[facts.TransitionFailed](log[len(log)-1])
		require.NoError(t, err)
		require.Equal(t, facts.ClassPermission, failed.Class)
		require.Contains(t, failed.Message, "check "+p.keyVar)
		require.Equal(t, harness.StatusFailed, out.Status)
		require.Contains(t, out.Reason, "check "+p.keyVar, "the reason a person reads names the key")
	})
}
