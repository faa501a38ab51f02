package harness_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// The benchmarks measure the runtime against the store doing the raw part
// of the same work in the same run, interleaved op by op so that drift in
// the disk's speed hits both alike, and report ratio = runtime rate / raw
// rate. ns/op is the runtime's alone.

// benchFacts is the length of the parked thread BenchmarkResumeParked
// resumes.
const benchFacts = 100_000

// BenchmarkResumeParked resumes a parked 100,000-fact coding thread on a
// store that keeps no snapshots (as a NATS store, or when none fits): the
// runtime reads and folds every fact, projects once, finds the thread
// waiting for a confirmation, and runs nothing. The baseline is Store.Read
// iterating every fact of the same thread. (BenchmarkResumeSnapshot is the
// same resume from a snapshot.) Two threads:
//
//	tool-loop: a long coding session — model turns each calling a read
//	           tool, and the tool's request, start and completion — that
//	           the scheduler decodes fact by fact;
//	notes:     the same start, then facts of a kind no component reads
//	           (an application's notes), so the fold only steps over them.
//
// Both end with a model turn whose write call waits for a confirmation.
func BenchmarkResumeParked(b *testing.B) {
	for _, shape := range []string{"tool-loop", "notes"} {
		b.Run("thread="+shape, func(b *testing.B) {
			benchResumeParked(b, shape)
		})
	}
}

func benchResumeParked(b *testing.B, shape string) {
	ctx := context.Background()
	s := openBenchStore(b)
	const id = "long"
	buildParked(b, s, id, shape, benchFacts)

	calls := 0
	m := modelFunc(func(context.Context, model.Request) (model.Decision, error) {
		calls++
		return model.Decision{}, errors.New("a parked thread called the model")
	})
	tools := codingTools(b, func(context.Context, string, string) (facts.Report, error) {
		return facts.Report{}, errors.New("a parked thread ran a tool")
	})
	cfg, err := harness.NewConfig()
	require.NoError(b, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(b, err)
	rt, err := harness.NewRuntime(blind{s}, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(b, err)

	var readT, resumeT time.Duration
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		n := 0
		for f, err := range s.Read(ctx, id, 1) {
			if err != nil {
				b.Fatal(err)
			}
			n += len(f.Data) & 0 // touch the fact
			n++
		}
		readT += time.Since(start)
		require.Equal(b, benchFacts, n)
		b.StartTimer()

		start = time.Now()
		out, err := rt.Resume(ctx, actor, id)
		resumeT += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if out.Status != harness.StatusParked || out.Steps != 0 || out.Seq != benchFacts {
			b.Fatalf("resume: %+v, want parked at seq %d with no step", out, benchFacts)
		}
	}
	require.Zero(b, calls)
	total := float64(b.N) * benchFacts
	b.ReportMetric(total/resumeT.Seconds(), "facts/s")
	b.ReportMetric(total/readT.Seconds(), "read-facts/s")
	b.ReportMetric(readT.Seconds()/resumeT.Seconds(), "ratio")
}

// buildParked appends a parked coding thread of benchFacts facts (at
// least 5) of the given shape to s, in batches of 1,000, as the runtime
// would have written it. Whether the runtime reads it so — parked, nothing
// to run — the benchmarks check on every resume.
func buildParked(b testing.TB, s thread.Store, id, shape string, benchFacts int) {
	ctx := context.Background()
	var batch []facts.Draft
	var head uint64
	n := 0 // facts added
	add := func(kind facts.Kind, cause string, payload any) {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(b, err)
		batch = append(batch, d)
		n++
		if len(batch) == 1000 || n == benchFacts {
			h, err := s.Append(ctx, id, head, batch...)
			require.NoError(b, err)
			head, batch = h.Seq, batch[:0]
		}
	}
	// request adds the action.requested of a model's call, as the
	// scheduler records it before anything runs or anyone is asked.
	request := func(ref, callID, tool string, needs action.Capability, args string) {
		add(facts.KindActionRequested, "tool/request/"+ref, facts.ActionRequested{
			ActionID: ref, CallID: callID, Capability: string(needs), Instruction: tool + " " + args,
			IdempotencyKey: "tool/execute/" + ref, RequestedBy: "coding-actor", ActorID: "coding-actor", Adapter: tool,
			Payload: facts.RawJSON(args), Confirm: needs != action.Read,
		})
	}
	add(facts.KindUserMessage, facts.IngressCause(harness.StartKey), facts.UserMessage{Text: "Find why the session cache expires early and fix it."})
	add(facts.KindSystemConfigured, "system/configure", facts.SystemConfigured{
		Prompt: harness.DefaultSystemPrompt, Model: "bench", Version: "bench",
		Tools: []facts.ToolSchema{{Name: "write_file"}, {Name: "read_file"}, {Name: "run_command"}},
	})
	// The last model turn, its request and the confirmation it waits for.
	const tail = 3
	turn := 0
	switch shape {
	case "tool-loop":
		for benchFacts-tail-n >= 4 {
			turn++
			ref := fmt.Sprintf("%d-call_1", turn)
			args := fmt.Sprintf(`{"path":"internal/auth/file%05d.go"}`, turn)
			add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{
				Turn:      turn,
				Text:      "Reading the next file to find where the session expires.",
				ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "read_file", Args: args}},
				Usage:     facts.Usage{InputTokens: 18000, OutputTokens: 200},
			})
			request(ref, "call_1", "read_file", action.Read, args)
			add(facts.KindActionStarted, "tool/start/"+ref, facts.ActionStarted{ActionID: ref})
			add(facts.KindActionCompleted, "tool/execute/"+ref, facts.ActionCompleted{
				ActionID:    ref,
				Report:      facts.Report{Status: facts.StatusSucceeded, Stdout: strings.Repeat("func expire(s *Session) { s.ttl = 0 }\n", 5)},
				EffectState: facts.EffectReported,
			})
		}
		// The person added remarks while the agent read.
		for i := 1; benchFacts-tail-n > 0; i++ {
			add(facts.KindUserMessage, facts.IngressCause("remark-"+strconv.Itoa(i)), facts.UserMessage{Text: "Look at the refresh path too."})
		}
	case "notes":
		for i := 1; benchFacts-tail-n > 0; i++ {
			add("app.note", "note/"+strconv.Itoa(i), map[string]any{"text": "build 4711 is green", "n": i})
		}
	default:
		b.Fatalf("unknown shape %q", shape)
	}
	turn++
	ref := fmt.Sprintf("%d-call_1", turn)
	args := `{"path":"internal/auth/session.go","content":"ttl = 300"}`
	add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{
		Turn: turn, Text: "Setting the TTL.", ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "write_file", Args: args}},
	})
	request(ref, "call_1", "write_file", action.Write, args)
	add(facts.KindConfirmationRequested, "confirm/"+ref, facts.ConfirmationRequested{
		RequestID: ref, CallID: ref, Tool: "write_file", Args: args, Digest: scheduler.Digest("write_file", args),
	})
	require.Empty(b, batch, "every fact is appended")
	require.EqualValues(b, benchFacts, head)
}

// modelFunc is a model made of a function.
type modelFunc func(context.Context, model.Request) (model.Decision, error)

func (f modelFunc) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	return f(ctx, req)
}

func openBenchStore(b testing.TB) *thread.PebbleStore {
	s, err := thread.OpenPebble(b.TempDir())
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, s.Close()) })
	return s
}

// benchSteps is how many steps one op of BenchmarkSteps runs.
const benchSteps = 100

// BenchmarkSteps runs an actor whose transitions do no I/O: each appends
// one small fact, until benchSteps have run. Every step is the runtime's
// whole loop — project, run the effect, append with a sync, fold what was
// appended. The baseline appends the same facts to the store directly, one
// synced append each.
func BenchmarkSteps(b *testing.B) {
	ctx := context.Background()
	s := openBenchStore(b)
	drafts := make([]facts.Draft, benchSteps)
	for i := range drafts {
		d, err := facts.NewDraft(stepKind, "step/"+strconv.Itoa(i+1), map[string]any{"n": i + 1})
		require.NoError(b, err)
		drafts[i] = d
	}
	start, err := facts.NewDraft("bench.start", facts.IngressCause(harness.StartKey), nil)
	require.NoError(b, err)
	actor := harness.Actor{Name: "stepper", New: func() []fold.Component[harness.Services] {
		return []fold.Component[harness.Services]{&stepper{drafts: drafts}}
	}}
	cfg, err := harness.NewConfig(harness.WithMaxSteps(benchSteps))
	require.NoError(b, err)
	rt, err := harness.NewRuntime(s, harness.Services{}, cfg)
	require.NoError(b, err)

	var rawT, stepT time.Duration
	op := 0
	for b.Loop() {
		op++
		b.StopTimer()
		raw, steps := fmt.Sprintf("raw-%d", op), fmt.Sprintf("steps-%d", op)
		_, err := s.Append(ctx, raw, 0, start)
		require.NoError(b, err)
		_, err = s.Append(ctx, steps, 0, start)
		require.NoError(b, err)
		runRaw := func() {
			b.StopTimer()
			defer b.StartTimer()
			t0 := time.Now()
			for i, d := range drafts {
				if _, err := s.Append(ctx, raw, uint64(i+1), d); err != nil {
					b.Fatal(err)
				}
			}
			rawT += time.Since(t0)
		}
		runSteps := func() {
			t0 := time.Now()
			out, err := rt.Resume(ctx, actor, steps)
			stepT += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if out.Status != harness.StatusDone || out.Steps != benchSteps {
				b.Fatalf("resume: %+v, want done after %d steps", out, benchSteps)
			}
		}
		b.StartTimer()
		// Take turns going first, so that neither always follows the
		// other's syncs.
		if op%2 == 0 {
			runRaw()
			runSteps()
		} else {
			runSteps()
			runRaw()
		}
	}
	total := float64(b.N) * benchSteps
	b.ReportMetric(total/stepT.Seconds(), "steps/s")
	b.ReportMetric(total/rawT.Seconds(), "raw-appends/s")
	b.ReportMetric(rawT.Seconds()/stepT.Seconds(), "ratio")
}

// stepKind is the kind of the facts the stepper appends.
const stepKind facts.Kind = "bench.step"

// stepper is a component that enables step/N, appending the Nth of its
// drafts, until every draft is appended. Its effects do nothing but return
// the draft.
type stepper struct {
	drafts []facts.Draft
	done   int
}

func (s *stepper) Name() string { return "stepper" }

func (s *stepper) Step(f facts.Fact) error {
	if f.Kind == stepKind {
		s.done++
	}
	return nil
}

func (s *stepper) Output() fold.Output[harness.Services] {
	if s.done >= len(s.drafts) {
		return fold.Output[harness.Services]{View: s.done}
	}
	return fold.Output[harness.Services]{View: s.done, Transitions: []fold.Transition[harness.Services]{{
		Key:    "step/" + strconv.Itoa(s.done+1),
		Effect: effect.Succeed[harness.Services]([]facts.Draft{s.drafts[s.done]}),
	}}}
}
