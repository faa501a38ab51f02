package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// timedStore is a store that notes each acknowledged append: its thread,
// its kinds and when it was acknowledged.
type timedStore struct {
	thread.Store
	mu      sync.Mutex
	appends []timedAppend
}

type timedAppend struct {
	thread string
	kinds  []facts.Kind
	at     time.Time
}

func (s *timedStore) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	h, err := s.Store.Append(ctx, id, after, drafts...)
	if err == nil {
		kinds := make([]facts.Kind, len(drafts))
		for i, d := range drafts {
			kinds[i] = d.Kind
		}
		s.mu.Lock()
		s.appends = append(s.appends, timedAppend{id, kinds, time.Now()})
		s.mu.Unlock()
	}
	return h, err
}

// take returns the appends noted since the last take.
func (s *timedStore) take() []timedAppend {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.appends
	s.appends = nil
	return out
}

// benchTools is a read tool that does nothing, and a write tool (asks
// for confirmation) that does nothing.
func benchTools(b *testing.B) *harness.Toolbox {
	ok := func(context.Context, json.RawMessage) (facts.Report, error) {
		return facts.Report{Status: facts.StatusSucceeded, Stdout: "ok"}, nil
	}
	tb, err := harness.NewToolbox(
		harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read, Run: ok},
		harness.Tool{Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write, Run: ok},
	)
	require.NoError(b, err)
	return tb
}

// BenchmarkDelegation measures one delegation from end to end on a real
// Pebble store — the parent's turn delegates, the child is spawned, takes
// one turn, ends, and its report is posted, and the parent takes its next
// turn — against the same thread whose turn calls a read tool instead (a
// plain action: requested, started, completed), interleaved op by op.
// ratio is the delegation's time over the tool call's. It also reports
// the appends and the time of the spawn (from the parent's model.turn to
// the child's first facts: child.spawned, and the child's creation) and
// of the result's delivery (from the child's last model.turn to the
// parent's child.reported: thread.ended, and child.reported).
func BenchmarkDelegation(b *testing.B) {
	ctx := context.Background()
	store := &timedStore{Store: openBenchStore(b)}
	m := modelFunc(func(_ context.Context, req model.Request) (model.Decision, error) {
		switch {
		case strings.Contains(req.Thread, "."):
			return model.Decision{Text: "done"}, nil
		case req.Turn > 1:
			return model.Decision{Text: "the child did it"}, nil
		case strings.HasPrefix(req.Thread, "tool"):
			return model.Decision{ToolCalls: []facts.ToolCall{{ID: "r", Name: "read_file", Args: `{"path":"a"}`}}}, nil
		}
		return model.Decision{ToolCalls: []facts.ToolCall{{ID: "d", Name: harness.DelegateTool, Args: `{"task":"read a"}`}}}, nil
	})
	tools := benchTools(b)
	cfg, err := harness.NewConfig()
	require.NoError(b, err)
	actor, err := harness.DelegatingActor(cfg, tools)
	require.NoError(b, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(b, err)

	var toolT, delegT, spawnT, deliverT time.Duration
	var toolAppends, delegAppends, spawnAppends, deliverAppends int
	i := 0
	for b.Loop() {
		i++
		b.StopTimer()
		store.take()
		start := time.Now()
		out, err := rt.Start(ctx, actor, fmt.Sprintf("tool%d", i), "go")
		toolT += time.Since(start)
		if err != nil || out.Status != harness.StatusDone {
			b.Fatalf("tool thread: %+v, %v", out, err)
		}
		toolAppends += len(store.take())
		b.StartTimer()

		start = time.Now()
		out, err = rt.Start(ctx, actor, fmt.Sprintf("deleg%d", i), "go")
		delegT += time.Since(start)
		if err != nil || out.Status != harness.StatusDone {
			b.Fatalf("delegation: %+v, %v", out, err)
		}
		b.StopTimer()
		appends := store.take()
		delegAppends += len(appends)
		var turn1, created, lastChildTurn, reported time.Time
		for _, a := range appends {
			child := strings.Contains(a.thread, ".")
			switch k := a.kinds[0]; {
			case !child && k == facts.KindModelTurn && turn1.IsZero():
				turn1 = a.at
			case !child && k == facts.KindChildSpawned:
				spawnAppends++
			case child && k == facts.KindThreadSpawned:
				created = a.at
				spawnAppends++
			case child && k == facts.KindModelTurn:
				lastChildTurn = a.at
			case child && k == facts.KindThreadEnded:
				deliverAppends++
			case !child && k == facts.KindChildReported:
				reported = a.at
				deliverAppends++
			}
		}
		spawnT += created.Sub(turn1)
		deliverT += reported.Sub(lastChildTurn)
		b.StartTimer()
	}
	n := float64(i)
	b.ReportMetric(float64(delegT.Microseconds())/n/1000, "ms/delegation")
	b.ReportMetric(float64(toolT.Microseconds())/n/1000, "ms/tool-call")
	b.ReportMetric(float64(spawnT.Microseconds())/n/1000, "spawn-ms")
	b.ReportMetric(float64(spawnAppends)/n, "spawn-appends")
	b.ReportMetric(float64(deliverT.Microseconds())/n/1000, "delivery-ms")
	b.ReportMetric(float64(deliverAppends)/n, "delivery-appends")
	b.ReportMetric(float64(delegAppends-toolAppends)/n, "appends-over-tool-call")
	b.ReportMetric(delegT.Seconds()/toolT.Seconds(), "ratio")
}

// BenchmarkResumeParentWith10Children resumes, as a new process would
// (nothing folded yet), a parent whose one turn delegated ten tasks, each
// child parked on a write's confirmation: the runtime folds the parent,
// opens each child (its link checked, its actor composed), resumes it (it
// runs nothing), and returns the tree parked on the ten confirmations. The
// baseline resumes ten threads parked the same way on their own. ratio is
// the parent's time over the ten threads'.
func BenchmarkResumeParentWith10Children(b *testing.B) {
	const kids = 10
	ctx := context.Background()
	s := openBenchStore(b)
	var calls []facts.ToolCall
	for k := range kids {
		calls = append(calls, facts.ToolCall{ID: fmt.Sprintf("d%d", k), Name: harness.DelegateTool, Args: fmt.Sprintf(`{"task":"write %d"}`, k)})
	}
	m := modelFunc(func(_ context.Context, req model.Request) (model.Decision, error) {
		if req.Thread == "p" {
			return model.Decision{Text: "ten at once", ToolCalls: calls}, nil
		}
		return model.Decision{ToolCalls: []facts.ToolCall{{ID: "w", Name: "write_file", Args: `{"path":"x"}`}}}, nil
	})
	tools := benchTools(b)
	cfg, err := harness.NewConfig()
	require.NoError(b, err)
	actor, err := harness.DelegatingActor(cfg, tools)
	require.NoError(b, err)
	rt, err := harness.NewRuntime(s, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(b, err)
	out, err := rt.Start(ctx, actor, "p", "go")
	require.NoError(b, err)
	require.Equal(b, harness.StatusParked, out.Status)
	require.Len(b, out.Waits, kids, "ten children, each waiting for a confirmation (the children's requests listed, not their unanswerable child waits)")
	for k := range kids {
		out, err := rt.Start(ctx, actor, fmt.Sprintf("alone%d", k), "go")
		require.NoError(b, err)
		require.Equal(b, harness.StatusParked, out.Status)
	}

	var treeT, aloneT time.Duration
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		for k := range kids {
			out, err := rt.Thread(actor, fmt.Sprintf("alone%d", k)).Resume(ctx)
			if err != nil || out.Status != harness.StatusParked || out.Steps != 0 {
				b.Fatalf("alone: %+v, %v", out, err)
			}
		}
		aloneT += time.Since(start)
		b.StartTimer()

		start = time.Now()
		out, err := rt.Thread(actor, "p").Resume(ctx)
		treeT += time.Since(start)
		if err != nil || out.Status != harness.StatusParked || out.Steps != 0 || len(out.Waits) != kids {
			b.Fatalf("tree: %+v, %v", out, err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(treeT.Microseconds())/n/1000, "ms/resume")
	b.ReportMetric(float64(aloneT.Microseconds())/n/1000, "ms/10-threads")
	b.ReportMetric(treeT.Seconds()/aloneT.Seconds(), "ratio")
}
