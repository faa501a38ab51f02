package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// TestProviderEndToEnd runs threads through the runtime against fake
// servers that speak each provider's API. It lives beside the runtime:
// the providers' own suites (internal/providertest) import nothing above
// the model packages.
func TestProviderEndToEnd(t *testing.T) {
	for _, p := range []providertest.Provider{providertest.OpenAI, providertest.Anthropic} {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			for _, part := range []struct {
				name string
				run  func(t *testing.T, p providertest.Provider)
			}{
				{"EndToEnd", endToEnd},
				{"EndToEndQuestion", endToEndQuestion},
				{"EndToEndPermission", endToEndPermission},
				{"EndToEndRetryAfter", endToEndRetryAfter},
				{"EndToEndRetryAfterPastTheCap", endToEndRetryAfterPastTheCap},
				{"EndToEndStreamCut", endToEndStreamCut},
				{"EndToEndStreamKeepsDropping", endToEndStreamKeepsDropping},
				{"EndToEndCutOff", endToEndCutOff},
				{"EndToEndRestart", endToEndRestart},
				{"EndToEndAttempts", endToEndAttempts},
				{"EndToEndContextOverflow", endToEndContextOverflow},
				{"EndToEndFirstTurnOverflow", endToEndFirstTurnOverflow},
			} {
				t.Run(part.name, func(t *testing.T) {
					t.Parallel()
					part.run(t, p)
				})
			}
		})
	}
}

// run is a harness runtime on a real Pebble store, with a provider as its
// model and one write tool that records its calls.
type run struct {
	t     *testing.T
	store *thread.PebbleStore
	rt    *harness.Runtime
	actor harness.Actor

	mu     sync.Mutex
	writes []string
	waits  []wait
	// mark, when set, is called too when Services.OnModelWait is.
	mark func()
}

// wait is what Services.OnModelWait was told.
type wait struct {
	attempt int
	wait    time.Duration
	err     error
}

func newRun(t *testing.T, m model.Model, opts ...harness.Option) *run {
	t.Helper()
	r := &run{t: t}
	var err error
	r.store, err = thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.store.Close()) })
	tb, err := harness.NewToolbox(harness.Tool{Spec: providertest.WriteSchema, Needs: action.Write,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			r.mu.Lock()
			r.writes = append(r.writes, string(args))
			r.mu.Unlock()
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "wrote cache.toml"}, nil
		}})
	require.NoError(t, err)
	cfg, err := harness.NewConfig(append([]harness.Option{harness.WithModelBackoff(0)}, opts...)...)
	require.NoError(t, err)
	r.actor, err = harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	svc := harness.Services{Model: m, Tools: tb, OnModelWait: r.onWait}
	r.rt, err = harness.NewRuntime(r.store, svc, cfg)
	require.NoError(t, err)
	return r
}

func (r *run) onWait(attempt int, d time.Duration, err error) {
	r.mu.Lock()
	r.waits = append(r.waits, wait{attempt, d, err})
	mark := r.mark
	r.mu.Unlock()
	if mark != nil {
		mark()
	}
}

func (r *run) told() []wait {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wait(nil), r.waits...)
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

// endToEnd runs a thread through the harness against the fake server,
// streamed and not: the first call is refused with a 429 and retried by
// the harness, the model calls the write tool, the thread parks on the
// confirmation, a person approves, the tool runs, the model sees its
// result and finishes.
func endToEnd(t *testing.T, p providertest.Provider) {
	const args = `{"path":"cache.toml","content":"ttl_seconds = 300\n"}`
	for _, streamed := range []bool{false, true} {
		name := "plain"
		if streamed {
			name = "streamed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// Streamed, the model leaves out the call's id: the
			// scheduler names it, and both sides of the next request
			// use that name.
			id, first, second := "call_1", p.Calls("Setting the TTL.", [3]string{"call_1", "write_file", args}), p.Text("Done: the TTL is 300.")
			if streamed {
				id = ""
				first = p.Stream([]string{"Setting ", "the TTL."}, true, [3]string{"", "write_file", args})
				second = p.Stream([]string{"Done: ", "the TTL is 300."}, true)
			}
			f := providertest.NewFake(t, p.Path, providertest.Reply{Status: 429, Body: p.ErrBody("rate_limit_error", "slow down")}, first, second)
			var streamedText []string
			var opts []model.Option
			if streamed {
				opts = append(opts, model.WithStream(func(s string) { streamedText = append(streamedText, s) }))
			}
			r := newRun(t, p.Open(t, f, opts...))
			ctx := context.Background()

			out, err := r.rt.Start(ctx, r.actor, "t", "Set the cache TTL to 300")
			require.NoError(t, err)
			require.Equal(t, harness.StatusParked, out.Status, out.Reason)
			require.Len(t, out.Waits, 1)
			require.Equal(t, fold.WaitConfirmation, out.Waits[0].Kind)
			require.Len(t, f.Requests(), 2, "the 429 is retried by the harness, once")
			require.Empty(t, r.writes, "nothing runs before the approval")

			r.post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: out.Waits[0].RequestID, Approved: true, By: "ana"}, "approve")
			out, err = r.rt.Resume(ctx, r.actor, "t")
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status, out.Reason)
			require.Equal(t, []string{args}, r.writes, "the tool ran once, with the arguments as the model wrote them")
			require.Len(t, f.Requests(), 3)

			log := r.facts("t")
			require.Equal(t, []facts.Kind{
				facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelCallFailed, facts.KindModelTurn, facts.KindActionRequested,
				facts.KindConfirmationRequested, facts.KindConfirmationAnswered, facts.KindActionStarted,
				facts.KindActionCompleted, facts.KindModelTurn,
			}, kinds(log), "no transition.failed: the retry is inside the turn, its failed call a fact before it")
			turn1, err := facts.Decode[facts.ModelTurn](log[3])
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
			callID, resultID, result := p.LastCallAndResult(t, f.Request(t, 2))
			require.Equal(t, id, callID)
			require.Equal(t, id, resultID)
			require.Contains(t, result, "wrote cache.toml")
		})
	}
}

// endToEndQuestion: the model asks through ask_person; the thread parks
// on the question; the answer is the next message the model sees.
func endToEndQuestion(t *testing.T, p providertest.Provider) {
	f := providertest.NewFake(t, p.Path, p.Calls("", [3]string{"c1", model.AskTool, `{"text":"Which file?","options":["a.toml","b.toml"]}`}), p.Text("Using b.toml."))
	r := newRun(t, p.Open(t, f))
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
	require.Contains(t, string(f.Requests()[1]), "b.toml")
	require.Empty(t, r.writes)
}

// endToEndPermission: a 401 fails the turn with class permission and a
// message naming the key; nothing is retried.
func endToEndPermission(t *testing.T, p providertest.Provider) {
	f := providertest.NewFake(t, p.Path, providertest.Reply{Status: 401, Body: p.ErrBody("authentication_error", "invalid api key")}, p.Text("Hello."))
	r := newRun(t, p.Open(t, f))
	out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
	require.NoError(t, err)
	require.Len(t, f.Requests(), 1, "a permission failure is not retried")
	log := r.facts("t")
	failed, err := facts.Decode[facts.TransitionFailed](log[len(log)-1])
	require.NoError(t, err)
	require.Equal(t, facts.ClassPermission, failed.Class)
	require.Contains(t, failed.Message, "check "+p.KeyVar)
	require.Equal(t, harness.StatusFailed, out.Status)
	require.Contains(t, out.Reason, "check "+p.KeyVar, "the reason a person reads names the key")
}

// endToEndCutOff: an answer the server stopped at its limit is never the
// thread's answer. It is recorded as a cut model.turn (its stop reason, its
// text) and the model is asked to go on in the next turn, which sees what
// came and the notice; a tool call cut mid-arguments never runs, and the
// model is told so. Cut off MaxCutInARow turns in a row, the thread fails
// (invalid_output), never done, and a resume tries once more.
func endToEndCutOff(t *testing.T, p providertest.Provider) {
	for _, streamed := range []bool{false, true} {
		t.Run(fmt.Sprint("streamed=", streamed), func(t *testing.T) {
			t.Parallel()
			cut, whole := p.Cut(p.Text("The TTL is in")), p.Text("Done.")
			cutCall := p.Cut(p.Calls("", [3]string{"call_1", "write_file", `{"path":"cache.toml"}`}))
			var opts []model.Option
			if streamed {
				cut, whole = p.Cut(p.Stream([]string{"The TTL ", "is in"}, true)), p.Stream([]string{"Done."}, true)
				cutCall = p.Cut(p.Stream(nil, true, [3]string{"call_1", "write_file", `{"path":"cache.toml","content":"tt`}))
				opts = append(opts, model.WithStream(func(string) {}))
			}
			f := providertest.NewFake(t, p.Path, cut, cutCall, whole)
			r := newRun(t, p.Open(t, f, opts...))
			out, err := r.rt.Start(context.Background(), r.actor, "t", "Where is the TTL?")
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status, out.Reason)
			require.Len(t, f.Requests(), 3, "each cut answer is followed by one more turn")
			log := r.facts("t")
			require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn, facts.KindModelTurn, facts.KindModelTurn}, kinds(log))
			first, err := facts.Decode[facts.ModelTurn](log[2])
			require.NoError(t, err)
			require.Equal(t, "The TTL is in", first.Text)
			require.NotNil(t, first.Cut)
			require.Equal(t, 1, first.Cut.InARow)
			require.NotEmpty(t, first.StopReason, "model.turn records the provider's stop reason")
			second, err := facts.Decode[facts.ModelTurn](log[3])
			require.NoError(t, err)
			require.NotNil(t, second.Cut)
			require.Equal(t, []string{"write_file"}, second.Cut.Calls)
			require.Empty(t, second.ToolCalls, "a call cut mid-arguments is not recorded as one to run")
			require.Equal(t, 2, second.Cut.InARow)
			// The turn after each cut sees what came and is told.
			require.Contains(t, string(f.Requests()[1]), "The TTL is in")
			require.Contains(t, string(f.Requests()[1]), "Continue exactly where it stopped")
			require.Contains(t, string(f.Requests()[2]), "did not run")
			last, err := facts.Decode[facts.ModelTurn](log[4])
			require.NoError(t, err)
			require.Equal(t, "Done.", last.Text)
			require.Nil(t, last.Cut)
		})
	}
	t.Run("cut every turn", func(t *testing.T) {
		t.Parallel()
		cut := p.Cut(p.Text("The TTL is in"))
		f := providertest.NewFake(t, p.Path, cut, cut, cut, p.Text("Done."))
		r := newRun(t, p.Open(t, f))
		out, err := r.rt.Start(context.Background(), r.actor, "t", "Where is the TTL?")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status, "a thread whose answers keep being cut is never done")
		require.Contains(t, out.Reason, "cut off")
		require.Contains(t, out.Reason, string(facts.ClassInvalidOutput))
		require.Contains(t, out.Reason, "resume", "the reason says what to do")
		require.Len(t, f.Requests(), scheduler.MaxCutInARow)

		// Once the limit is raised (here: the server answers whole),
		// resuming takes the next turn.
		out, err = r.rt.Resume(context.Background(), r.actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status, out.Reason)
		log := r.facts("t")
		last, err := facts.Decode[facts.ModelTurn](log[len(log)-1])
		require.NoError(t, err)
		require.Equal(t, "Done.", last.Text)
	})
}

// endToEndContextOverflow: a turn the server refuses as longer than its
// context compacts the conversation and is tried once more, in the same
// run; refused again after that, the run stops failed, with one
// compaction, and a later resume tries again.
func endToEndContextOverflow(t *testing.T, p providertest.Provider) {
	for _, twice := range []bool{false, true} {
		t.Run(fmt.Sprint("refused twice=", twice), func(t *testing.T) {
			t.Parallel()
			over := p.Overflow[0]
			replies := []providertest.Reply{p.Text("Hello."), over, p.Text("Done.")}
			if twice {
				replies = []providertest.Reply{p.Text("Hello."), over, over, p.Text("Done.")}
			}
			f := providertest.NewFake(t, p.Path, replies...)
			r := newRun(t, p.Open(t, f))
			ctx := context.Background()
			out, err := r.rt.Start(ctx, r.actor, "t", "Say hello.")
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status, out.Reason)
			r.post("t", facts.KindUserMessage, facts.UserMessage{Text: "Now set the TTL to 300."}, "m2")
			out, err = r.rt.Resume(ctx, r.actor, "t")
			require.NoError(t, err)
			log := r.facts("t")
			want := []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn, facts.KindUserMessage,
				facts.KindModelCallFailed, facts.KindTransitionFailed, facts.KindContextCompacted}
			if twice {
				require.Equal(t, harness.StatusFailed, out.Status)
				require.Contains(t, out.Reason, "context size")
				require.Equal(t, append(want, facts.KindModelCallFailed, facts.KindTransitionFailed), kinds(log), "one compaction, then the run stops")
				require.Len(t, f.Requests(), 3)
				out, err = r.rt.Resume(ctx, r.actor, "t")
				require.NoError(t, err)
				log = r.facts("t")
				want = append(want, facts.KindModelCallFailed, facts.KindTransitionFailed)
			} else {
				require.Len(t, f.Requests(), 3)
			}
			require.Equal(t, harness.StatusDone, out.Status, out.Reason)
			require.Equal(t, append(want, facts.KindModelTurn), kinds(log))
			failed, err := facts.Decode[facts.TransitionFailed](log[5])
			require.NoError(t, err)
			require.Equal(t, facts.ClassContextOverflow, failed.Class)
			// The turn after the compaction sends the summary, not the
			// conversation it covers.
			body := string(f.Requests()[len(f.Requests())-1])
			require.Contains(t, body, "Summary of the conversation so far")
			require.Equal(t, 1, strings.Count(body, "Hello."), "the model's answer is only in the summary")
		})
	}
}

// endToEndFirstTurnOverflow: a first message too long for the model's
// context leaves nothing to compact: the thread fails at once, as any turn
// does, and is not left resumable (a worker would call again and again).
func endToEndFirstTurnOverflow(t *testing.T, p providertest.Provider) {
	f := providertest.NewFake(t, p.Path, p.Overflow[0])
	r := newRun(t, p.Open(t, f))
	out, err := r.rt.Start(context.Background(), r.actor, "t", "A very long first message.")
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status)
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelCallFailed, facts.KindTransitionFailed}, kinds(r.facts("t")))
	require.Equal(t, facts.ClassContextOverflow, r.lastFailure("t").Class)
	v, err := r.rt.View(context.Background(), r.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, v.Status)
	require.Len(t, f.Requests(), 1)
}

// lastFailure decodes the thread's last fact as a transition.failed.
func (r *run) lastFailure(id string) facts.TransitionFailed {
	log := r.facts(id)
	require.Equal(r.t, facts.KindTransitionFailed, log[len(log)-1].Kind)
	failed, err := facts.Decode[facts.TransitionFailed](log[len(log)-1])
	require.NoError(r.t, err)
	return failed
}

// rateLimited is a 429 whose header says name: value, pair by pair.
func rateLimited(p providertest.Provider, h ...string) providertest.Reply {
	r := providertest.Reply{Status: 429, Body: p.ErrBody("rate_limit_error", "slow down"), Header: make(map[string][]string)}
	for i := 0; i+1 < len(h); i += 2 {
		r.Header.Set(h[i], h[i+1])
	}
	return r
}

// endToEndRetryAfter: the harness waits as long as the server asks, in each
// of the forms it asks in, even with no backoff of its own, and says so.
func endToEndRetryAfter(t *testing.T, p providertest.Provider) {
	date := time.Now().UTC().Truncate(time.Second)
	f := providertest.NewFake(t, p.Path,
		rateLimited(p, "Retry-After-Ms", "300"),
		rateLimited(p, "Retry-After", "1"),
		rateLimited(p, "Date", date.Format(http.TimeFormat), "Retry-After", date.Add(time.Second).Format(http.TimeFormat)),
		p.Text("Done."))
	r := newRun(t, p.Open(t, f), func(c *harness.Config) { c.ModelAttempts = 4 })
	out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured,
		facts.KindModelCallFailed, facts.KindModelCallFailed, facts.KindModelCallFailed, facts.KindModelTurn}, kinds(r.facts("t")),
		"the waits are inside the turn, each failed call a fact before it")

	told := r.told()
	want := []time.Duration{300 * time.Millisecond, time.Second, time.Second}
	require.Len(t, told, len(want))
	arrived := f.Arrived()
	require.Len(t, arrived, 4)
	for i, w := range told {
		require.Equal(t, i+1, w.attempt)
		require.Equal(t, want[i], w.wait, "wait %d is the server's", i+1)
		require.Equal(t, "rate limited by "+p.Name+" (429)", model.Reason(w.err))
		gap := arrived[i+1].Sub(arrived[i])
		require.GreaterOrEqual(t, gap, want[i], "wait %d was honoured", i+1)
		require.Less(t, gap, want[i]+5*time.Second)
	}
}

// endToEndRetryAfterPastTheCap: a server asking for a longer wait than
// Config.ModelMaxWait fails the turn at once, as transient, saying how long
// it asked.
func endToEndRetryAfterPastTheCap(t *testing.T, p providertest.Provider) {
	tests := []struct {
		name   string
		opts   []harness.Option
		after  string
		says   string
		within time.Duration
	}{
		{"the default cap of a minute", nil, "120", "the server asked to wait 2m0s before a retry, longer than Config.ModelMaxWait (1m0s)", 0},
		{"a cap set lower", []harness.Option{func(c *harness.Config) { c.ModelMaxWait = 500 * time.Millisecond }}, "1", "the server asked to wait 1s before a retry, longer than Config.ModelMaxWait (500ms)", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := providertest.NewFake(t, p.Path, rateLimited(p, "Retry-After", tc.after), p.Text("never"))
			r := newRun(t, p.Open(t, f), tc.opts...)
			start := time.Now()
			out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
			require.NoError(t, err)
			require.Less(t, time.Since(start), 30*time.Second, "nothing waits") // not the 2 minutes asked (30 s is room for a loaded machine)
			require.Equal(t, harness.StatusFailed, out.Status)
			require.Len(t, f.Requests(), 1)
			require.Empty(t, r.told(), "no wait is made")
			failed := r.lastFailure("t")
			require.Equal(t, facts.ClassTransient, failed.Class)
			require.Contains(t, failed.Message, tc.says)
			require.Contains(t, failed.Message, "slow down")
		})
	}
}

// endToEndStreamCut: a stream that ends early, then one cut off, then one
// that completes: the turn is tried again each time, the consumer of the
// streamed text is told of each restart, and the decision has the last
// stream's text only.
func endToEndStreamCut(t *testing.T, p providertest.Provider) {
	var mu sync.Mutex
	var shown []string
	show := func(s string) { mu.Lock(); shown = append(shown, s); mu.Unlock() }
	cut := p.Stream([]string{"Setting "}, false)
	cut.Abort = true
	f := providertest.NewFake(t, p.Path, p.Stream([]string{"Setting ", "the"}, false), cut, p.Stream([]string{"Setting ", "the TTL."}, true))
	r := newRun(t, p.Open(t, f, model.WithStream(show)))
	r.mark = func() { show("<restart>") }
	out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status, out.Reason)
	require.Len(t, f.Requests(), 3)

	log := r.facts("t")
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelCallFailed, facts.KindModelCallFailed, facts.KindModelTurn}, kinds(log),
		"nothing of a cut stream is recorded but that it was cut")
	turn, err := facts.Decode[facts.ModelTurn](log[4])
	require.NoError(t, err)
	require.Equal(t, "Setting the TTL.", turn.Text, "the text is not doubled")

	mu.Lock()
	require.Equal(t, []string{"Setting ", "the", "<restart>", "Setting ", "<restart>", "Setting ", "the TTL."}, shown)
	mu.Unlock()
	told := r.told()
	require.Len(t, told, 2)
	for _, w := range told {
		require.ErrorIs(t, w.err, model.ErrStreamCut)
		require.True(t, model.IsTransient(w.err))
		require.Equal(t, "the stream from "+p.Name+" was cut off", model.Reason(w.err))
	}
}

// endToEndRestart: a server that refuses connections while it restarts is
// tried again, streamed or not, and the turn goes on once it listens; the
// wait is told.
func endToEndRestart(t *testing.T, p providertest.Provider) {
	for _, streamed := range []bool{false, true} {
		t.Run(fmt.Sprint("streamed=", streamed), func(t *testing.T) {
			reply := p.Text("Back.")
			var opts []model.Option
			if streamed {
				reply = p.Stream([]string{"Back."}, true)
				opts = append(opts, model.WithStream(func(string) {}))
			}
			f := providertest.NewFake(t, p.Path, reply)
			m := p.Open(t, f, opts...)
			up := f.Down(t)
			r := newRun(t, m)
			var once sync.Once
			r.mark = func() { once.Do(up) }
			out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
			require.NoError(t, err)
			require.Equal(t, harness.StatusDone, out.Status, out.Reason)
			require.Equal(t, facts.KindModelTurn, kinds(r.facts("t"))[len(r.facts("t"))-1])
			require.NotContains(t, kinds(r.facts("t")), facts.KindTransitionFailed)
			require.Contains(t, kinds(r.facts("t")), facts.KindModelCallFailed, "the refused call is in the log")
			told := r.told()
			require.Len(t, told, 1)
			require.True(t, model.IsTransient(told[0].err))
			require.Contains(t, model.Reason(told[0].err), "is the server running?")
		})
	}
}

// endToEndAttempts: every failed call of a turn is a fact of its own —
// two 500s then an answer leave two model.call_failed then the model.turn
// (three facts, one cause), with their class, status, body and wait; a
// turn whose every call fails leaves each before its transition.failed,
// and replay --verify accepts both.
func endToEndAttempts(t *testing.T, p providertest.Provider) {
	boom := providertest.Reply{Status: 500, Body: p.ErrBody("api_error", "boom")}
	calls := func(log []facts.Fact) (out []facts.ModelAttempt, causes []string) {
		for _, f := range log {
			if f.Kind == facts.KindModelCallFailed {
				a, err := facts.Decode[facts.ModelAttempt](f)
				require.NoError(t, err)
				out, causes = append(out, a), append(causes, f.Cause)
			}
		}
		return out, causes
	}
	t.Run("then an answer", func(t *testing.T) {
		f := providertest.NewFake(t, p.Path, boom, boom, p.Text("Fine."))
		r := newRun(t, p.Open(t, f), harness.WithModelBackoff(20*time.Millisecond))
		out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status, out.Reason)
		log := r.facts("t")
		require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured,
			facts.KindModelCallFailed, facts.KindModelCallFailed, facts.KindModelTurn}, kinds(log))
		turn, err := facts.Decode[facts.ModelTurn](log[len(log)-1])
		require.NoError(t, err)
		require.Empty(t, turn.Attempts, "the failed calls are facts of their own")
		as, causes := calls(log)
		require.Len(t, as, 2)
		for i, a := range as {
			require.Equal(t, "infer/turn/1", causes[i])
			require.Equal(t, 1, a.Turn)
			require.Equal(t, i+1, a.Attempt)
			require.Equal(t, facts.ClassTransient, a.Class)
			require.Equal(t, 500, a.Status)
			require.Contains(t, a.Body, "boom")
			require.Contains(t, a.Message, "boom")
			require.GreaterOrEqual(t, a.WaitMS, int64(10), "the wait before the next call is kept")
		}
		require.Len(t, f.Requests(), 3)
		require.NoError(t, audit.VerifyLog(context.Background(), r.store, r.actor, "t"))
	})
	t.Run("none answers", func(t *testing.T) {
		f := providertest.NewFake(t, p.Path, boom)
		r := newRun(t, p.Open(t, f))
		out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		log := r.facts("t")
		require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured,
			facts.KindModelCallFailed, facts.KindModelCallFailed, facts.KindModelCallFailed, facts.KindTransitionFailed}, kinds(log))
		as, causes := calls(log)
		require.Len(t, as, 3, "the default is three calls")
		require.Equal(t, "infer/turn/1/failed/1", causes[0])
		require.Equal(t, 500, as[2].Status)
		require.Zero(t, as[2].WaitMS, "no wait after the last")
		require.NoError(t, audit.VerifyLog(context.Background(), r.store, r.actor, "t"))
	})
}

// endToEndStreamKeepsDropping: a stream cut off at every attempt fails the
// turn as transient once the attempts are spent, and records no turn.
func endToEndStreamKeepsDropping(t *testing.T, p providertest.Provider) {
	cut := p.Stream([]string{"Setting "}, false)
	cut.Abort = true
	f := providertest.NewFake(t, p.Path, cut)
	var shown strings.Builder
	r := newRun(t, p.Open(t, f, model.WithStream(func(s string) { shown.WriteString(s) })), func(c *harness.Config) { c.ModelAttempts = 3 })
	out, err := r.rt.Start(context.Background(), r.actor, "t", "hi")
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status)
	require.Len(t, f.Requests(), 3, "tried as often as ModelAttempts says")
	require.Len(t, r.told(), 2)
	require.Equal(t, "Setting Setting Setting ", shown.String())
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured,
		facts.KindModelCallFailed, facts.KindModelCallFailed, facts.KindModelCallFailed, facts.KindTransitionFailed}, kinds(r.facts("t")))
	failed := r.lastFailure("t")
	require.Equal(t, facts.ClassTransient, failed.Class)
	require.Contains(t, failed.Message, model.ErrStreamCut.Error())
	require.Equal(t, 3, failed.Attempt)
}
