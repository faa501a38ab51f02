package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// zeroEnv is a runtime built from a Config literal, with no NewConfig:
// a store, a scripted model and the given tools, each counting its runs.
type zeroEnv struct {
	store thread.Store
	rt    *harness.Runtime
	actor harness.Actor
	runs  map[string]*atomic.Int32
}

func newZeroEnv(t *testing.T, cfg harness.Config, script string, tools ...harness.Tool) *zeroEnv {
	t.Helper()
	s, err := model.ParseScript("test", []byte(script))
	require.NoError(t, err)
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	e := &zeroEnv{store: store, runs: map[string]*atomic.Int32{}}
	adapters := make([]harness.ToolAdapter, len(tools))
	for i, tool := range tools {
		n := &atomic.Int32{}
		e.runs[tool.Spec.Name] = n
		tool.Run = func(context.Context, json.RawMessage) (facts.Report, error) {
			n.Add(1)
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "ok"}, nil
		}
		adapters[i] = tool
	}
	tb, err := harness.NewToolbox(adapters...)
	require.NoError(t, err)
	e.actor, err = harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	e.rt, err = harness.NewRuntime(store, harness.Services{Model: &harnesstest.Recording{Script: s}, Tools: tb}, cfg)
	require.NoError(t, err)
	return e
}

func (e *zeroEnv) first(t *testing.T, id string, kind facts.Kind) facts.Fact {
	t.Helper()
	for f, err := range e.store.Read(context.Background(), id, 0) {
		require.NoError(t, err)
		if f.Kind == kind {
			return f
		}
	}
	t.Fatalf("thread %s has no %s", id, kind)
	return facts.Fact{}
}

func tool(name string, needs action.Capability, ask action.Ask) harness.Tool {
	return harness.Tool{Spec: facts.ToolSchema{Name: name}, Needs: needs, Ask: ask}
}

// calls is a script of n model turns, each calling the tool once, and a
// last turn that says it is done.
func calls(name string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"tool_calls": [{"id": "c%d", "name": %q, "args": "{}"}]}`+"\n", i, name)
	}
	b.WriteString(`{"text": "done"}`)
	return b.String()
}

func TestZeroConfigIsTheDefaults(t *testing.T) {
	ctx := context.Background()
	e := newZeroEnv(t, harness.Config{}, calls("write_file", 1), tool("write_file", action.Write, action.AskDefault))
	want, err := harness.NewConfig()
	require.NoError(t, err)
	require.Equal(t, want, e.rt.Config, "the runtime holds the defaults as they apply")

	out, err := e.rt.Start(ctx, e.actor, "t", "write")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, "write is granted, and asks by default")
	require.Len(t, out.Waits, 1)
	require.Equal(t, fold.WaitConfirmation, out.Waits[0].Kind)
	require.Zero(t, e.runs["write_file"].Load())

	sc, err := facts.Decode[facts.SystemConfigured](e.first(t, "t", facts.KindSystemConfigured))
	require.NoError(t, err)
	require.Equal(t, harness.DefaultSystemPrompt, sc.Prompt)
	require.Equal(t, "harness/dev", sc.Version)
	ar, err := facts.Decode[facts.ActionRequested](e.first(t, "t", facts.KindActionRequested))
	require.NoError(t, err)
	require.Equal(t, "coding-actor", ar.RequestedBy)
	require.Equal(t, action.Write, ar.Capability)
}

func TestMaxStepsNoBound(t *testing.T) {
	ctx := context.Background()
	// 60 tool calls take more than the default 100 steps.
	script := calls("read_file", 60)
	read := tool("read_file", action.Read, action.AskDefault)

	bounded := newZeroEnv(t, harness.Config{}, script, read)
	out, err := bounded.rt.Start(ctx, bounded.actor, "t", "read")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStepLimit, out.Status)
	require.Equal(t, 100, out.Steps, "a zero MaxSteps is 100")

	free := newZeroEnv(t, harness.Config{MaxSteps: harness.NoBound}, script, read)
	out, err = free.rt.Start(ctx, free.actor, "t", "read")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Greater(t, out.Steps, 100)
	require.EqualValues(t, 60, free.runs["read_file"].Load(), "a read asks nobody by default")

	cfg, err := harness.NewConfig(harness.WithMaxSteps(harness.NoBound))
	require.NoError(t, err)
	require.Equal(t, harness.NoBound, cfg.MaxSteps, "the option keeps the bound lifted")
}

func TestToolAsk(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		needs action.Capability
		ask   action.Ask
		asks  bool
	}{
		{action.Read, action.AskDefault, false},
		{action.Write, action.AskDefault, true},
		{action.Execute, action.AskDefault, true},
		{action.Read, action.AskAlways, true},
		{action.Write, action.AskNever, false},
		{action.Execute, action.AskNever, false},
	} {
		t.Run(fmt.Sprintf("%s %s", c.needs, c.ask), func(t *testing.T) {
			require.Equal(t, c.asks, tool("x", c.needs, c.ask).Confirm())
			e := newZeroEnv(t, harness.Config{}, calls("x", 1), tool("x", c.needs, c.ask))
			out, err := e.rt.Start(ctx, e.actor, "t", "go")
			require.NoError(t, err)
			if c.asks {
				require.Equal(t, harness.StatusParked, out.Status)
				require.Zero(t, e.runs["x"].Load(), "nothing runs before a person answers")
				return
			}
			require.Equal(t, harness.StatusDone, out.Status)
			require.EqualValues(t, 1, e.runs["x"].Load())
		})
	}
	_, err := harness.NewToolbox(tool("x", action.Write, action.Ask(7)))
	require.ErrorContains(t, err, `tool "x": ask 7`)
}

func TestEmptyGrantsGrantNothing(t *testing.T) {
	ctx := context.Background()
	e := newZeroEnv(t, harness.Config{Grants: []action.Capability{}}, calls("x", 1), tool("x", action.Read, action.AskDefault))
	out, err := e.rt.Start(ctx, e.actor, "t", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Zero(t, e.runs["x"].Load(), "a read is not granted: denied without running")
}

func TestConfigRefusesWhatCannotRun(t *testing.T) {
	for field, cfg := range map[string]harness.Config{
		"ModelAttempts": {ModelAttempts: -1},
		"MaxTurns":      {MaxTurns: -1},
		"Grants":        {Grants: []action.Capability{"admin"}},
	} {
		require.ErrorContains(t, cfg.Validate(), field)
		_, err := harness.Compose(cfg)
		require.ErrorContains(t, err, field)
	}
}

func TestNewConfigSharesNoDefaults(t *testing.T) {
	a, err := harness.NewConfig()
	require.NoError(t, err)
	a.Grants[0] = action.Execute
	b, err := harness.NewConfig()
	require.NoError(t, err)
	require.Equal(t, []action.Capability{action.Read, action.Write, action.Execute}, b.Grants)
}
