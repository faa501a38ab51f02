package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/worker"
)

// The scripts the threads follow, the Nth decision for the Nth turn.
const (
	// twoCalls appends two lines, one a turn, then says it is done.
	twoCalls = `{"text": "First line.", "tool_calls": [{"id": "c1", "name": "append_line", "args": "{\"n\": 1}"}]}
{"text": "Second line.", "tool_calls": [{"id": "c2", "name": "append_line", "args": "{\"n\": 2}"}]}
{"text": "Done: two lines."}`
	// oneTurn says it is done at once.
	oneTurn = `{"text": "Nothing to do."}`
)

// scenario is what a worker of a test runs with, in this process or in a
// worker process the test started (passed as JSON in childEnv).
type scenario struct {
	URL      string
	Stream   string
	Replicas int
	LeaseTTL time.Duration
	AckWait  time.Duration
	// Dir holds the lines file the tool appends to, and the files a test
	// and its tools signal each other with.
	Dir     string
	Script  string
	Approve string // drive's approval mode: ask, writes or all
	// Block: a call whose n is Block writes its line, says so in
	// Dir/running, and waits — for ever, or with Release until
	// Dir/release exists.
	Block   int
	Release bool
	// Stoppable: a blocked call ends when its run is cancelled (a stop).
	Stoppable bool
	// Pause: each call sleeps up to this long before and after it writes
	// its line, so that kills land in the middle of calls.
	Pause       time.Duration
	Concurrency int
	Retry       time.Duration
	Drain       time.Duration
	// AckLog, when set, is a file the worker appends every acknowledged
	// append to: "thread seq hash", one a line.
	AckLog string
	// FlagApprove, FlagAllow and FlagDeny are the worker's own flags: what
	// it adds to a thread's policy (Options.AmendPolicy, as harness worker
	// gives it), when any is set.
	FlagApprove         string
	FlagAllow, FlagDeny []string
	// Delegating: the threads' actor has the delegate tool (a script line
	// with "thread" is a child's).
	Delegating bool
}

// childEnv carries a scenario to a worker process.
const childEnv = "WORKER_TEST_CHILD"

func (sc scenario) storeOptions() []natsstore.Option {
	opts := []natsstore.Option{natsstore.WithStream(sc.Stream), natsstore.WithSubjects(strings.ToLower(sc.Stream)),
		natsstore.WithLeaseTTL(sc.LeaseTTL), natsstore.WithTimeout(20 * time.Second)}
	if sc.Replicas > 0 {
		opts = append(opts, natsstore.WithReplicas(sc.Replicas))
	}
	return opts
}

var streams atomic.Int64

// newScenario is a scenario on the server at url, with a stream no other
// test uses. Its lease TTL is 5 s: a worker gives up a lease once no
// renewal succeeded for two thirds of it, and on a loaded machine a
// renewal can be starved for longer than the 667 ms a 1 s TTL leaves
// (the drive then ends mid-call, and the call is in doubt). A test that
// counts on a lease running out sets its own.
func newScenario(t *testing.T, url, script string) scenario {
	return scenario{
		URL: url, Stream: fmt.Sprintf("W%d", streams.Add(1)), LeaseTTL: 5 * time.Second, AckWait: 2 * time.Second,
		Dir: t.TempDir(), Script: script, Approve: "all", Concurrency: 8, Retry: 100 * time.Millisecond, Drain: 10 * time.Second,
	}
}

// dial opens the scenario's store, closed when the test ends.
func (sc scenario) dial(t testing.TB) *natsstore.Store {
	t.Helper()
	s, err := natsstore.Dial(context.Background(), sc.URL, sc.storeOptions()...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// linesFile is where the tool appends its lines.
func (sc scenario) linesFile() string { return filepath.Join(sc.Dir, "lines") }

// appendLine is the tool of the thread id: it appends "<id> <n>" to the
// lines file, one write, and blocks or pauses as the scenario says.
func (sc scenario) appendLine(id string) harness.Tool {
	return harness.Tool{
		Spec:  facts.ToolSchema{Name: "append_line", Description: "Append a line to the lines file."},
		Needs: action.Execute,
		Run: func(ctx context.Context, raw json.RawMessage) (facts.Report, error) {
			var a struct{ N int }
			if err := json.Unmarshal(raw, &a); err != nil {
				return facts.Report{}, err
			}
			pause := func() {
				if sc.Pause > 0 {
					time.Sleep(rand.N(sc.Pause))
				}
			}
			pause()
			f, err := os.OpenFile(sc.linesFile(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return facts.Report{}, err
			}
			_, err = fmt.Fprintf(f, "%s %d\n", id, a.N)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return facts.Report{}, err
			}
			if a.N == sc.Block {
				if err := os.WriteFile(filepath.Join(sc.Dir, "running"), []byte(id), 0o644); err != nil {
					return facts.Report{}, err
				}
				for !sc.Release || !exists(filepath.Join(sc.Dir, "release")) {
					if sc.Stoppable && ctx.Err() != nil {
						return facts.Report{}, ctx.Err()
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			pause()
			return facts.Report{Status: facts.StatusSucceeded, Stdout: fmt.Sprintf("line %d", a.N)}, nil
		},
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// parts are the actor, config and toolbox the scenario's threads fold
// and run with (the toolbox of a thread closes over its id).
func (sc scenario) parts() (harness.Actor, harness.Config, error) {
	cfg, err := harness.NewConfig(harness.WithModelName("scripted"), harness.WithModelBackoff(0))
	if err != nil {
		return harness.Actor{}, cfg, err
	}
	tb, err := harness.NewToolbox(sc.appendLine(""))
	if err != nil {
		return harness.Actor{}, cfg, err
	}
	if sc.Delegating {
		actor, err := harness.DelegatingActor(cfg, tb)
		return actor, cfg, err
	}
	actor, err := harness.CodingActor(cfg, tb)
	return actor, cfg, err
}

// options are the options of a worker of the scenario on store.
func (sc scenario) options(store thread.Store, q worker.Queue, log func(worker.Event)) (worker.Options, error) {
	actor, cfg, err := sc.parts()
	if err != nil {
		return worker.Options{}, err
	}
	script, err := model.ParseScript("test", []byte(sc.Script))
	if err != nil {
		return worker.Options{}, err
	}
	approval, err := drive.NewApproval(sc.Approve, nil, nil)
	if err != nil {
		return worker.Options{}, err
	}
	var amend func(facts.PolicySet) facts.PolicySet
	if sc.FlagApprove != "" || len(sc.FlagAllow) > 0 || len(sc.FlagDeny) > 0 {
		amend = func(p facts.PolicySet) facts.PolicySet {
			var set []string
			if sc.FlagApprove != "" {
				set = append(set, "approve")
			}
			if len(sc.FlagAllow) > 0 {
				set = append(set, "allow")
			}
			if len(sc.FlagDeny) > 0 {
				set = append(set, "deny")
			}
			out, err := stock.Amend(p, stock.FlagSource(stock.Settings{Approve: sc.FlagApprove, Allow: sc.FlagAllow, Deny: sc.FlagDeny}, set...), p.By)
			if err != nil {
				panic(err) // the scenario's flags are checked
			}
			return out
		}
	}
	return worker.Options{
		Store: store, Queue: q, Actor: actor,
		AmendPolicy: amend,
		Runtime: func(id string) (*harness.Runtime, func(), error) {
			tb, err := harness.NewToolbox(sc.appendLine(id))
			if err != nil {
				return nil, nil, err
			}
			rt, err := harness.NewRuntime(store, harness.Services{Tools: tb}, cfg)
			return rt, func() {}, err
		},
		LoadModel:   func(string) (model.Model, error) { return script, nil },
		Approval:    approval,
		Concurrency: sc.Concurrency,
		Retry:       sc.Retry,
		Drain:       sc.Drain,
		Poll:        500 * time.Millisecond,
		Log:         log,
	}, nil
}

// events records a worker's events.
type events struct {
	mu  sync.Mutex
	all []worker.Event
}

func (e *events) log(ev worker.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

// count is the number of events of kind.
func (e *events) count(kind worker.EventKind) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// ends is the number of events that said thread id ended done.
func (e *events) ends(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.Kind == worker.EventStopped && ev.Thread == id && ev.State.Status == harness.StatusDone {
			n++
		}
	}
	return n
}

// startWorker runs a worker of the scenario in this process, on a store
// of its own, until the test ends (or stop is called); it returns its
// events and the function that drains it and waits for Run to return.
func startWorker(t *testing.T, sc scenario) (*events, func()) {
	t.Helper()
	return startWorkerWith(t, sc, nil)
}

// startWorkerWith is startWorker with the options changed by change
// (if not nil), which is given the worker's store.
func startWorkerWith(t *testing.T, sc scenario, change func(*worker.Options, thread.Store)) (*events, func()) {
	t.Helper()
	store := sc.dial(t)
	work, err := store.Work(context.Background(), natsstore.WithAckWait(sc.AckWait))
	require.NoError(t, err)
	ev := &events{}
	o, err := sc.options(store, worker.FromWork(work), ev.log)
	require.NoError(t, err)
	if change != nil {
		change(&o, store)
	}
	w, err := worker.New(o)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	return ev, stop
}

// child is a worker process of the test.
type child struct {
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{}
	err     error // how it exited, once exited is closed
}

// startChild starts a worker process: the test binary again, running the
// scenario (see runChild).
func startChild(t *testing.T, sc scenario) *child {
	t.Helper()
	b, err := json.Marshal(sc)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	c := &child{cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.exited) }()
	t.Cleanup(c.kill)
	return c
}

// kill kills the worker process with SIGKILL and waits for it.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// wait waits up to d for the process to exit, and says how it did.
func (c *child) wait(d time.Duration) (error, bool) {
	select {
	case <-c.exited:
		return c.err, true
	case <-time.After(d):
		return nil, false
	}
}

// runChild runs the worker of the scenario in childEnv until SIGTERM or
// an interrupt, and exits: 0 after a drain, 1 on an error.
func runChild(raw string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "worker process:", err)
		os.Exit(1)
	}
	var sc scenario
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := natsstore.Dial(ctx, sc.URL, sc.storeOptions()...)
	if err != nil {
		fail(err)
	}
	work, err := s.Work(ctx, natsstore.WithAckWait(sc.AckWait))
	if err != nil {
		fail(err)
	}
	var store thread.Store = s
	if sc.AckLog != "" {
		f, err := os.OpenFile(sc.AckLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fail(err)
		}
		store = &ackLogged{Store: s, f: f}
	}
	var log func(worker.Event)
	if os.Getenv("WORKER_TEST_LOG") != "" {
		log = func(e worker.Event) {
			fmt.Fprintf(os.Stderr, "%s pid %d %s %s %s %v\n", time.Now().Format("15:04:05.000"), os.Getpid(), e.Kind, e.Thread, e.State.Status, e.Err)
		}
	}
	o, err := sc.options(store, worker.FromWork(work), log)
	if err != nil {
		fail(err)
	}
	w, err := worker.New(o)
	if err != nil {
		fail(err)
	}
	if err := w.RunDraining(ctx, nil, syscall.SIGTERM, os.Interrupt); err != nil {
		fail(err)
	}
	if err := s.Close(); err != nil {
		fail(err)
	}
	os.Exit(0)
}

// ackLogged is the worker's store that writes down every append it was
// told succeeded, before Append returns (a write the kernel has once the
// call returns, so a SIGKILL does not lose it).
type ackLogged struct {
	*natsstore.Store
	mu sync.Mutex
	f  *os.File
}

func (a *ackLogged) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	h, err := a.Store.Append(ctx, id, after, drafts...)
	if err == nil {
		a.mu.Lock()
		_, _ = fmt.Fprintf(a.f, "%s %d %s\n", id, h.Seq, h.Hash)
		a.mu.Unlock()
	}
	return h, err
}

// submit starts threads for the workers: ids prefix1 … prefixN.
func submit(t *testing.T, sc scenario, store thread.Store, prefix string, n int) []string {
	t.Helper()
	actor, cfg, err := sc.parts()
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
	require.NoError(t, err)
	var ids []string
	for i := 1; i <= n; i++ {
		id := prefix + strconv.Itoa(i)
		_, err := rt.Thread(actor, id).Submit(context.Background(), "Append two lines")
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

// view reads where the thread stands.
func view(t *testing.T, sc scenario, store thread.Store, id string) drive.State {
	t.Helper()
	actor, cfg, err := sc.parts()
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
	require.NoError(t, err)
	st, err := drive.Inspect(context.Background(), rt.Thread(actor, id))
	require.NoError(t, err)
	return st
}

// threadView reads the thread's view: unlike view, it does not look at
// the thread's lease (a look that takes the lease for a moment when it is
// free, and waits a moment when it is not).
func threadView(t *testing.T, sc scenario, store thread.Store, id string) harness.View {
	t.Helper()
	actor, cfg, err := sc.parts()
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
	require.NoError(t, err)
	v, err := rt.Thread(actor, id).View(context.Background())
	require.NoError(t, err)
	return v
}

// settledView reports whether the thread is done, or parked on nothing
// but reconcile.
func settledView(v harness.View) bool {
	return settled(drive.State{Status: v.Status, Waits: pendings(v.Waits)})
}

func pendings(ws []fold.Wait) []drive.Pending {
	var out []drive.Pending
	for _, w := range ws {
		out = append(out, drive.Pending{Wait: w})
	}
	return out
}

// settled reports whether the thread is done, or parked on nothing but
// reconcile.
func settled(st drive.State) bool {
	switch st.Status {
	case harness.StatusDone:
		return true
	case harness.StatusParked:
		for _, w := range st.Waits {
			if w.Kind != fold.WaitReconcile {
				return false
			}
		}
		return true
	}
	return false
}

// waitFor polls until every thread satisfies ok, or fails the test after
// wait.
func waitFor(t *testing.T, sc scenario, store thread.Store, ids []string, wait time.Duration, ok func(drive.State) bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	pending := ids
	for len(pending) > 0 {
		var still []string
		for _, id := range pending {
			if !ok(view(t, sc, store, id)) {
				still = append(still, id)
			}
		}
		pending = still
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			st := view(t, sc, store, pending[0])
			t.Fatalf("after %v, %d threads are not there yet; %s is %s (waits %v, reason %q)", wait, len(pending), pending[0], st.Status, st.Waits, st.Reason)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lines reads the lines file: each line, with how often it was written.
func lines(t *testing.T, sc scenario) map[string]int {
	t.Helper()
	b, err := os.ReadFile(sc.linesFile())
	if os.IsNotExist(err) {
		return map[string]int{}
	}
	require.NoError(t, err)
	out := map[string]int{}
	for l := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" {
			out[l]++
		}
	}
	return out
}

// verifyAll checks every thread's log: the hash chain, and that every
// step was one the fold enabled where it stands.
func verifyAll(t *testing.T, sc scenario, store thread.Store, ids []string) {
	t.Helper()
	actor, _, err := sc.parts()
	require.NoError(t, err)
	for _, id := range ids {
		require.NoError(t, audit.VerifyLog(context.Background(), store, actor, id), id)
	}
}

// kinds is the kinds of the thread's facts.
func kinds(t *testing.T, store thread.Store, id string) []facts.Kind {
	t.Helper()
	var out []facts.Kind
	for f, err := range store.Read(context.Background(), id, 1) {
		require.NoError(t, err)
		out = append(out, f.Kind)
	}
	return out
}
