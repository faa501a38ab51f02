package worker_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
	"github.com/seed-7cc7a084/harness/worker"
)

// TestGoPolicyDrivesAWorker: a policy written in Go, given to a worker
// (Options.Policy), decides the calls of a thread that records no policy
// of its own, and not Approval: its approval runs the call, its denial is
// told to the model, and each answer is recorded by the policy's name
// with its rule as the reason. The worker asks nobody.
func TestGoPolicyDrivesAWorker(t *testing.T) {
	srv := natstest.Server(t)
	ctx := context.Background()
	store, err := natsstore.Dial(ctx, srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })

	var mu sync.Mutex // guards ran, asked
	var ran []int
	var asked []string
	tools, err := harness.NewToolbox(harness.Tool{
		Spec:  facts.ToolSchema{Name: "append_line"},
		Needs: action.Write,
		Run: func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			var a struct{ N int }
			if err := json.Unmarshal(args, &a); err != nil {
				return facts.Report{}, err
			}
			mu.Lock()
			ran = append(ran, a.N)
			mu.Unlock()
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "appended"}, nil
		},
	})
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	script := `{"text": "First.", "tool_calls": [{"id": "c1", "name": "append_line", "args": "{\"n\": 1}"}]}
{"text": "Second.", "tool_calls": [{"id": "c2", "name": "append_line", "args": "{\"n\": 2}"}]}
{"text": "Done."}`
	m, err := model.ParseScript("worker", []byte(script))
	require.NoError(t, err)

	policy := drive.PolicyFunc("policy:first-only", func(tool string, c action.Capability, args string) drive.Decision {
		mu.Lock()
		asked = append(asked, tool+" "+args+" "+string(c))
		mu.Unlock()
		var a struct{ N int }
		if json.Unmarshal([]byte(args), &a) == nil && a.N == 1 {
			return drive.Decision{Approved: true, Rule: "the first line may be written"}
		}
		return drive.Decision{Rule: "only the first line"}
	})

	rt, err := harness.NewRuntime(store, harness.Services{Tools: tools}, cfg)
	require.NoError(t, err)
	_, err = rt.Thread(actor, "t1").Submit(ctx, "Append two lines")
	require.NoError(t, err)

	work, err := store.Work(ctx)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var final drive.State
	w, err := worker.New(worker.Options{
		Store: store, Queue: worker.FromWork(work), Actor: actor,
		// Approval would approve everything: the Policy decides instead.
		Approval: drive.Approval{Mode: "all"},
		Policy:   policy,
		Runtime: func(id string) (*harness.Runtime, func(), error) {
			rt, err := harness.NewRuntime(store, harness.Services{Tools: tools}, cfg)
			return rt, func() {}, err
		},
		LoadModel: func(string) (model.Model, error) { return m, nil },
		Log: func(e worker.Event) {
			if e.Kind == worker.EventStopped {
				final = e.State
				stop()
			}
		},
		Drain: 5 * time.Second,
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not finish the thread")
	}
	require.Equal(t, harness.StatusDone, final.Status, "%+v", final)

	mu.Lock()
	require.Equal(t, []int{1}, ran, "the policy's denial is not run")
	require.Equal(t, []string{`append_line {"n": 1} write`, `append_line {"n": 2} write`}, asked)
	mu.Unlock()

	var answers []facts.ConfirmationAnswered
	for f, err := range store.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindConfirmationAnswered {
			a, err := facts.Decode[facts.ConfirmationAnswered](f)
			require.NoError(t, err)
			answers = append(answers, a)
		}
	}
	require.Len(t, answers, 2)
	require.True(t, answers[0].Approved)
	require.Equal(t, "policy:first-only", answers[0].By)
	require.Equal(t, "the first line may be written", answers[0].Reason)
	require.False(t, answers[1].Approved)
	require.Equal(t, "policy:first-only", answers[1].By)
	require.Equal(t, "only the first line", answers[1].Reason)
}
