package harness_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
)

// BenchmarkResumeTreeWithBudget resumes a parent whose one turn delegated
// ten tasks, each child parked on a write's confirmation, when the tree
// has a budget (each child is told what the other nine spent: their logs
// are read) — against the same tree without one, the raw baseline. ratio
// is the budgeted tree's time over the other's.
func BenchmarkResumeTreeWithBudget(b *testing.B) {
	const kids = 10
	ctx := context.Background()
	s := openBenchStore(b)
	var calls []facts.ToolCall
	for k := range kids {
		calls = append(calls, facts.ToolCall{ID: fmt.Sprintf("d%d", k), Name: harness.DelegateTool, Args: fmt.Sprintf(`{"task":"write %d"}`, k)})
	}
	m := modelFunc(func(_ context.Context, req model.Request) (model.Decision, error) {
		if req.Thread == "p" || req.Thread == "q" {
			return model.Decision{Text: "ten at once", ToolCalls: calls, Usage: facts.Usage{InputTokens: 10}}, nil
		}
		return model.Decision{ToolCalls: []facts.ToolCall{{ID: "w", Name: "write_file", Args: `{"path":"x"}`}}, Usage: facts.Usage{InputTokens: 10}}, nil
	})
	tools := benchTools(b)
	cfg, err := harness.NewConfig()
	require.NoError(b, err)
	actor, err := harness.DelegatingActor(cfg, tools)
	require.NoError(b, err)
	rt, err := harness.NewRuntime(s, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(b, err)
	set, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: facts.Spend{Tokens: 1_000_000}})
	require.NoError(b, err)
	out, err := rt.Thread(actor, "p").Start(ctx, "go", harness.Ingress{Draft: set, Key: "budget"})
	require.NoError(b, err)
	require.Equal(b, harness.StatusParked, out.Status)
	out, err = rt.Thread(actor, "q").Start(ctx, "go")
	require.NoError(b, err)
	require.Equal(b, harness.StatusParked, out.Status)

	resume := func(id string) time.Duration {
		start := time.Now()
		out, err := rt.Thread(actor, id).Resume(ctx)
		if err != nil || out.Status != harness.StatusParked || out.Steps != 0 || len(out.Waits) != kids {
			b.Fatalf("%s: %+v, %v", id, out, err)
		}
		return time.Since(start)
	}
	var budgetT, plainT time.Duration
	for b.Loop() {
		b.StopTimer()
		plainT += resume("q")
		b.StartTimer()
		budgetT += resume("p")
	}
	n := float64(b.N)
	b.ReportMetric(float64(budgetT.Microseconds())/n/1000, "ms/resume")
	b.ReportMetric(float64(plainT.Microseconds())/n/1000, "ms/resume-unbudgeted")
	b.ReportMetric(budgetT.Seconds()/plainT.Seconds(), "ratio")
}
