package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
	"github.com/seed-7cc7a084/harness/worker"
)

// startWorkerIn is startWorker with a worker of workspace ws
// (Options.Workspace), whose actor and runtimes record ws.
func startWorkerIn(t *testing.T, sc scenario, ws string) (*events, func()) {
	t.Helper()
	cfg, err := harness.NewConfig(harness.WithModelName("scripted"), harness.WithModelBackoff(0), harness.WithWorkspace(ws))
	require.NoError(t, err)
	tb, err := harness.NewToolbox(sc.appendLine(""))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tb) // the actor records the workspace it is configured with
	require.NoError(t, err)
	return startWorkerWith(t, sc, func(o *worker.Options, store thread.Store) {
		o.Workspace, o.Actor = ws, actor
		o.Runtime = func(id string) (*harness.Runtime, func(), error) {
			tb, err := harness.NewToolbox(sc.appendLine(id))
			if err != nil {
				return nil, nil, err
			}
			rt, err := harness.NewRuntime(store, harness.Services{Tools: tb}, cfg)
			return rt, func() {}, err
		}
	})
}

// A worker of one workspace never drives a thread that records another
// (a store shared by two workspaces): its commands would act in the
// worker's directory, under its settings. It puts the job off, and a
// worker of the thread's workspace drives it.
func TestAWorkerDrivesOnlyItsWorkspacesThreads(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), twoCalls)
	sc.Approve = "ask"
	store := sc.dial(t)
	parked := func(call string) func(drive.State) bool {
		return func(st drive.State) bool {
			return st.Status == harness.StatusParked && len(st.Waits) == 1 && st.Waits[0].Kind == fold.WaitConfirmation && st.Waits[0].RequestID == call
		}
	}
	_, stopA := startWorkerIn(t, sc, "/ws/a")
	ids := submit(t, sc, store, "t", 1)
	waitFor(t, sc, store, ids, 20*time.Second, parked("1-c1"))
	ws, err := threadView(t, sc, store, "t1").Own.Workspace()
	require.NoError(t, err)
	require.Equal(t, "/ws/a", ws)
	stopA()

	evB, stopB := startWorkerIn(t, sc, "/ws/b")
	actor, cfg, err := sc.parts()
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
	require.NoError(t, err)
	st := view(t, sc, store, "t1")
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: "1-c1", Approved: true, By: "ana", Digest: st.Waits[0].Digest})
	require.NoError(t, err)
	_, err = drive.PostAnswer(context.Background(), rt.Thread(actor, "t1"), d, drive.AnswerKey(d.Kind, "1-c1"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return evB.count(worker.EventElsewhere) > 0 }, 20*time.Second, 10*time.Millisecond)
	head, err := store.Head(context.Background(), "t1")
	require.NoError(t, err)
	time.Sleep(2 * sc.AckWait)
	require.Empty(t, lines(t, sc), "the worker of /ws/b ran nothing")
	again, err := store.Head(context.Background(), "t1")
	require.NoError(t, err)
	require.Equal(t, head, again, "and appended nothing")
	require.Zero(t, evB.count(worker.EventStopped), "no drive ended there")

	// A worker of /ws/a takes the job the other put off (once it is given
	// out again).
	stopB()
	startWorkerIn(t, sc, "/ws/a")
	waitFor(t, sc, store, ids, 60*time.Second, parked("2-c2"))
	require.Equal(t, map[string]int{"t1 1": 1}, lines(t, sc))
}
