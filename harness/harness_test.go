package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
)

var ctx = context.Background()

func TestTextTurn(t *testing.T) {
	e := harnesstest.New(t, harnesstest.TextScript)
	out, err := e.RT.Start(ctx, e.Actor, "t1", "Is the cache TTL fine?")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn}, e.Kinds("t1"))

	// Only the scheduler: exactly user.message, model.turn.
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	bare, err := harness.Compose(cfg, harness.Infer(harness.Scheduler()))
	require.NoError(t, err)
	out, err = e.RT.Start(ctx, bare, "t2", "hello")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindModelTurn}, e.Kinds("t2"))
}

func TestSecondResumeOfFinishedThreadDoesNothing(t *testing.T) {
	e := harnesstest.New(t, harnesstest.TextScript)
	_, err := e.RT.Start(ctx, e.Actor, "t", "hi")
	require.NoError(t, err)
	before, calls := e.Kinds("t"), e.Model.Calls()
	out, err := e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Zero(t, out.Steps)
	require.Equal(t, before, e.Kinds("t"))
	require.Equal(t, calls, e.Model.Calls())
}

func TestConfirmationFlow(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	out, err := e.RT.Start(ctx, e.Actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Len(t, out.Waits, 1)
	require.Equal(t, fold.WaitConfirmation, out.Waits[0].Kind)
	req := out.Waits[0].RequestID
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn,
		facts.KindActionRequested, facts.KindConfirmationRequested}, e.Kinds("t"), "the request is recorded before anyone is asked")

	// Parked: resuming takes zero steps and calls nothing.
	for range 3 {
		out, err = e.RT.Resume(ctx, e.Actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, out.Status)
		require.Zero(t, out.Steps)
	}
	require.Equal(t, 1, e.Model.Calls())
	require.Zero(t, e.Runs.Load())

	e.Approve("t", req, true)
	out, err = e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 1, e.Runs.Load(), "the tool runs once")
	require.Equal(t, 2, e.Model.Calls(), "the next model turn runs once")
	require.Equal(t, []facts.Kind{
		facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn, facts.KindActionRequested,
		facts.KindConfirmationRequested, facts.KindConfirmationAnswered, facts.KindActionStarted,
		facts.KindActionCompleted, facts.KindModelTurn,
	}, e.Kinds("t"))
	// The second model turn sees the tool's result.
	msgs := e.Model.Last().Messages
	require.Equal(t, facts.RoleTool, msgs[len(msgs)-1].Role)
	require.Equal(t, "call_1", msgs[len(msgs)-1].ToolCallID)

	// The request is the actor's; the approval is the person's.
	ar, err := facts.Decode[facts.ActionRequested](e.Last("t", facts.KindActionRequested))
	require.NoError(t, err)
	require.Equal(t, "coding-actor", ar.RequestedBy)
	require.Equal(t, action.Write, ar.Capability)
	ca, err := facts.Decode[facts.ConfirmationAnswered](e.Last("t", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.Equal(t, "ana", ca.By)
	// Nobody observed the workspace here: the effect rests on the report.
	done, err := facts.Decode[facts.ActionCompleted](e.Last("t", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Equal(t, facts.EffectReported, done.EffectState)
}

func TestDenialCompletesTheTurnWithoutTheTool(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	out, err := e.RT.Start(ctx, e.Actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	e.Approve("t", out.Waits[0].RequestID, false)
	out, err = e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Zero(t, e.Runs.Load())
	require.Equal(t, 1, e.Model.Calls())
	kinds := e.Kinds("t")
	require.Equal(t, []facts.Kind{facts.KindConfirmationAnswered, facts.KindActionCompleted}, kinds[len(kinds)-2:])
	done, err := facts.Decode[facts.ActionCompleted](e.Last("t", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Equal(t, facts.StatusDenied, done.Report.Status)
	require.Contains(t, done.Report.Error, "ana denied")
}

func TestQuestionFlow(t *testing.T) {
	e := harnesstest.New(t, harnesstest.QuestionScript)
	out, err := e.RT.Start(ctx, e.Actor, "t", "Fix the config")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Equal(t, fold.WaitQuestion, out.Waits[0].Kind)
	qa, err := facts.Decode[facts.QuestionAsked](e.Last("t", facts.KindQuestionAsked))
	require.NoError(t, err)
	require.True(t, qa.AllowFreeText, "the view keeps allow_free_text")
	require.Equal(t, []string{"a.toml", "b.toml"}, qa.Options)

	out, err = e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Zero(t, out.Steps)

	_, err = e.Post("t", facts.KindQuestionAnswered, facts.QuestionAnswered{RequestID: out.Waits[0].RequestID, Text: "cache.toml", By: "ana"}, "q1")
	require.NoError(t, err)
	out, err = e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, 2, e.Model.Calls(), "the next model turn runs once")
	msgs := e.Model.Last().Messages
	last := msgs[len(msgs)-1]
	require.Equal(t, facts.RoleUser, last.Role, "the answer lands on the model's row, not on a tool result")
	require.Equal(t, "cache.toml", last.Text)
	kinds := e.Kinds("t")
	require.Equal(t, []facts.Kind{facts.KindQuestionAnswered, facts.KindModelTurn}, kinds[len(kinds)-2:])
}

func TestAnswersAreChecked(t *testing.T) {
	e := harnesstest.New(t, `{"tool_calls": [{"id": "a", "name": "write_file", "args": "{}"}, {"id": "b", "name": "write_file", "args": "{\"x\":1}"}]}
{"text": "ok"}`)
	out, err := e.RT.Start(ctx, e.Actor, "t", "two writes")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.Len(t, out.Waits, 2, "one request per call")
	require.NotEqual(t, out.Waits[0].RequestID, out.Waits[1].RequestID)
	seq := out.Seq

	_, err = e.Post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "nope", Approved: true}, "k1")
	require.ErrorIs(t, err, fold.ErrRefused)
	require.ErrorIs(t, err, scheduler.ErrUnknownRequest)
	require.ErrorContains(t, err, `"nope"`)

	req := out.Waits[0].RequestID
	cr, err := facts.Decode[facts.ConfirmationRequested](e.Last("t", facts.KindConfirmationRequested))
	require.NoError(t, err)
	_, err = e.Post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: out.Waits[1].RequestID, Approved: true, Digest: "0000"}, "k2")
	require.ErrorIs(t, err, scheduler.ErrDigest)
	require.Equal(t, scheduler.Digest("write_file", `{"x":1}`), cr.Digest)

	p, err := e.Post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: req, Approved: true}, "k3")
	require.NoError(t, err)
	require.False(t, p.Duplicate)
	again, err := e.Post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: req, Approved: true}, "k3")
	require.NoError(t, err)
	require.True(t, again.Duplicate, "the same key twice is a no-op and says so")
	require.Equal(t, p.Seq, again.Seq)
	_, err = e.Post("t", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: req, Approved: false}, "k4")
	require.ErrorIs(t, err, scheduler.ErrAnswered)

	head, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, seq+1, head.Seq, "refused posts appended nothing")

	// The first call may run while the second waits.
	out, err = e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	require.EqualValues(t, 1, e.Runs.Load())
	require.Equal(t, []string{"{}"}, e.Args(), "the tool runs with exactly the approved arguments")
}

func TestPostBadInput(t *testing.T) {
	e := harnesstest.New(t, harnesstest.TextScript)
	_, err := e.Post("missing", facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "x"}, "k")
	require.ErrorIs(t, err, harness.ErrUnknownThread)
	_, err = e.RT.Start(ctx, e.Actor, "t", "hi")
	require.NoError(t, err)
	_, err = e.Post("t", facts.KindModelTurn, facts.ModelTurn{Turn: 9, Text: "forged"}, "k")
	require.ErrorIs(t, err, harness.ErrNotIngress)
	_, err = e.Post("t", facts.KindUserMessage, facts.UserMessage{Text: "x"}, "")
	require.ErrorContains(t, err, "idempotency key")
	_, err = e.RT.Resume(ctx, e.Actor, "never-started")
	require.ErrorIs(t, err, harness.ErrUnknownThread)
}

func TestModelFailures(t *testing.T) {
	t.Run("transient failures are retried within ModelAttempts", func(t *testing.T) {
		e := harnesstest.New(t, `{"fail": ["transient", "transient"], "text": "fine"}`, func(c *harness.Config) { c.ModelAttempts = 3 })
		out, err := e.RT.Start(ctx, e.Actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status)
		require.Equal(t, 3, e.Model.Calls())
		require.NotContains(t, e.Kinds("t"), facts.KindTransitionFailed)
	})
	t.Run("a Fail is recorded with its class and the thread fails visibly", func(t *testing.T) {
		e := harnesstest.New(t, `{"fail": ["transient", "transient", "transient"], "text": "fine"}`, func(c *harness.Config) { c.ModelAttempts = 2 })
		out, err := e.RT.Start(ctx, e.Actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		require.Contains(t, out.Reason, "transient")
		tf, err := facts.Decode[facts.TransitionFailed](e.Last("t", facts.KindTransitionFailed))
		require.NoError(t, err)
		require.Equal(t, facts.ClassTransient, tf.Class)
		require.Equal(t, 2, tf.Attempt)
		require.Equal(t, "infer/turn/1", tf.Key)
		require.False(t, tf.Defect)

		// A person resumes once the cause is gone (here: the script's third
		// failure, then an answer): the failed turn runs again, once.
		out, err = e.RT.Resume(ctx, e.Actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, out.Status)
		require.Equal(t, 4, e.Model.Calls())
		require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t"))
	})
	t.Run("a resume retries a failed turn once, not in a loop", func(t *testing.T) {
		e := harnesstest.New(t, `{"fail": ["permission", "permission", "permission"], "text": "fine"}`, func(c *harness.Config) { c.ModelAttempts = 5 })
		out, err := e.RT.Start(ctx, e.Actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		out, err = e.RT.Resume(ctx, e.Actor, "t")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		require.Equal(t, 1, out.Steps)
		require.Equal(t, 2, e.Model.Calls())
		kinds := e.Kinds("t")
		require.Equal(t, []facts.Kind{facts.KindModelCallFailed, facts.KindTransitionFailed, facts.KindModelCallFailed, facts.KindTransitionFailed}, kinds[len(kinds)-4:])
		require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t"))
	})
	t.Run("permission failures are not retried", func(t *testing.T) {
		e := harnesstest.New(t, `{"fail": ["permission"], "text": "fine"}`, func(c *harness.Config) { c.ModelAttempts = 5 })
		out, err := e.RT.Start(ctx, e.Actor, "t", "hi")
		require.NoError(t, err)
		require.Equal(t, harness.StatusFailed, out.Status)
		require.Equal(t, 1, e.Model.Calls())
	})
}

// panicking is a model with a bug.
type panicking struct{}

func (panicking) Turn(context.Context, model.Request) (model.Decision, error) { panic("model bug") }

func TestDefectStopsTheThread(t *testing.T) {
	e := harnesstest.New(t, harnesstest.TextScript)
	rt, err := harness.NewRuntime(e.Store, harness.Services{Model: panicking{}, Tools: e.Toolbox}, e.RT.Config)
	require.NoError(t, err)
	out, err := rt.Start(ctx, e.Actor, "t", "go")
	require.ErrorIs(t, err, harness.ErrDefect)
	require.ErrorContains(t, err, "model bug")
	require.Equal(t, harness.StatusFailed, out.Status)
	tf, err := facts.Decode[facts.TransitionFailed](e.Last("t", facts.KindTransitionFailed))
	require.NoError(t, err)
	require.True(t, tf.Defect)
	require.Equal(t, "infer/turn/1", tf.Key)

	// Not even a working model makes a thread go on past a defect.
	out, err = e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusFailed, out.Status)
	require.Zero(t, out.Steps)
	require.Zero(t, e.Model.Calls())
}

func TestAdapterPanicIsAFailedReport(t *testing.T) {
	e := harnesstest.New(t, `{"tool_calls": [{"id": "c", "name": "explode", "args": "{}"}]}
{"text": "the tool failed"}`)
	tb, err := harness.NewToolbox(harness.Tool{Spec: facts.ToolSchema{Name: "explode"}, Needs: action.Read,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) { panic("tool bug") }})
	require.NoError(t, err)
	rt, err := harness.NewRuntime(e.Store, harness.Services{Model: e.Model, Tools: tb}, e.RT.Config)
	require.NoError(t, err)
	actor, err := harness.CodingActor(e.RT.Config, tb)
	require.NoError(t, err)
	out, err := rt.Start(ctx, actor, "t", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	done, err := facts.Decode[facts.ActionCompleted](e.Last("t", facts.KindActionCompleted))
	require.NoError(t, err)
	require.Equal(t, facts.StatusFailed, done.Report.Status)
	require.Contains(t, done.Report.Error, "tool bug")
	require.Contains(t, e.Model.Last().Messages[len(e.Model.Last().Messages)-1].Text, "tool bug", "the model is told")
}

// blocking is a model that blocks until its context ends.
type blocking struct{ entered chan struct{} }

func (b blocking) Turn(ctx context.Context, _ model.Request) (model.Decision, error) {
	close(b.entered)
	<-ctx.Done()
	return model.Decision{}, ctx.Err()
}

func TestInterruptAppendsNothing(t *testing.T) {
	e := harnesstest.New(t, harnesstest.TextScript)
	b := blocking{entered: make(chan struct{})}
	rt, err := harness.NewRuntime(e.Store, harness.Services{Model: b, Tools: e.Toolbox}, e.RT.Config)
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	go func() { <-b.entered; cancel() }()
	_, err = rt.Start(cctx, e.Actor, "t", "hi")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, effect.ErrInterrupted)
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured}, e.Kinds("t"))

	out, err := e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err, "the thread stays resumable")
	require.Equal(t, harness.StatusDone, out.Status)
}

func TestNewConfigRefusesWhatCannotRun(t *testing.T) {
	for field, opt := range map[string]harness.Option{
		"ModelAttempts":   func(c *harness.Config) { c.ModelAttempts = -1 },
		"MaxTurns":        harness.WithBudget(-1, 0),
		"MaxTokens":       harness.WithBudget(0, -1),
		"CompactAt":       func(c *harness.Config) { c.CompactAt = -5 },
		"ContextWindow":   func(c *harness.Config) { c.ContextWindow, c.CompactFraction = -1, 0 },
		"CompactFraction": func(c *harness.Config) { c.ContextWindow, c.CompactFraction = 1000, 1.5 },
	} {
		_, err := harness.NewConfig(opt)
		require.ErrorContains(t, err, field)
	}
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	require.Positive(t, cfg.MaxSteps)
}

func TestStepLimitIsResumable(t *testing.T) {
	e := harnesstest.New(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}]}
{"text": "read it"}`, harness.WithMaxSteps(2))
	out, err := e.RT.Start(ctx, e.Actor, "t", "read")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStepLimit, out.Status)
	require.Equal(t, 2, out.Steps)
	for out.Status == harness.StatusStepLimit {
		out, err = e.RT.Resume(ctx, e.Actor, "t")
		require.NoError(t, err)
	}
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 1, e.Runs.Load(), "a read tool needs no confirmation and runs once")
}

func TestBudget(t *testing.T) {
	e := harnesstest.New(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}], "usage": {"input_tokens": 10, "output_tokens": 5}}
{"text": "never reached"}`, harness.WithBudget(1, 0), harness.WithoutTurnsWait())
	out, err := e.RT.Start(ctx, e.Actor, "t", "read")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStopped, out.Status)
	require.Contains(t, out.Reason, "turns budget exhausted")
	require.Equal(t, 1, e.Model.Calls())
	be, err := facts.Decode[facts.BudgetExhausted](e.Last("t", facts.KindBudgetExhausted))
	require.NoError(t, err)
	require.Equal(t, facts.BudgetExhausted{Resource: "turns", Limit: 1, Used: 1}, be)
}

func TestCompaction(t *testing.T) {
	long := strings.Repeat("the cache is slow; ", 40)
	e := harnesstest.New(t, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{}"}], "text": "`+long+`"}
{"text": "done"}`, func(c *harness.Config) { c.CompactAt = 50 })
	out, err := e.RT.Start(ctx, e.Actor, "t", "look: "+long)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Contains(t, e.Kinds("t"), facts.KindContextCompacted)
	msgs := e.Model.Last().Messages
	require.Len(t, msgs, 2, "the summary replaces older turns in what the model sees")
	require.Contains(t, msgs[0].Text, "Summary of the conversation so far")
	require.Equal(t, facts.RoleTool, msgs[1].Role)
	// The log keeps everything.
	require.Contains(t, e.Kinds("t"), facts.KindUserMessage)
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
	e := harnesstest.New(t, harnesstest.TextScript)
	var ran atomic.Int64
	base := e.Actor
	dup := harness.Actor{Name: "dup", New: func() []fold.Component[harness.Services] {
		return append(base.New(), twin{&ran})
	}}
	_, err := e.RT.Start(ctx, dup, "t", "hi")
	require.ErrorIs(t, err, fold.ErrDuplicateTransition)
	require.ErrorContains(t, err, "system")
	require.ErrorContains(t, err, "twin")
	require.Zero(t, ran.Load())
}

func TestNestedInferRunsItsOwnScheduler(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	cfg := e.RT.Config
	nested, err := harness.Compose(cfg, harness.System(), harness.Tools(e.Toolbox), harness.Budget(), harness.Compact(),
		harness.Infer(harness.Scheduler(), harness.Infer(harness.Scheduler())))
	require.NoError(t, err)
	out, err := e.RT.Start(ctx, nested, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	var ids []string
	for _, w := range out.Waits {
		ids = append(ids, w.RequestID)
	}
	require.Equal(t, []string{"1-call_1", "infer2-1-call_1"}, ids, "each scheduler asks on its own request")
	for _, id := range ids {
		_, err := e.RT.Post(ctx, nested, "t", mustDraft(t, facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: id, Approved: true, By: "ana"}), "a-"+id)
		require.NoError(t, err)
	}
	out, err = e.RT.Resume(ctx, nested, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.EqualValues(t, 2, e.Runs.Load(), "each scheduler's call ran once")
	causes := map[string]bool{}
	for f, err := range e.Store.Read(ctx, "t", 1) {
		require.NoError(t, err)
		causes[f.Cause] = true
	}
	for _, k := range []string{"infer/turn/1", "infer/turn/2", "infer2/infer/turn/1", "infer2/infer/turn/2", "tool/execute/1-call_1", "infer2/tool/execute/infer2-1-call_1"} {
		require.True(t, causes[k], k)
	}
	require.NoError(t, audit.VerifyLog(ctx, e.Store, nested, "t"))
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
	require.Len(t, comps, 3, "the lineage first, then the two schedulers")
	require.Equal(t, "lineage", comps[0].Name())
	require.Equal(t, "scheduler", comps[1].Name())
	require.Equal(t, "infer2/scheduler", comps[2].Name())
}

// The calls of a turn take effect in the model's order, whatever order the
// approvals come in.
func TestCallsTakeEffectInOrder(t *testing.T) {
	e := harnesstest.New(t, `{"tool_calls": [{"id": "a", "name": "write_file", "args": "{\"n\":1}"}, {"id": "b", "name": "write_file", "args": "{\"n\":2}"}]}
{"text": "ok"}`)
	out, err := e.RT.Start(ctx, e.Actor, "t", "two writes")
	require.NoError(t, err)
	require.Len(t, out.Waits, 2)
	e.Approve("t", out.Waits[1].RequestID, true)
	out, err = e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, "the second waits for the first")
	require.Zero(t, e.Runs.Load())
	require.Len(t, out.Waits, 1)
	e.Approve("t", out.Waits[0].RequestID, true)
	out, err = e.RT.Resume(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, []string{`{"n":1}`, `{"n":2}`}, e.Args())
}

func TestResumeAndTransitionsAreTraced(t *testing.T) {
	e := harnesstest.New(t, harnesstest.TextScript)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	rt, err := harness.NewRuntime(e.Store, harness.Services{Model: e.Model, Tools: e.Toolbox, Tracing: tp}, e.RT.Config)
	require.NoError(t, err)
	_, err = rt.Start(ctx, e.Actor, "t", "hi")
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
