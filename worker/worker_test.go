package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
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

// Threads submitted to a store are driven to their end by the workers on
// it, each once: every line the threads' tool appends is there once, and
// every log verifies.
func TestWorkersDriveSubmittedThreads(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), twoCalls)
	store := sc.dial(t)
	ids := submit(t, sc, store, "t", 30)
	ev1, _ := startWorker(t, sc)
	ev2, _ := startWorker(t, sc)
	waitFor(t, sc, store, ids, 60*time.Second, func(st drive.State) bool { return st.Status == harness.StatusDone })

	got := lines(t, sc)
	require.Len(t, got, 2*len(ids))
	for _, id := range ids {
		require.Equal(t, 1, got[id+" 1"], id)
		require.Equal(t, 1, got[id+" 2"], id)
	}
	verifyAll(t, sc, store, ids)
	require.Positive(t, ev1.count(worker.EventTook), "both workers took threads")
	require.Positive(t, ev2.count(worker.EventTook), "both workers took threads")
	// Each thread's end is said once, though a worker may look again.
	// (A worker says it just after the thread's end is recorded: wait.)
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if ev1.ends(id)+ev2.ends(id) == 0 {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond, "every end is said")
	for _, id := range ids {
		require.Equal(t, 1, ev1.ends(id)+ev2.ends(id), id)
	}
}

// A thread that waits for a person costs a worker nothing while it
// waits — no look, no lease — and is taken up when the answer comes.
func TestAParkedThreadWakesWhenAnswered(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), twoCalls)
	sc.Approve = "ask"
	store := sc.dial(t)
	ev, _ := startWorker(t, sc)
	ids := submit(t, sc, store, "t", 1)
	parked := func(call string) func(drive.State) bool {
		return func(st drive.State) bool {
			return st.Status == harness.StatusParked && len(st.Waits) == 1 && st.Waits[0].Kind == fold.WaitConfirmation && st.Waits[0].RequestID == call
		}
	}
	waitFor(t, sc, store, ids, 20*time.Second, parked("1-c1"))
	require.Empty(t, lines(t, sc), "nothing ran before the answer")

	// Parked: whatever time passes, the worker does nothing with it. (The
	// look that parked it may still be finishing: wait for its event.)
	require.Eventually(t, func() bool { return ev.count(worker.EventStopped) == 1 }, 10*time.Second, 10*time.Millisecond)
	looks := ev.count(worker.EventTook)
	time.Sleep(3 * sc.AckWait)
	require.Equal(t, looks, ev.count(worker.EventTook), "no look at a parked thread")

	approve := func(call string) {
		actor, cfg, err := sc.parts()
		require.NoError(t, err)
		rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
		require.NoError(t, err)
		st := view(t, sc, store, "t1")
		d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: call, Approved: true, By: "ana", Digest: st.Waits[0].Digest})
		require.NoError(t, err)
		_, err = drive.PostAnswer(context.Background(), rt.Thread(actor, "t1"), d, drive.AnswerKey(d.Kind, call))
		require.NoError(t, err)
	}
	approve("1-c1")
	waitFor(t, sc, store, ids, 20*time.Second, parked("2-c2"))
	require.Equal(t, map[string]int{"t1 1": 1}, lines(t, sc))
	approve("2-c2")
	waitFor(t, sc, store, ids, 20*time.Second, func(st drive.State) bool { return st.Status == harness.StatusDone })
	require.Equal(t, map[string]int{"t1 1": 1, "t1 2": 1}, lines(t, sc))
	verifyAll(t, sc, store, ids)
}

// A worker killed (SIGKILL) in the middle of a tool leaves the action in
// doubt only once its lease has lapsed: until then, the job it held goes
// to another worker, which finds the thread held and puts it off; then
// that worker holds the thread, records the action as interrupted
// without running it again, and parks the thread on reconcile.
func TestAWorkerKilledMidToolLeavesTheActionInDoubt(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), twoCalls)
	sc.LeaseTTL, sc.AckWait, sc.Block = 4*time.Second, time.Second, 1
	store := sc.dial(t)
	c := startChild(t, sc)
	ids := submit(t, sc, store, "t", 1)
	require.Eventually(t, func() bool { return exists(filepath.Join(sc.Dir, "running")) }, 20*time.Second, 10*time.Millisecond)
	c.kill()
	killed := time.Now()

	// Its lease still holds: the action is running, for all anyone knows.
	st := view(t, sc, store, "t1")
	require.Equal(t, []string{"1-c1"}, st.Running)
	require.Empty(t, st.InDoubt)

	ev, _ := startWorker(t, sc)
	waitFor(t, sc, store, ids, 30*time.Second, settled)
	took := time.Now()
	st = view(t, sc, store, "t1")
	require.Equal(t, harness.StatusParked, st.Status)
	require.Len(t, st.Waits, 1)
	require.Equal(t, fold.WaitReconcile, st.Waits[0].Kind)
	require.NotNil(t, st.Waits[0].Interrupted, "recorded as interrupted")
	require.Equal(t, map[string]int{"t1 1": 1}, lines(t, sc), "the call ran once")
	require.Positive(t, ev.count(worker.EventPutOff), "the job came while the dead worker's lease held")
	require.Equal(t, 1, ev.count(worker.EventInDoubt))
	// The lease was renewed at most a third of its TTL before the kill.
	require.GreaterOrEqual(t, took.Sub(killed), 2*sc.LeaseTTL/3-100*time.Millisecond, "in doubt only after the lease lapsed")
	verifyAll(t, sc, store, ids)
}

// A worker told to stop (SIGTERM) drains: the tool it is running runs to
// its end and is recorded, the drive stops before the next model turn,
// and the thread is handed over at once — its lease released and its job
// given back — so another worker goes on with it long before any lease
// or ack wait would have run out. The worker process exits 0.
func TestDrainOnSIGTERM(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), twoCalls)
	sc.LeaseTTL, sc.AckWait, sc.Block, sc.Release = 30*time.Second, 60*time.Second, 1, true
	store := sc.dial(t)
	c := startChild(t, sc)
	ids := submit(t, sc, store, "t", 1)
	require.Eventually(t, func() bool { return exists(filepath.Join(sc.Dir, "running")) }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, os.WriteFile(filepath.Join(sc.Dir, "release"), nil, 0o644))
	err, exited := c.wait(20 * time.Second)
	require.True(t, exited, "the worker exits after SIGTERM")
	require.NoError(t, err, "the worker exits 0 after its drain")
	ks := kinds(t, store, "t1")
	require.Contains(t, ks, facts.KindActionCompleted, "the running tool's record landed")
	require.NotContains(t, ks, facts.KindActionInterrupted)
	require.Equal(t, harness.StatusResumable, view(t, sc, store, "t1").Status)

	start := time.Now()
	startWorker(t, sc)
	waitFor(t, sc, store, ids, 20*time.Second, func(st drive.State) bool { return st.Status == harness.StatusDone })
	require.Less(t, time.Since(start), 10*time.Second, "handed over: no lease or ack wait ran out")
	require.Equal(t, map[string]int{"t1 1": 1, "t1 2": 1}, lines(t, sc))
	verifyAll(t, sc, store, ids)
}

func TestNewRefusesBadOptions(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), oneTurn)
	store := sc.dial(t)
	work, err := store.Work(context.Background())
	require.NoError(t, err)
	good, err := sc.options(store, worker.FromWork(work), nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		break_ func(*worker.Options)
		want   string
	}{
		{"no store", func(o *worker.Options) { o.Store = nil }, "no store"},
		{"no queue", func(o *worker.Options) { o.Queue = nil }, "no queue"},
		{"no runtime", func(o *worker.Options) { o.Runtime = nil }, "no way to build a runtime"},
		{"no model", func(o *worker.Options) { o.LoadModel = nil }, "no way to load a model"},
		{"negative concurrency", func(o *worker.Options) { o.Concurrency = -1 }, "concurrency -1"},
		{"negative retry", func(o *worker.Options) { o.Retry = -time.Second }, "retry -1s"},
		{"negative drain", func(o *worker.Options) { o.Drain = -time.Second }, "drain -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.break_(&o)
			_, err := worker.New(o)
			require.ErrorContains(t, err, tc.want)
		})
	}
	w, err := worker.New(good)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, w.Run(ctx))
	require.ErrorIs(t, w.Run(ctx), worker.ErrRunning)
}

func TestEventRecord(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stopped := worker.Event{Kind: worker.EventStopped, Thread: "t1", State: drive.State{
		Thread: "t1", Status: harness.StatusParked, Head: thread.Head{Seq: 7}, InDoubt: []string{"1-c"},
		Waits: []drive.Pending{{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-w"}}},
	}}
	b, err := json.Marshal(stopped.Record(at))
	require.NoError(t, err)
	require.JSONEq(t, `{"time": "2026-01-02T03:04:05Z", "event": "stopped", "thread": "t1", "status": "parked", "seq": 7,
		"waits": ["confirmation 1-w"], "in_doubt": ["1-c"]}`, string(b))
	failed := worker.Event{Kind: worker.EventError, Thread: "t2", Err: errors.New("no lease"), Later: 2 * time.Second}
	b, err = json.Marshal(failed.Record(at))
	require.NoError(t, err)
	require.JSONEq(t, `{"time": "2026-01-02T03:04:05Z", "event": "error", "thread": "t2", "error": "no lease", "again_in": "2s"}`, string(b))
}

// A stop asked for from elsewhere while a worker runs a call of the
// thread reaches the worker: the call is cut off and recorded as
// interrupted, the worker records the stop and says the thread stopped,
// and Stop returns once it has let go.
func TestStopReachesAWorker(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), twoCalls)
	sc.Block, sc.Stoppable = 1, true
	store := sc.dial(t)
	ev, _ := startWorker(t, sc)
	ids := submit(t, sc, store, "t", 1)
	require.Eventually(t, func() bool { return exists(filepath.Join(sc.Dir, "running")) }, 20*time.Second, 10*time.Millisecond)

	actor, cfg, err := sc.parts()
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
	require.NoError(t, err)
	out, err := rt.Thread(actor, ids[0]).Stop(context.Background(), "ana", "enough")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStopped, out.Status)
	require.Equal(t, "stopped by ana: enough", out.Reason)

	var kinds []facts.Kind
	for f, err := range store.Read(context.Background(), ids[0], 1) {
		require.NoError(t, err)
		kinds = append(kinds, f.Kind)
	}
	require.Equal(t, []facts.Kind{facts.KindActionStarted, facts.KindStopRequested, facts.KindActionInterrupted, facts.KindThreadStopped},
		kinds[len(kinds)-4:], "%v", kinds)
	require.NotContains(t, kinds, facts.KindActionCompleted)
	require.Eventually(t, func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		for _, e := range ev.all {
			if e.Kind == worker.EventStopped && e.State.Status == harness.StatusStopped {
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "the worker says the thread stopped")
	verifyAll(t, sc, store, ids)
}
