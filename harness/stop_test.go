package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// Stop of a thread another runtime runs reaches the command it runs: the
// command's process is gone when Stop returns, the call is recorded as
// interrupted (never as completed), thread.stopped comes after it, the
// Resume that ran it ends stopped (no error), and the log verifies.
func TestStopReachesTheRunningCommand(t *testing.T) {
	marker := fmt.Sprintf("3600.%d%03d", os.Getpid()%100000, cancelMarkers.Add(1))
	e := newCancelEnv(t, func(out string) string { return fmt.Sprintf("echo $$ > %s/pid; exec sleep %s", out, marker) })
	var (
		out  harness.Outcome
		serr error
		took time.Duration
	)
	err, pid := e.midCommand(t, context.Background(), marker, func() {
		begin := time.Now()
		// Another Thread of the same store, as another front end has.
		out, serr = e.rt.Thread(e.actor, "t1").Stop(context.Background(), "ana", "enough")
		took = time.Since(begin)
	})
	require.NoError(t, serr)
	require.NoError(t, err, "the Resume that ran the command ends stopped, not cancelled")
	gonePid(t, pid, marker)
	require.Equal(t, harness.StatusStopped, out.Status)
	require.Equal(t, "stopped by ana: enough", out.Reason)
	require.Less(t, took, 20*time.Second, "Stop returns once the command is cut off (the benchmark measures how soon)")

	log := readLog(t, e.store, "t1")
	kinds := kindsOf(log)
	require.Equal(t, []facts.Kind{facts.KindActionStarted, facts.KindStopRequested, facts.KindActionInterrupted, facts.KindThreadStopped},
		kinds[len(kinds)-4:], "%v", kinds)
	require.NotContains(t, kinds, facts.KindActionCompleted)
	in := interruptedOf(t, e.store, "t1")
	require.True(t, in.Cancelled)
	ts, err := facts.Decode[facts.ThreadStopped](log[len(log)-1])
	require.NoError(t, err)
	require.Equal(t, facts.ThreadStopped{By: "ana", Reason: "enough"}, ts, "the stop recorded is the one asked for")
	require.NoError(t, audit.VerifyLog(context.Background(), e.store, e.actor, "t1"))

	again, err := e.rt.Resume(context.Background(), e.actor, "t1")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStopped, again.Status)
	require.Zero(t, again.Steps, "nothing runs in a stopped thread")
	require.Len(t, e.model.requests(), 1)
	out, err = e.rt.Thread(e.actor, "t1").Stop(context.Background(), "bo", "again")
	require.NoError(t, err)
	require.Equal(t, "stopped by ana: enough", out.Reason)
	require.Len(t, readLog(t, e.store, "t1"), len(log), "a thread is stopped once")
}

// blockingModel answers no turn: it waits until its context ends.
type blockingModel struct{ asked chan struct{} }

func (m blockingModel) Turn(ctx context.Context, _ model.Request) (model.Decision, error) {
	close(m.asked)
	<-ctx.Done()
	return model.Decision{}, ctx.Err()
}

// A stop asked for during a model turn drops the turn (nothing of it is
// recorded) and stops the thread.
func TestStopDuringAModelTurn(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	defer store.Close()
	tb, err := harness.NewToolbox()
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tb)
	require.NoError(t, err)
	m := blockingModel{asked: make(chan struct{})}
	rt, err := harness.NewRuntime(store, harness.Services{Model: m, Tools: tb}, cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	var out harness.Outcome
	go func() {
		var err error
		out, err = rt.Start(ctx, actor, "t1", "Think hard")
		done <- err
	}()
	select {
	case <-m.asked:
	case <-time.After(60 * time.Second):
		t.Fatal("the model was never asked")
	}
	stopped, err := rt.Thread(actor, "t1").Stop(ctx, "ana", "")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStopped, stopped.Status)
	require.NoError(t, <-done)
	require.Equal(t, harness.StatusStopped, out.Status)
	kinds := kindsOf(readLog(t, store, "t1"))
	require.Equal(t, []facts.Kind{facts.KindStopRequested, facts.KindThreadStopped}, kinds[len(kinds)-2:], "%v", kinds)
	require.NotContains(t, kinds, facts.KindModelTurn)
	require.NotContains(t, kinds, facts.KindTransitionFailed)
	require.NoError(t, audit.VerifyLog(ctx, store, actor, "t1"))
}

// BenchmarkStopLatency: from Stop (asked of another runtime that runs a
// sleeping command in the sandbox) to the command's process gone and the
// stop recorded, against a bare SIGTERM to a sleeping child process and
// its reaping. The stop waits for the runtime's next look at the log
// (stopPoll), the kill, an observation of the workspace and two appends.
func BenchmarkStopLatency(b *testing.B) {
	var stop, term time.Duration
	for i := 0; b.Loop(); i++ {
		marker := fmt.Sprintf("3600.%d%03d", os.Getpid()%100000, cancelMarkers.Add(1))
		e := newCancelEnv(b, func(out string) string { return fmt.Sprintf("echo $$ > %s/pid; exec sleep %s", out, marker) })
		var took time.Duration
		_, pid := e.midCommand(b, context.Background(), marker, func() {
			begin := time.Now()
			out, err := e.rt.Thread(e.actor, "t1").Stop(context.Background(), "ana", "")
			took = time.Since(begin)
			require.NoError(b, err)
			require.Equal(b, harness.StatusStopped, out.Status)
		})
		gonePid(b, pid, marker)
		stop += took

		term += harnesstest.SIGTERMTook(b)
	}
	n := float64(b.N)
	b.ReportMetric(float64(stop)/n/1e6, "stop-ms/op")
	b.ReportMetric(float64(term)/n/1e6, "sigterm-ms/op")
	b.ReportMetric(float64(stop)/float64(term), "stop/sigterm")
}

// A stop of a parent asked for while its child runs a call reaches the
// call: it is recorded as interrupted in the child, then the parent is
// stopped and stops the child, which ends and reports; the tree verifies.
func TestStopReachesAChildsCall(t *testing.T) {
	ctx := context.Background()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	defer store.Close()
	started := make(chan struct{})
	tools, err := harness.NewToolbox(harness.Tool{Spec: facts.ToolSchema{Name: "wait"}, Needs: action.Read,
		Run: func(ctx context.Context, _ json.RawMessage) (facts.Report, error) {
			close(started)
			<-ctx.Done()
			return facts.Report{}, ctx.Err()
		}})
	require.NoError(t, err)
	m, err := model.ParseScript("tree", []byte(`{"text": "A helper waits.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Wait\"}"}]}
{"text": "Done."}
{"thread": "1-d1", "tool_calls": [{"id": "w", "name": "wait", "args": "{}"}]}
{"thread": "1-d1", "text": "Waited."}
`))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.Compose(cfg, harness.System(), harness.Tools(tools), harness.Budget(), harness.Infer(harness.Scheduler()), harness.Delegate(nil))
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	var out harness.Outcome
	go func() {
		var err error
		out, err = rt.Start(ctx, actor, "p", "go")
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		t.Fatal("the child's call never started")
	}
	stopped, err := rt.Thread(actor, "p").Stop(ctx, "ana", "enough")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStopped, stopped.Status)
	require.NoError(t, <-done)
	require.Equal(t, harness.StatusStopped, out.Status)

	child := kindsOf(readLog(t, store, "p.1-d1"))
	require.Equal(t, []facts.Kind{facts.KindActionStarted, facts.KindActionInterrupted, facts.KindThreadStopped, facts.KindThreadEnded},
		child[len(child)-4:], "%v", child)
	require.NotContains(t, child, facts.KindActionCompleted)
	parent := kindsOf(readLog(t, store, "p"))
	require.Equal(t, []facts.Kind{facts.KindStopRequested, facts.KindThreadStopped, facts.KindChildReported}, parent[len(parent)-3:], "%v", parent)
	require.NoError(t, audit.VerifyTree(ctx, store, actor, "p"))
}
