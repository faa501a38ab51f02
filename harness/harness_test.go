package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// recording is a model that answers from a script and keeps every request.
type recording struct {
	script *model.Scripted
	mu     sync.Mutex
	reqs   []model.Request
}

func (r *recording) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.script.Turn(ctx, req)
}

func (r *recording) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func (r *recording) last() model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

// env is a runtime on a real Pebble store with a scripted model and a
// toolbox whose tools count their runs.
type env struct {
	t       *testing.T
	store   *thread.PebbleStore
	model   *recording
	runs    atomic.Int64
	args    []string
	rt      *harness.Runtime[harness.Services]
	actor   harness.Actor[harness.Services]
	toolbox *harness.Toolbox
}

func newEnv(t *testing.T, script string, opts ...harness.Option) *env {
	t.Helper()
	s, err := model.ParseScript("test", []byte(script))
	require.NoError(t, err)
	e := &env{t: t, model: &recording{script: s}}
	e.store, err = thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.store.Close()) })
	var mu sync.Mutex
	record := func(_ context.Context, args json.RawMessage) (facts.Report, error) {
		e.runs.Add(1)
		mu.Lock()
		e.args = append(e.args, string(args))
		mu.Unlock()
		return facts.Report{Status: facts.StatusSucceeded, Stdout: "ok"}, nil
	}
	e.toolbox, err = harness.NewToolbox(
		harness.Tool{Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write, Run: record},
		harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read, Run: record},
	)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(append([]harness.Option{harness.WithModelBackoff(0)}, opts...)...)
	require.NoError(t, err)
	e.actor, err = harness.CodingActor(cfg, e.toolbox)
	require.NoError(t, err)
	e.rt, err = harness.NewRuntime(e.store, harness.Services{Model: e.model, Tools: e.toolbox}, cfg)
	require.NoError(t, err)
	return e
}

func (e *env) kinds(id string) []facts.Kind {
	var out []facts.Kind
	for f, err := range e.store.Read(context.Background(), id, 1) {
		require.NoError(e.t, err)
		out = append(out, f.Kind)
	}
	return out
}

func (e *env) last(id string, kind facts.Kind) facts.Fact {
	var found facts.Fact
	for f, err := range e.store.Read(context.Background(), id, 1) {
		require.NoError(e.t, err)
		if f.Kind == kind {
			found = f
		}
	}
	require.NotZero(e.t, found.Seq, "no %s in %s", kind, id)
	return found
}

func (e *env) post(id string, kind facts.Kind, payload any, key string) (harness.Posted, error) {
	d, err := facts.NewDraft(kind, "", payload)
	require.NoError(e.t, err)
	return e.rt.Post(context.Background(), e.actor, id, d, key)
}

func (e *env) approve(id, request string, approved bool) {
	_, err := e.post(id, facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: request, Approved: approved, By: "ana"}, "answer-"+request)
	require.NoError(e.t, err)
}

const (
	textScript = `{"text": "Nothing to change."}`
	toolScript = `{"text": "Setting the TTL.", "tool_calls": [{"id": "call_1", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Done: the TTL is 300."}`
	questionScript = `{"question": {"text": "Which file?", "options": ["a.toml", "b.toml"], "allow_free_text": true}}
{"text": "Using the file you named."}`
)

var ctx = context.Background()

func TestTextTurn(t *testing.T) {
	e := newEnv(t, textScript)
	out, err := e.rt.Start(ctx, e.actor, "t1", "Is the cache TTL fine?")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn}, e.kinds("t1"))

	// Only the scheduler: exactly user.message, model.turn.
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	bare, err := harness.Compose(cfg, harness.Infer(harness.Scheduler()))
	require.NoError(t, err)
	out, err = e.rt.Start(ctx, bare, "t2", "hello")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindModelTurn}, e.kinds("t2"))
}

func TestSecondResumeOfFinishedThreadDoesNothing(t *testing.T) {
	e := newEnv(t, textScript)
	_, err := e.rt.Start(ctx, e.actor, "t", "hi")
	require.NoError(t, err)
	before, calls := e.kinds("t"), e.model.calls()
	out, err := e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Zero(t, out.Steps)
	require.Equal(t, before, e.kinds("t"))
	require.Equal(t, calls, e.model.calls())
}

func TestConfirmationFlow(t *testing.T) {
	e := newEnv(t, toolScript)
	out, err := e.rt.Start(ctx, e.actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Len(t, out.Waits, 1)
	require.Equal(t, fold.WaitConfirmation, out.Waits[0].Kind)
	req := out.Waits[0].RequestID
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn,
		facts.KindActionRequested, facts.KindConfirmationRequested}, e.kinds("t"), "the request is recorded before anyone is asked")

	// Parked: resuming takes zero steps and calls nothing.
	for range 3 {
		out, err = e.rt.Resume(ctx, e.actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, out.Status)
		require.Zero(t, out.Steps)
	}
	require.Equal(t, 1, e.model.calls())
	require.Zero(t, e.runs.Load())

	e.approve("t", req, true)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 1, e.runs.Load(), "the tool runs once")
	require.Equal(t, 2, e.model.calls(), "the next model turn runs once")
	require.Equal(t, []facts.Kind{
		facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn, facts.KindActionRequested,
		facts.KindConfirmationRequested, facts.KindConfirmationAnswered, facts.KindActionStarted,
		facts.KindActionCompleted, facts.KindModelTurn,
	}, e.kinds("t"))
	// The second model turn sees the tool's result.
	msgs := e.model.last().Messages
	require.Equal(t, facts.RoleTool, msgs[len(msgs)-1].Role)
	require.Equal(t, "call_1", msgs[len(msgs)-1].ToolCallID)

	// The request is the actor's; the approval is the person's.
	ar, err := facts.Decode[facts.ActionRequested](e.last("t", facts.KindActionRequested))
	require.NoError(t, err)
	require.Equal(t, "coding-actor", ar.RequestedBy)
	require.Equal(t, string(action.Write), ar.Capability)
	ca, err := facts.Decode[facts.ConfirmationAnswered](e.last("t", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.Equal(t, "ana", ca.By)
	// Nobody observed the workspace here: the effect rests on the report.
	done, err := facts.Decode[facts.ActionCompleted](e.last("t", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Equal(t, facts.EffectReported, done.EffectState)
}

func TestDenialCompletesTheTurnWithoutTheTool(t *testing.T) {
	e := newEnv(t, toolScript)
	out, err := e.rt.Start(ctx, e.actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	e.approve("t", out.Waits[0].RequestID, false)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Zero(t, e.runs.Load())
	require.Equal(t, 1, e.model.calls())
	kinds := e.kinds("t")
	require.Equal(t, []facts.Kind{facts.KindConfirmationAnswered, facts.KindActionCompleted}, kinds[len(kinds)-2:])
	done, err := facts.Decode[facts.ActionCompleted](e.last("t", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Equal(t, facts.StatusDenied, done.Report.Status)
	require.Contains(t, done.Report.Error, "ana denied")
}

func TestQuestionFlow(t *testing.T) {
	e := newEnv(t, questionScript)
	out, err := e.rt.Start(ctx, e.actor, "t", "Fix the config")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, fold.WaitQuestion, out.Waits[0].Kind)
	qa, err := facts.Decode[facts.QuestionAsked](e.last("t", facts.KindQuestionAsked))
	require.NoError(t, err)
	require.True(t, qa.AllowFreeText, "the view keeps allow_free_text")
	require.Equal(t, []string{"a.toml", "b.toml"}, qa.Options)

	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Zero(t, out.Steps)

	_, err = e.post("t", facts.KindQuestionAnswered, facts.QuestionAnswered{RequestID: out.Waits[0].RequestID, Text: "cache.toml", By: "ana"}, "q1")
	require.NoError(t, err)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, 2, e.model.calls(), "the next model turn runs once")
	msgs := e.model.last().Messages
	last := msgs[len(msgs)-1]
	require.Equal(t, facts.RoleUser, last.Role, "the answer lands on the model's row, not on a tool result")
	require.Equal(t, "cache.toml", last.Text)
	kinds := e.kinds("t")
	require.Equal(t, []facts.Kind{facts.KindQuestionAnswered, facts.KindModelTurn}, kinds[len(kinds)-2:])
}

func TestAnswersAreChecked(t *testing.T) {
	e := newEnv(t, `{"tool_calls": [{"id": "a", "name": "write_file", "args": "{}"}, {"id": "b", "name": "write_file", "args": "{\"x\":1}"}]}
{"text": "ok"}`)
	out, err := e.rt.Start(ctx, e.actor, "t", "two writes")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Len(t, out.Waits, 2, "one request per call")
	require.NotEqual(t, out.Waits[0].RequestID, out.Waits[1].RequestID)
	seq := out.Seq

	_, err = e.post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "nope", Approved: true}, "k1")
	require.ErrorIs(t, err, fold.ErrRefused)
	require.ErrorIs(t, err, scheduler.ErrUnknownRequest)
	require.ErrorContains(t, err, `"nope"`)

	req := out.Waits[0].RequestID
	cr, err := facts.Decode[facts.ConfirmationRequested](e.last("t", facts.KindConfirmationRequested))
	require.NoError(t, err)
	_, err = e.post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: out.Waits[1].RequestID, Approved: true, Digest: "0000"}, "k2")
	require.ErrorIs(t, err, scheduler.ErrDigest)
	require.Equal(t, scheduler.Digest("write_file", `{"x":1}`), cr.Digest)

	p, err := e.post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: req, Approved: true}, "k3")
	require.NoError(t, err)
	require.False(t, p.Duplicate)
	again, err := e.post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: req, Approved: true}, "k3")
	require.NoError(t, err)
	require.True(t, again.Duplicate, "the same key twice is a no-op and says so")
	require.Equal(t, p.Seq, again.Seq)
	_, err = e.post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: req, Approved: false}, "k4")
	require.ErrorIs(t, err, scheduler.ErrAnswered)

	head, err := e.store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, seq+1, head.Seq, "refused posts appended nothing")

	// The first call may run while the second waits.
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.EqualValues(t, 1, e.runs.Load())
	require.Equal(t, []string{"{}"}, e.args, "the tool runs with exactly the approved arguments")
}

func TestPostBadInput(t *testing.T) {
	e := newEnv(t, textScript)
	_, err := e.post("missing", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "x"}, "k")
	require.ErrorIs(t, err, harness.ErrUnknownThread)
	_, err = e.rt.Start(ctx, e.actor, "t", "hi")
	require.NoError(t, err)
	_, err = e.post("t", facts.KindModelTurn, facts.ModelTurn{Turn: 9, Text: "forged"}, "k")
	require.ErrorIs(t, err, harness.ErrNotIngress)
	_, err = e.post("t", facts.KindUserMessage, facts.UserMessage{Text: "x"}, "")
	require.ErrorContains(t, err, "idempotency key")
	_, err = e.rt.Resume(ctx, e.actor, "never-started")
	require.ErrorIs(t, err, harness.ErrUnknownThread)
}

func TestModelFailures(t *testing.T) {
	t.Run("transient failures are retried within ModelAttempts", func(t *testing.T) {
		e := newEnv(t, `{"fail": ["transient", "transient"], "text": "fine"}`, harness.WithModelAttempts(3))
		out, err := e.rt.Start(ctx, e.actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status)
		require.Equal(t, 3, e.model.calls())
		require.NotContains(t, e.kinds("t"), facts.KindTransitionFailed)
	})
	t.Run("a Fail is recorded with its class and the thread fails visibly", func(t *testing.T) {
		e := newEnv(t, `{"fail": ["transient", "transient", "transient"], "text": "fine"}`, harness.WithModelAttempts(2))
		out, err := e.rt.Start(ctx, e.actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		require.Contains(t, out.Reason, "transient")
		tf, err := facts.Decode[facts.TransitionFailed](e.last("t", facts.KindTransitionFailed))
		require.NoError(t, err)
		require.Equal(t, facts.ClassTransient, tf.Class)
		require.Equal(t, 2, tf.Attempt)
		require.Equal(t, "infer/turn/1", tf.Key)
		require.False(t, tf.Defect)

		// A person resumes once the cause is gone (here: the script's third
		// failure, then an answer): the failed turn runs again, once.
		out, err = e.rt.Resume(ctx, e.actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status)
		require.Equal(t, 4, e.model.calls())
		require.NoError(t, harness.VerifyLog(ctx, e.store, e.actor, "t"))
	})
	t.Run("a resume retries a failed turn once, not in a loop", func(t *testing.T) {
		e := newEnv(t, `{"fail": ["permission", "permission", "permission"], "text": "fine"}`, harness.WithModelAttempts(5))
		out, err := e.rt.Start(ctx, e.actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		out, err = e.rt.Resume(ctx, e.actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		require.Equal(t, 1, out.Steps)
		require.Equal(t, 2, e.model.calls())
		kinds := e.kinds("t")
		require.Equal(t, []facts.Kind{facts.KindTransitionFailed, facts.KindTransitionFailed}, kinds[len(kinds)-2:])
		require.NoError(t, harness.VerifyLog(ctx, e.store, e.actor, "t"))
	})
	t.Run("permission failures are not retried", func(t *testing.T) {
		e := newEnv(t, `{"fail": ["permission"], "text": "fine"}`, harness.WithModelAttempts(5))
		out, err := e.rt.Start(ctx, e.actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		require.Equal(t, 1, e.model.calls())
	})
}

// panicking is a model with a bug.
type panicking struct{}

func (panicking) Turn(context.Context, model.Request) (model.Decision, error) { panic("model bug") }

func TestDefectStopsTheThread(t *testing.T) {
	e := newEnv(t, textScript)
	rt, err := harness.NewRuntime(e.store, harness.Services{Model: panicking{}, Tools: e.toolbox}, e.rt.Config)
	require.NoError(t, err)
	out, err := rt.Start(ctx, e.actor, "t", "go")
	require.ErrorIs(t, err, harness.ErrDefect)
	require.ErrorContains(t, err, "model bug")
	require.Equal(t, harness.StatusFailed, out.Status)
	tf, err := facts.Decode[facts.TransitionFailed](e.last("t", facts.KindTransitionFailed))
	require.NoError(t, err)
	require.True(t, tf.Defect)
	require.Equal(t, "infer/turn/1", tf.Key)

	// Not even a working model makes a thread go on past a defect.
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status)
	require.Zero(t, out.Steps)
	require.Zero(t, e.model.calls())
}

func TestAdapterPanicIsAFailedReport(t *testing.T) {
	e := newEnv(t, `{"tool_calls": [{"id": "c", "name": "explode", "args": "{}"}]}
{"text": "the tool failed"}`)
	tb, err := harness.NewToolbox(harness.Tool{Spec: facts.ToolSchema{Name: "explode"}, Needs: action.Read,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) { panic("tool bug") }})
	require.NoError(t, err)
	rt, err := harness.NewRuntime(e.store, harness.Services{Model: e.model, Tools: tb}, e.rt.Config)
	require.NoError(t, err)
	actor, err := harness.CodingActor(e.rt.Config, tb)
	require.NoError(t, err)
	out, err := rt.Start(ctx, actor, "t", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	done, err := facts.Decode[facts.ActionCompleted](e.last("t", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Equal(t, facts.StatusFailed, done.Report.Status)
	require.Contains(t, done.Report.Error, "tool bug")
	require.Contains(t, e.model.last().Messages[len(e.model.last().Messages)-1].Text, "tool bug", "the model is told")
}

// blocking is a model that blocks until its context ends.
type blocking struct{ entered chan struct{} }

func (b blocking) Turn(ctx context.Context, _ model.Request) (model.Decision, error) {
	close(b.entered)
	<-ctx.Done()
	return model.Decision{}, ctx.Err()
}

func TestInterruptAppendsNothing(t *testing.T) {
	e := newEnv(t, textScript)
	b := blocking{entered: make(chan struct{})}
	rt, err := harness.NewRuntime(e.store, harness.Services{Model: b, Tools: e.toolbox}, e.rt.Config)
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	go func() { <-b.entered; cancel() }()
	_, err = rt.Start(cctx, e.actor, "t", "hi")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, effect.ErrInterrupted)
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured}, e.kinds("t"))

	out, err := e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err, "the thread stays resumable")
	require.Equal(t, harness.StatusDone, out.Status)
}

func TestNewConfigRefusesWhatCannotRun(t *testing.T) {
	for field, opt := range map[string]harness.Option{
		"MaxSteps":      harness.WithMaxSteps(0),
		"ModelAttempts": harness.WithModelAttempts(0),
		"ModelMaxWait":  harness.WithModelMaxWait(-1),
		"MaxTurns":      harness.WithBudget(-1, 0),
		"CompactAt":     harness.WithCompactAt(-5),
	} {
		_, err := harness.NewConfig(opt)
		require.ErrorContains(t, err, field)
	}
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	require.Positive(t, cfg.MaxSteps)
}

func TestStepLimitIsResumable(t *testing.T) {
	e := newEnv(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}]}
{"text": "read it"}`, harness.WithMaxSteps(2))
	out, err := e.rt.Start(ctx, e.actor, "t", "read")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStepLimit, out.Status)
	require.Equal(t, 2, out.Steps)
	for out.Status == harness.StatusStepLimit {
		out, err = e.rt.Resume(ctx, e.actor, "t")
		require.NoError(t, err)
	}
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 1, e.runs.Load(), "a read tool needs no confirmation and runs once")
}

func TestBudget(t *testing.T) {
	e := newEnv(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}], "usage": {"input_tokens": 10, "output_tokens": 5}}
{"text": "never reached"}`, harness.WithBudget(1, 0))
	out, err := e.rt.Start(ctx, e.actor, "t", "read")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStopped, out.Status)
	require.Contains(t, out.Reason, "turns budget exhausted")
	require.Equal(t, 1, e.model.calls())
	be, err := facts.Decode[facts.BudgetExhausted](e.last("t", facts.KindBudgetExhausted))
	require.NoError(t, err)
	require.Equal(t, facts.BudgetExhausted{Resource: "turns", Limit: 1, Used: 1}, be)
}

func TestCompaction(t *testing.T) {
	long := strings.Repeat("the cache is slow; ", 40)
	e := newEnv(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}], "text": "`+long+`"}
{"text": "done"}`, harness.WithCompactAt(50))
	out, err := e.rt.Start(ctx, e.actor, "t", "look: "+long)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Contains(t, e.kinds("t"), facts.KindContextCompacted)
	msgs := e.model.last().Messages
	require.Len(t, msgs, 2, "the summary replaces older turns in what the model sees")
	require.Contains(t, msgs[0].Text, "Summary of the conversation so far")
	require.Equal(t, facts.RoleTool, msgs[1].Role)
	// The log keeps everything.
	require.Contains(t, e.kinds("t"), facts.KindUserMessage)
}

// twin is a component that enables a key another component also enables.
type twin struct{ ran *atomic.Int64 }

func (twin) Name() string          { return "twin" }
func (twin) Step(facts.Fact) error { return nil }
func (tw twin) Output() fold.Output[harness.Services] {
	return fold.Output[harness.Services]{Transitions: []fold.Transition[harness.Services]{{
		Key: "system/configure",
		Effect: effect.FromAsync(func(context.Context, harness.Services) ([]facts.Draft, error) {
			tw.ran.Add(1)
			return nil, errors.New("must not run")
		}),
	}}}
}

func TestDuplicateTransitionBeforeAnyEffect(t *testing.T) {
	e := newEnv(t, textScript)
	var ran atomic.Int64
	base := e.actor
	dup := harness.Actor[harness.Services]{Name: "dup", New: func() []fold.Component[harness.Services] {
		return append(base.New(), twin{&ran})
	}}
	_, err := e.rt.Start(ctx, dup, "t", "hi")
	require.ErrorIs(t, err, fold.ErrDuplicateTransition)
	require.ErrorContains(t, err, "system")
	require.ErrorContains(t, err, "twin")
	require.Zero(t, ran.Load())
}

func TestNestedInferRunsItsOwnScheduler(t *testing.T) {
	e := newEnv(t, toolScript)
	cfg := e.rt.Config
	nested, err := harness.Compose(cfg, harness.System(), harness.Tools(e.toolbox), harness.Budget(), harness.Compact(),
		harness.Infer(harness.Scheduler(), harness.Infer(harness.Scheduler())))
	require.NoError(t, err)
	out, err := e.rt.Start(ctx, nested, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	var ids []string
	for _, w := range out.Waits {
		ids = append(ids, w.RequestID)
	}
	require.Equal(t, []string{"1-call_1", "infer2-1-call_1"}, ids, "each scheduler asks on its own request")
	for _, id := range ids {
		_, err := e.rt.Post(ctx, nested, "t", mustDraft(t, facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: id, Approved: true, By: "ana"}), "a-"+id)
		require.NoError(t, err)
	}
	out, err = e.rt.Resume(ctx, nested, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 2, e.runs.Load(), "each scheduler's call ran once")
	causes := map[string]bool{}
	for f, err := range e.store.Read(ctx, "t", 1) {
		require.NoError(t, err)
		causes[f.Cause] = true
	}
	for _, k := range []string{"infer/turn/1", "infer/turn/2", "infer2/infer/turn/1", "infer2/infer/turn/2", "tool/execute/1-call_1", "infer2/tool/execute/infer2-1-call_1"} {
		require.True(t, causes[k], k)
	}
	require.NoError(t, harness.VerifyLog(ctx, e.store, nested, "t"))
}

func mustDraft(t *testing.T, kind facts.Kind, payload any) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(kind, "", payload)
	require.NoError(t, err)
	return d
}

func TestNestedInferPrefixesKeys(t *testing.T) {
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	a, err := harness.Compose(cfg, harness.Infer(harness.Scheduler(), harness.Infer(harness.Scheduler())))
	require.NoError(t, err)
	comps := a.New()
	require.Len(t, comps, 2)
	require.Equal(t, "scheduler", comps[0].Name())
	require.Equal(t, "infer2/scheduler", comps[1].Name())
}

// The calls of a turn take effect in the model's order, whatever order the
// approvals come in.
func TestCallsTakeEffectInOrder(t *testing.T) {
	e := newEnv(t, `{"tool_calls": [{"id": "a", "name": "write_file", "args": "{\"n\":1}"}, {"id": "b", "name": "write_file", "args": "{\"n\":2}"}]}
{"text": "ok"}`)
	out, err := e.rt.Start(ctx, e.actor, "t", "two writes")
	require.NoError(t, err)
	require.Len(t, out.Waits, 2)
	e.approve("t", out.Waits[1].RequestID, true)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, "the second waits for the first")
	require.Zero(t, e.runs.Load())
	require.Len(t, out.Waits, 1)
	e.approve("t", out.Waits[0].RequestID, true)
	out, err = e.rt.Resume(ctx, e.actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, []string{`{"n":1}`, `{"n":2}`}, e.args)
}

func TestResumeAndTransitionsAreTraced(t *testing.T) {
	e := newEnv(t, textScript)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	rt, err := harness.NewRuntime(e.store, harness.Services{Model: e.model, Tools: e.toolbox, Tracing: tp}, e.rt.Config)
	require.NoError(t, err)
	_, err = rt.Start(ctx, e.actor, "t", "hi")
	require.NoError(t, err)
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = s
	}
	resume, turn := spans["resume"], spans["transition infer/turn/1"]
	require.NotNil(t, resume)
	require.NotNil(t, turn)
	require.Equal(t, resume.SpanContext().SpanID(), turn.Parent().SpanID(), "a transition's span is its resume's child")
	require.Contains(t, turn.Attributes(), attribute.String("harness.thread", "t"))
	require.Contains(t, turn.Attributes(), attribute.String("harness.transition", "infer/turn/1"))
	require.Contains(t, turn.Attributes(), attribute.String("harness.exit", "success"))
}
