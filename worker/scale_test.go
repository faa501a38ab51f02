package worker_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
)

// TestScale: 4 worker processes drive 4×200 scripted threads on a 3-node
// cluster (every stream and bucket with 3 replicas), each thread two
// calls of a tool that appends a line to a file, approved by the
// workers' policy. Meanwhile workers are killed at random (SIGKILL, each
// replaced by a new process) and the node leading the stream is shut
// down. At the end every thread is done, or parked on reconcile (a
// worker died in the middle of its call: the call is in doubt, and was
// not run again); no line was written twice and every call that
// completed wrote its line; every append a worker was told succeeded is
// in the log; every log verifies.
//
// The tool is a Go function in the worker process, not run_command: a
// SIGKILL of the worker then stops the call exactly where it is — the
// line written or not — with no shell or sandbox left running, and
// spawning 1600 shells and sandboxes would spend this test's time on
// process start-up rather than on what it tests (the sandbox has tests
// of its own).
func TestScale(t *testing.T) {
	workers, kills, nodeAt, ripe := 4, 10, 2, 2*time.Second
	threads := workers * 200
	if testing.Short() || raceDetector {
		threads, kills, nodeAt, ripe = 100, 2, 1, time.Second
	}
	c := natstest.NewCluster(t)
	sc := newScenario(t, c.URL(), twoCalls)
	sc.Replicas, sc.Concurrency, sc.Pause = 3, 16, 50*time.Millisecond
	sc.LeaseTTL, sc.AckWait, sc.Retry = time.Second, 2*time.Second, 200*time.Millisecond
	store := sc.dial(t)
	ids := submit(t, sc, store, "t", threads)

	gen := 0
	spawn := func() *child {
		gen++
		w := sc
		w.AckLog = filepath.Join(sc.Dir, fmt.Sprintf("acked.%d", gen))
		return startChild(t, w)
	}
	running := make([]*child, workers)
	for i := range running {
		running[i] = spawn()
	}

	// The threads are watched from a goroutine of their own: a settled
	// thread stays so (nobody answers it), and one that may be settled
	// ends with a model turn or an interrupted action and has not moved
	// since the last look: only those are read.
	type progress struct{ settled int }
	watch := make(chan progress, 1)
	stopWatch := make(chan struct{})
	var watcher sync.WaitGroup
	defer watcher.Wait()
	defer close(stopWatch)
	watcher.Go(func() {
		unsettled := ids
		heads := make([]uint64, threads+1) // by thread number
		for len(unsettled) > 0 {
			// Sixteen looks at a time (a read may stall a while after the node
			// is gone).
			settled := make([]bool, len(unsettled))
			var (
				sweep  sync.WaitGroup
				next   = make(chan int)
				failed atomic.Value
			)
			for range 16 {
				sweep.Go(func() {
					for i := range next {
						id := unsettled[i]
						n, _ := strconv.Atoi(strings.TrimPrefix(id, "t"))
						h, err := store.Head(context.Background(), id)
						if err != nil {
							failed.Store(err)
							continue
						}
						if (h.Kind == facts.KindModelTurn || h.Kind == facts.KindActionInterrupted) && heads[n] == h.Seq {
							v, err := viewOf(sc, store, id)
							if err != nil {
								failed.Store(err)
								continue
							}
							settled[i] = settledView(v)
						}
						heads[n] = h.Seq
					}
				})
			}
			for i := range unsettled {
				next <- i
			}
			close(next)
			sweep.Wait()
			if err := failed.Load(); err != nil {
				// The cluster is electing a leader, say: look again.
				t.Logf("watching the threads: %v", err)
			}
			var still []string
			for i, id := range unsettled {
				if !settled[i] {
					still = append(still, id)
				}
			}
			unsettled = still
			select {
			case <-watch:
			default:
			}
			watch <- progress{settled: threads - len(unsettled)}
			select {
			case <-stopWatch:
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	})

	// The chaos: a worker killed every second or so (one up for a while,
	// so that it drives threads; a new process takes its place), and,
	// with the second kill (the first under -short), the node leading the
	// stream.
	// The test is about what the record says after the chaos, not about
	// speed: it fails when the threads stop settling (no thread settled
	// for 45 s), or after 5 minutes in all, so that a loaded machine
	// (-race, other tests) slows it down without failing it.
	start := time.Now()
	deadline, moved := start.Add(5*time.Minute), start
	nodeDown, killed, last := false, 0, progress{}
	nextKill := start.Add(time.Duration(rand.IntN(1000)) * time.Millisecond)
	for last.settled < threads {
		select {
		case p := <-watch:
			if p.settled > last.settled {
				moved = time.Now()
			}
			last = p
			continue
		case <-time.After(20 * time.Millisecond):
		}
		now := time.Now()
		require.True(t, now.Before(deadline), "after %v, %d of %d threads are settled", now.Sub(start), last.settled, threads)
		require.True(t, now.Sub(moved) < 45*time.Second, "after %v, %d of %d threads are settled, none in the last %v", now.Sub(start), last.settled, threads, now.Sub(moved).Round(time.Second))
		if killed == kills || now.Before(nextKill) {
			continue
		}
		var up []int
		for i, w := range running {
			if now.Sub(w.started) > ripe {
				up = append(up, i)
			}
		}
		if len(up) == 0 {
			continue
		}
		i := up[rand.IntN(len(up))]
		running[i].kill()
		killed++
		t.Logf("%v: killed worker %d (pid %d), %d threads settled", now.Sub(start).Round(time.Millisecond), i, running[i].cmd.Process.Pid, last.settled)
		running[i] = spawn()
		nextKill = time.Now().Add(time.Duration(500+rand.IntN(1000)) * time.Millisecond)
		if !nodeDown && killed == nodeAt {
			leader, err := c.Leader(sc.Stream, 10*time.Second)
			require.NoError(t, err)
			c.Node(leader).Shutdown()
			nodeDown = true
			t.Logf("%v: shut down %s, the stream's leader", time.Since(start).Round(time.Millisecond), leader)
		}
	}
	require.True(t, nodeDown, "the node went down before the threads settled")
	t.Logf("%v: %d threads settled; %d workers killed", time.Since(start).Round(time.Millisecond), threads, killed)
	for _, w := range running {
		w.kill()
	}

	// Each thread, read once: no call left started; every completed
	// call's line there; the log verifies (what audit.VerifyLog does: the
	// store's check of the records and the chain, then audit.VerifyFacts
	// over the facts read). Sixteen threads at a time.
	got := lines(t, sc)
	for l, n := range got {
		require.Equal(t, 1, n, "line %q written %d times", l, n)
	}
	actor, _, err := sc.parts()
	require.NoError(t, err)
	logs := map[string][]facts.Fact{}
	var mu sync.Mutex
	check := func(id string) (reconcile bool, err error) {
		ctx := context.Background()
		var fs []facts.Fact
		for f, err := range store.Read(ctx, id, 1) {
			if err != nil {
				return false, err
			}
			fs = append(fs, f)
		}
		mu.Lock()
		logs[id] = fs
		mu.Unlock()
		if err := store.Verify(ctx, id); err != nil {
			return false, err
		}
		if err := audit.VerifyFacts(actor, id, each(fs)); err != nil {
			return false, err
		}
		f := fold.New(actor.New()...)
		for _, fact := range fs {
			if err := f.Step(fact); err != nil {
				return false, err
			}
		}
		v, err := harness.Folded{ID: id, Fold: f}.View()
		if err != nil {
			return false, err
		}
		if !settledView(v) {
			return false, fmt.Errorf("%s: %s, waits %v", id, v.Status, v.Waits)
		}
		r, err := harness.Folded{ID: id, Fold: f}.Reading()
		if err != nil {
			return false, err
		}
		for _, a := range r.Actions() {
			var args struct{ N int }
			if err := json.Unmarshal(a.Requested.Payload, &args); err != nil {
				return false, fmt.Errorf("%s: %s: %w", id, a.Requested.Payload, err)
			}
			line := fmt.Sprintf("%s %d", id, args.N)
			switch {
			case a.Completed != nil && a.Completed.Report.Status == facts.StatusSucceeded && got[line] != 1:
				return false, fmt.Errorf("%s: completed call %s wrote no line", id, a.ID)
			case a.Interrupted == nil && a.Completed == nil:
				return false, fmt.Errorf("%s: action %s at stage %s, neither completed nor interrupted", id, a.ID, a.Stage())
			}
		}
		return v.Status == harness.StatusParked, nil
	}
	var (
		wg        sync.WaitGroup
		next      = make(chan string)
		errs      []error
		reconcile int
	)
	for range 16 {
		wg.Go(func() {
			for id := range next {
				r, err := check(id)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				if r {
					reconcile++
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	require.Empty(t, errs)
	t.Logf("%d done, %d parked on reconcile", threads-reconcile, reconcile)

	// Every acknowledged append is in the log, as acknowledged.
	acked := 0
	names, err := filepath.Glob(filepath.Join(sc.Dir, "acked.*"))
	require.NoError(t, err)
	for _, name := range names {
		f, err := os.Open(name)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 3 || len(fields[2]) != 64 {
				continue // a line cut by the kill: nobody was told of that append
			}
			seq, err := strconv.ParseUint(fields[1], 10, 64)
			require.NoError(t, err)
			fs := logs[fields[0]]
			require.GreaterOrEqual(t, uint64(len(fs)), seq, "%s seq %d was acknowledged", fields[0], seq)
			require.Equal(t, fields[2], fs[seq-1].Hash().String(), "%s seq %d", fields[0], seq)
			acked++
		}
		require.NoError(t, f.Close())
	}
	require.Greater(t, acked, threads, "the workers' appends were checked")
}

// viewOf reads the thread's view (see threadView), returning errors.
func viewOf(sc scenario, store thread.Store, id string) (harness.View, error) {
	actor, cfg, err := sc.parts()
	if err != nil {
		return harness.View{}, err
	}
	rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
	if err != nil {
		return harness.View{}, err
	}
	return rt.Thread(actor, id).View(context.Background())
}

// each yields the facts, with no error.
func each(fs []facts.Fact) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		for _, f := range fs {
			if !yield(f, nil) {
				return
			}
		}
	}
}
