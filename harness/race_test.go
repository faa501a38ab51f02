package harness_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// counted is the services of a runtime whose model calls and tool runs are
// counted outside the log, across all the runtimes that share them. Both
// take a little while, so that racing runtimes overlap.
type counted struct {
	script *model.Scripted
	delay  time.Duration

	mu    sync.Mutex
	turns map[int]int    // model turn → calls
	runs  map[string]int // "name args" → runs
}

func newCounted(script *model.Scripted, delay time.Duration) *counted {
	return &counted{script: script, delay: delay, turns: map[int]int{}, runs: map[string]int{}}
}

func (c *counted) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	c.mu.Lock()
	c.turns[req.Turn]++
	c.mu.Unlock()
	if err := sleep(ctx, c.delay); err != nil {
		return model.Decision{}, err
	}
	return c.script.Turn(ctx, req)
}

func (c *counted) run(ctx context.Context, name, args string) (facts.Report, error) {
	c.mu.Lock()
	c.runs[name+" "+args]++
	c.mu.Unlock()
	if err := sleep(ctx, c.delay); err != nil {
		return facts.Report{}, err
	}
	return facts.Report{Status: facts.StatusSucceeded, Stdout: "ran " + name}, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// raceRig is n runtimes, each its own Runtime value, on one store, sharing
// counted services.
type raceRig struct {
	store    *thread.PebbleStore
	svc      *counted
	actor    harness.Actor
	runtimes []*harness.Runtime
}

func newRaceRig(t *testing.T, n int, turns int, delay time.Duration) *raceRig {
	t.Helper()
	store, err := thread.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	r := &raceRig{store: store, svc: newCounted(codingScript(t, turns), delay)}
	tools := codingTools(t, r.svc.run)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	r.actor, err = harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	for range n {
		rt, err := harness.NewRuntime(store, harness.Services{Model: r.svc, Tools: tools}, cfg)
		require.NoError(t, err)
		r.runtimes = append(r.runtimes, rt)
	}
	return r
}

// all calls f with every runtime at once, each on its own goroutine,
// released together, and returns their outcomes and errors in runtime
// order.
func (r *raceRig) all(f func(rt *harness.Runtime) (harness.Outcome, error)) ([]harness.Outcome, []error) {
	outs := make([]harness.Outcome, len(r.runtimes))
	errs := make([]error, len(r.runtimes))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, rt := range r.runtimes {
		wg.Go(func() {
			<-start
			outs[i], errs[i] = f(rt)
		})
	}
	close(start)
	wg.Wait()
	return outs, errs
}

// TestEightRuntimesResumeOneThread starts one coding thread from eight
// runtimes at once, then after each confirmation it parks on posts the
// approval once and resumes it from eight runtimes at once, until it is
// done. Every key must be a cause exactly once, the model called once per
// turn, every approved tool run once, and the log the same as one runtime
// alone writes.
func TestEightRuntimesResumeOneThread(t *testing.T) {
	const (
		racers = 8
		turns  = 5 // a write, a read, a write and a command at once, a write, text
		id     = "race"
	)
	ctx := context.Background()

	// The reference: one runtime alone.
	ref := newRaceRig(t, 1, turns, 0)
	out, err := drive(ctx, ref.runtimes[0], ref.actor, id, "Make the changes.")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	want := readLog(t, ref.store, id)

	r := newRaceRig(t, racers, turns, 2*time.Millisecond)
	outs, errs := r.all(func(rt *harness.Runtime) (harness.Outcome, error) {
		return startOrResume(ctx, rt, r.actor, id, "Make the changes.")
	})
	phases := 0
	for {
		phases++
		head, err := r.store.Head(ctx, id)
		require.NoError(t, err)
		for i := range outs {
			require.NoError(t, errs[i], "runtime %d, phase %d", i, phases)
			require.Equal(t, outs[0].Status, outs[i].Status, "runtime %d, phase %d: every runtime sees the same end", i, phases)
			require.Equal(t, outs[0].Waits, outs[i].Waits, "runtime %d, phase %d", i, phases)
			require.Equal(t, head.Seq, outs[i].Seq, "runtime %d, phase %d: every runtime saw the head", i, phases)
		}
		if outs[0].Status != harness.StatusParked {
			break
		}
		// One person answers once; then eight runtimes go on at once.
		for _, w := range outs[0].Waits {
			require.Equal(t, fold.WaitConfirmation, w.Kind)
			require.NoError(t, answer(ctx, r.runtimes[0], r.actor, id, w))
		}
		outs, errs = r.all(func(rt *harness.Runtime) (harness.Outcome, error) {
			return rt.Resume(ctx, r.actor, id)
		})
	}
	require.Equal(t, harness.StatusDone, outs[0].Status)
	require.Equal(t, 4, phases, "the thread parked on three confirmations, one of them for two calls at once")

	got := readLog(t, r.store, id)
	require.NoError(t, audit.VerifyLog(ctx, r.store, r.actor, id))
	requireCausesOnce(t, got)
	require.Equal(t, kindsOf(want), kindsOf(got), "the same kinds, in the same order, as one runtime alone")
	require.Equal(t, entriesOf(want), entriesOf(got), "and the same causes")

	// Outside the log: the model was called once per turn and every
	// approved call ran once.
	wantTurns := map[int]int{}
	for turn := 1; turn <= turns; turn++ {
		wantTurns[turn] = 1
	}
	require.Equal(t, wantTurns, r.svc.turns, "model calls per turn")
	wantRuns := map[string]int{}
	for _, call := range requestedCalls(t, got) {
		wantRuns[call]++
	}
	require.Len(t, wantRuns, 5, "five tool calls, all distinct")
	require.Equal(t, wantRuns, r.svc.runs, "tool runs per approved call")
	require.Equal(t, ref.svc.runs, r.svc.runs)
}
