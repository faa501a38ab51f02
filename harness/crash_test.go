package harness_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// crashChildEnv, when set, makes TestCrashChild run a thread as the child
// of TestCrash; its value is a crashSpec in JSON.
const crashChildEnv = "HARNESS_CRASH_CHILD"

// crashSpec is what a crash child runs: the thread id of a store directory,
// with the tools' runs appended to the file Runs.
type crashSpec struct {
	Dir, Thread, Runs string
	Turns             int
}

// The child's pace: long enough that the parent's kills land inside.
const (
	childModelDelay = 20 * time.Millisecond // a model turn
	childToolDelay  = 20 * time.Millisecond // a tool run
	childTurnPause  = 10 * time.Millisecond // after model.turn or confirmation.answered is appended
)

// crashMessage is the message every run of the crash thread starts with.
const crashMessage = "Work through the steps."

// TestCrash runs a coding thread in a child process and SIGKILLs it at
// random moments — during a model call, right after a model.turn was
// appended, during a tool, between the answers to a turn's two
// confirmations, or anywhere — then starts a new child on the
// same store, again and again. After every kill the store must open, the
// log verify and every cause be appended once. Then the parent finishes the
// thread itself.
//
// A kill during a tool leaves its action in doubt (action.started, no
// completion): resume never runs it again by itself but records
// action.interrupted and parks on reconcile, and the operator has it tried
// again. Taking what those episodes add out (see withoutInDoubt), the
// thread must end with the same model turns, in the same order, with the
// same tool calls, as a run that was never killed, and every call with the
// same facts, in the same order, within its turn (see byCall) — though a
// crash may interleave the facts of one turn's calls otherwise; every call
// must have run to its end, no tool have run without its action.started
// claim, and none with arguments that were not requested.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dozen processes")
	}
	const (
		turns = 40
		kills = 15
	)
	ctx := context.Background()
	spec := crashSpec{Dir: t.TempDir(), Thread: "crash", Runs: filepath.Join(t.TempDir(), "runs"), Turns: turns}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	targets := []killTarget{
		{name: "model", event: "model ", jitter: 15 * time.Millisecond},
		{name: "model.turn", event: "appended " + string(facts.KindModelTurn), jitter: 6 * time.Millisecond},
		{name: "tool", event: "tool ", jitter: 15 * time.Millisecond},
		{name: "between answers", event: "appended " + string(facts.KindConfirmationAnswered) + ", another open", jitter: 6 * time.Millisecond},
		{name: "anytime", anytime: 200 * time.Millisecond},
	}
	landed := map[string]int{}
	killed := 0
	for round := 0; killed < kills && round < 2*kills; round++ {
		target := targets[round%len(targets)]
		if target.event != "" {
			target.skip = rng.IntN(3)
		}
		events, wasKilled := runCrashChild(t, spec, target, rng)
		if !wasKilled {
			t.Logf("round %d: the child finished the thread before the kill", round)
			break
		}
		killed++

		// The child is gone: the store opens, the log verifies — its hash
		// chain, and every fact against the actor (VerifyLog).
		s, err := thread.OpenPebble(spec.Dir)
		require.NoError(t, err, "round %d: reopen after the kill", round)
		_, actor := crashRuntime(t, s, spec, 0, 0)
		var log []facts.Fact
		switch err := s.Verify(ctx, spec.Thread); {
		case errors.Is(err, thread.ErrNotFound):
			// Killed before the first append.
		default:
			require.NoError(t, err, "round %d: the log verifies after the kill", round)
			require.NoError(t, audit.VerifyLog(ctx, s, actor, spec.Thread), "round %d", round)
			log = readLog(t, s, spec.Thread)
			requireCausesOnce(t, log)
		}
		require.NoError(t, s.Close())
		where := landing(log, events)
		landed[where]++
		t.Logf("round %d: killed at %s (aimed at %s, skip %d): %d facts", round, where, target.name, target.skip, len(log))
	}
	t.Logf("%d kills landed: %v", killed, landed)
	require.GreaterOrEqual(t, killed, 10, "the thread ended before enough kills")
	for _, where := range []string{"model", "model.turn", "tool", "between answers"} {
		require.Positive(t, landed[where], "no kill landed during %s; the test proved less than it says", where)
	}

	// The parent finishes the thread in-process.
	s, err := thread.OpenPebble(spec.Dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	rt, actor := crashRuntime(t, s, spec, 0, 0)
	out, err := drive(ctx, rt, actor, spec.Thread, crashMessage)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.NoError(t, audit.VerifyLog(ctx, s, actor, spec.Thread))
	got := readLog(t, s, spec.Thread)
	requireCausesOnce(t, got)

	// A run that was never killed, in its own store.
	refSpec := crashSpec{Dir: t.TempDir(), Thread: spec.Thread, Runs: filepath.Join(t.TempDir(), "runs"), Turns: turns}
	ref, err := thread.OpenPebble(refSpec.Dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, ref.Close()) }()
	refRT, refActor := crashRuntime(t, ref, refSpec, 0, 0)
	out, err = drive(ctx, refRT, refActor, refSpec.Thread, crashMessage)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	want := readLog(t, ref, refSpec.Thread)
	require.NotContains(t, kindsOf(want), facts.KindActionInterrupted)

	kept, inDoubt := withoutInDoubt(t, got)
	t.Logf("%d facts, %d actions left in doubt and tried again", len(got), inDoubt)
	require.GreaterOrEqual(t, inDoubt, landed["tool"], "every kill during a tool left its action in doubt")
	require.LessOrEqual(t, inDoubt, killed)
	// Compared call by call and turn by turn (see byCall): a kill between
	// the answers to a turn's two confirmations has the resume run the
	// approved call before the second answer is posted, and one during a
	// call's tool has the next call run before the first is tried again,
	// so the facts of one turn's calls may interleave differently than in
	// a run never killed — but each call's own facts may not, nor may a
	// call's facts leave its turn, nor the turns change.
	wantCalls, wantRest, err := byCall(t, want, nil)
	require.NoError(t, err)
	require.Len(t, wantCalls, len(requestedCalls(t, want)), "in the run never killed, one action per call")
	keptSeqs := map[uint64]bool{}
	for _, f := range kept {
		keptSeqs[f.Seq] = true
	}
	gotCalls, gotRest, err := byCall(t, got, func(f facts.Fact) bool { return keptSeqs[f.Seq] })
	require.NoError(t, err, "every fact of a call between the model turn that made it and the next")
	require.Equal(t, wantRest, gotRest, "the same model turns, with the same tool calls, in the same order, as a run never killed")
	require.Equal(t, wantCalls, gotCalls, "the same facts of every tool call, in the same order, as a run never killed")
	require.Equal(t, requestedCalls(t, want), requestedCalls(t, kept), "the same tool calls, first requested in the same order")
	if !slices.Equal(kindsOf(want), kindsOf(kept)) {
		t.Logf("the crashes interleaved the facts of a turn's calls differently than a run never killed")
	}

	// Outside the log: every call ran to its end; no tool ran without its
	// claim, so an action in doubt never ran again by itself; nothing ran
	// that was not requested.
	claims := claimsByCall(t, got)
	starts, ends := readRuns(t, spec.Runs)
	for _, call := range requestedCalls(t, want) {
		require.Positive(t, ends[call], "call %s never ran to its end", call)
	}
	for call, n := range starts {
		require.Contains(t, claims, call, "a tool ran with arguments nobody requested")
		require.LessOrEqual(t, n, claims[call], "%s ran %d times on %d action.started claims", call, n, claims[call])
	}
	refStarts, refEnds := readRuns(t, refSpec.Runs)
	require.Equal(t, refStarts, refEnds)
	for _, call := range requestedCalls(t, want) {
		require.Equal(t, 1, refEnds[call], "in the run never killed, %s ran once", call)
	}
}

// TestByCall checks the comparison TestCrash makes: it takes a turn's two
// calls interleaved as a resume after a crash may write them, and nothing
// more — not a call's own facts out of order, nor a call's fact after the
// next model turn.
func TestByCall(t *testing.T) {
	ctx := context.Background()
	spec := crashSpec{Dir: t.TempDir(), Thread: "by-call", Runs: filepath.Join(t.TempDir(), "runs"), Turns: 4}
	s, err := thread.OpenPebble(spec.Dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	rt, actor := crashRuntime(t, s, spec, 0, 0)
	out, err := drive(ctx, rt, actor, spec.Thread, crashMessage)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	log := readLog(t, s, spec.Thread)
	wantCalls, wantRest, err := byCall(t, log, nil)
	require.NoError(t, err)
	require.Len(t, wantCalls, 4, "a write, a read, then a write and a command at once")

	// Turn 3, its two calls asked for, then answered, then run.
	at := slices.IndexFunc(log, func(f facts.Fact) bool {
		return f.Kind == facts.KindModelTurn && mustDecode[facts.ModelTurn](t, f).Turn == 3
	})
	require.Positive(t, at)
	require.Equal(t, []facts.Kind{
		facts.KindModelTurn,
		facts.KindActionRequested, facts.KindConfirmationRequested,
		facts.KindActionRequested, facts.KindConfirmationRequested,
		facts.KindConfirmationAnswered, facts.KindConfirmationAnswered,
		facts.KindActionStarted, facts.KindActionCompleted,
		facts.KindActionStarted, facts.KindActionCompleted,
		facts.KindModelTurn,
	}, kindsOf(log[at:at+12]))
	answered1, answered2, started1, completed1, completed2, next := at+5, at+6, at+7, at+8, at+10, at+11

	// moved returns the log with its fact at from moved to just after the
	// fact now at after.
	moved := func(from, after int) []facts.Fact {
		f := log[from]
		out := slices.Delete(slices.Clone(log), from, from+1)
		if after > from {
			after--
		}
		return slices.Insert(out, after+1, f)
	}
	same := func(log []facts.Fact) bool {
		calls, rest, err := byCall(t, log, nil)
		require.NoError(t, err)
		return assert.ObjectsAreEqual(wantCalls, calls) && assert.ObjectsAreEqual(wantRest, rest)
	}

	// Killed between the two answers: the first call ran before the
	// second answer was posted.
	require.True(t, same(moved(answered2, completed1)), "two calls of a turn interleaved otherwise")
	require.True(t, same(moved(answered1, answered2)), "the answers of two calls in the other order")
	// A call's own facts out of order: run before it was approved.
	require.False(t, same(moved(answered1, started1)), "a call run before it was approved")
	require.False(t, same(moved(started1, answered1-1)), "a call run before it was approved")
	// A call's completion after the next model turn.
	_, _, err = byCall(t, moved(completed2, next), nil)
	require.ErrorContains(t, err, "not a call of the latest model turn")
	// A model turn that asked for other arguments.
	mt := mustDecode[facts.ModelTurn](t, log[at])
	mt.ToolCalls = slices.Clone(mt.ToolCalls)
	mt.ToolCalls[1].Args = `{"cmd":"rm -rf /"}`
	d, err := facts.NewDraft(facts.KindModelTurn, "", mt)
	require.NoError(t, err)
	other := slices.Clone(log)
	other[at].Data = d.Data
	require.False(t, same(other), "a model turn that asked for other arguments")
}

// withoutInDoubt returns the log without what a crash during a tool added
// to it — the claim of each attempt left in doubt (its action.started), the
// action.interrupted resume recorded, the effect.reconciled that had it
// tried again, and the request of the attempt that tried again — and how
// many attempts were left in doubt. What remains is the call's first
// request where a run never killed has it, and the last attempt's start and
// completion where a run never killed has its own.
func withoutInDoubt(t testing.TB, log []facts.Fact) ([]facts.Fact, int) {
	t.Helper()
	inDoubt := map[string]bool{} // action id → it was interrupted
	for _, f := range log {
		if f.Kind == facts.KindActionInterrupted {
			p, err := facts.Decode[facts.ActionInterrupted](f)
			require.NoError(t, err)
			inDoubt[p.ActionID] = true
		}
	}
	requested := map[string]bool{} // call id and instruction → requested before
	retried, retries := map[string]bool{}, 0
	var kept []facts.Fact
	for _, f := range log {
		drop := false
		switch f.Kind {
		case facts.KindActionRequested:
			p, err := facts.Decode[facts.ActionRequested](f)
			require.NoError(t, err)
			call := p.CallID + "\x00" + p.Instruction
			if requested[call] {
				drop = true
				retries++
			}
			requested[call] = true
		case facts.KindActionStarted:
			p, err := facts.Decode[facts.ActionStarted](f)
			require.NoError(t, err)
			drop = inDoubt[p.ActionID]
		case facts.KindActionInterrupted:
			drop = true
		case facts.KindEffectReconciled:
			p, err := facts.Decode[facts.EffectReconciled](f)
			require.NoError(t, err)
			require.Equal(t, facts.DecisionRetry, p.Decision)
			require.True(t, inDoubt[p.ActionID], "action %s reconciled without being in doubt", p.ActionID)
			retried[p.ActionID] = true
			drop = true
		case facts.KindActionCompleted:
			p, err := facts.Decode[facts.ActionCompleted](f)
			require.NoError(t, err)
			require.False(t, inDoubt[p.ActionID], "action %s was left in doubt, yet completed", p.ActionID)
		}
		if !drop {
			kept = append(kept, f)
		}
	}
	for id := range inDoubt {
		require.True(t, retried[id], "action %s in doubt was never reconciled", id)
	}
	require.Equal(t, len(inDoubt), retries, "one new attempt per action in doubt")
	return kept, len(inDoubt)
}

// claimsByCall counts the action.started claims of a log by the call they
// were for, as "name args".
func claimsByCall(t testing.TB, log []facts.Fact) map[string]int {
	t.Helper()
	calls := map[string]string{} // action id → call
	out := map[string]int{}
	for _, f := range log {
		switch f.Kind {
		case facts.KindActionRequested:
			p, err := facts.Decode[facts.ActionRequested](f)
			require.NoError(t, err)
			calls[p.ActionID] = p.Instruction
		case facts.KindActionStarted:
			p, err := facts.Decode[facts.ActionStarted](f)
			require.NoError(t, err)
			require.Contains(t, calls, p.ActionID, "action.started of an action never requested")
			out[calls[p.ActionID]]++
		}
	}
	return out
}

// TestCrashChild is the child of TestCrash: run with crashChildEnv set, it
// runs the thread to its end at the child's pace, saying what it does on
// stdout, one line per event, so the parent can aim its kills.
func TestCrashChild(t *testing.T) {
	raw := os.Getenv(crashChildEnv)
	if raw == "" {
		t.Skip("the child of TestCrash; runs only when TestCrash starts it")
	}
	var spec crashSpec
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	s, err := thread.OpenPebble(spec.Dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	rt, actor := crashRuntime(t, announcing{Store: s, pause: childTurnPause}, spec, childModelDelay, childToolDelay)
	out, err := drive(context.Background(), rt, actor, spec.Thread, crashMessage)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	event("done")
}

// event writes one line for the parent, in one write to the unbuffered
// stdout.
func event(format string, args ...any) {
	_, _ = os.Stdout.WriteString("event " + fmt.Sprintf(format, args...) + "\n")
}

// crashRuntime is the runtime of the crash thread: a scripted model that
// takes modelDelay per turn, and tools that take toolDelay and append
// "start NAME ARGS" and "end NAME ARGS" lines to spec.Runs.
func crashRuntime(t testing.TB, s thread.Store, spec crashSpec, modelDelay, toolDelay time.Duration) (*harness.Runtime, harness.Actor) {
	t.Helper()
	tools := codingTools(t, func(ctx context.Context, name, args string) (facts.Report, error) {
		if err := appendLine(spec.Runs, "start "+name+" "+args); err != nil {
			return facts.Report{}, err
		}
		if toolDelay > 0 {
			event("tool %s", name)
		}
		if err := sleep(ctx, toolDelay); err != nil {
			return facts.Report{}, err
		}
		if err := appendLine(spec.Runs, "end "+name+" "+args); err != nil {
			return facts.Report{}, err
		}
		return facts.Report{Status: facts.StatusSucceeded, Stdout: "ran " + name}, nil
	})
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	m := slowModel{inner: codingScript(t, spec.Turns), delay: modelDelay}
	rt, err := harness.NewRuntime(s, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(t, err)
	return rt, actor
}

// appendLine appends one line to the file at path in one write.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	return errors.Join(err, f.Close())
}

// readRuns counts the tool runs recorded in the file at path: runs started
// and runs ended, by "NAME ARGS".
func readRuns(t testing.TB, path string) (starts, ends map[string]int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	starts, ends = map[string]int{}, map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		what, call, ok := strings.Cut(line, " ")
		require.True(t, ok, "runs line %q", line)
		switch what {
		case "start":
			starts[call]++
		case "end":
			ends[call]++
		default:
			t.Fatalf("runs line %q", line)
		}
	}
	return starts, ends
}

// slowModel is a model that says which turn it takes, then takes delay
// over it.
type slowModel struct {
	inner model.Model
	delay time.Duration
}

func (m slowModel) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	if m.delay > 0 {
		event("model %d", req.Turn)
	}
	if err := sleep(ctx, m.delay); err != nil {
		return model.Decision{}, err
	}
	return m.inner.Turn(ctx, req)
}

// announcing is the child's store: the real store, saying after each
// acknowledged append what it appended, and pausing after a model.turn or
// a confirmation.answered so that a kill can land between that append and
// the next — between a turn's two answers, say.
type announcing struct {
	thread.Store
	pause time.Duration
}

func (a announcing) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	h, err := a.Store.Append(ctx, id, after, drafts...)
	if err != nil {
		return h, err
	}
	for _, d := range drafts {
		if d.Kind == facts.KindConfirmationAnswered && a.unanswered(ctx, id) > 0 {
			event("appended %s, another open", d.Kind)
			continue
		}
		event("appended %s", d.Kind)
	}
	if slices.ContainsFunc(drafts, func(d facts.Draft) bool {
		return d.Kind == facts.KindModelTurn || d.Kind == facts.KindConfirmationAnswered
	}) {
		time.Sleep(a.pause)
	}
	return h, nil
}

// unanswered counts the confirmations of the thread's latest model turn
// that are not answered yet.
func (a announcing) unanswered(ctx context.Context, id string) int {
	var log []facts.Fact
	for f, err := range a.Store.Read(ctx, id, 1) {
		if err != nil {
			return 0
		}
		log = append(log, f)
	}
	return unanswered(log)
}

// unanswered counts the confirmations of the latest model turn of log that
// are not answered in it.
func unanswered(log []facts.Fact) int {
	n := 0
	for _, f := range log {
		switch f.Kind {
		case facts.KindModelTurn:
			n = 0
		case facts.KindConfirmationRequested:
			n++
		case facts.KindConfirmationAnswered:
			n--
		}
	}
	return n
}

// killTarget is where a kill is aimed: jitter after the (skip+1)th event
// line starting with event, or, for anytime, at a random moment up to
// anytime after the child starts.
type killTarget struct {
	name    string
	event   string
	jitter  time.Duration
	anytime time.Duration
	skip    int
}

// runCrashChild starts a child on spec and SIGKILLs it where target says.
// It returns the child's event lines, and whether the kill came before the
// child finished the thread. A child that fails on its own fails the test.
func runCrashChild(t *testing.T, spec crashSpec, target killTarget, rng *rand.Rand) (events []string, killed bool) {
	t.Helper()
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+string(raw))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())

	// The reader keeps every event line, and the test framework's own
	// output (a failing child's report), until the pipe closes.
	lines := make(chan string)
	var all []string
	var other strings.Builder
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			ev, ok := strings.CutPrefix(line, "event ")
			if !ok {
				other.WriteString(line + "\n")
				continue
			}
			all = append(all, ev)
			lines <- ev
		}
	})

	var deadline <-chan time.Time
	if target.anytime > 0 {
		deadline = time.After(time.Duration(rng.Int64N(int64(target.anytime))))
	}
	stuck := time.After(30 * time.Second)
	seen, finished, hung := 0, false, false
wait:
	for {
		select {
		case ev, ok := <-lines:
			if !ok || ev == "done" {
				finished = true
				break wait
			}
			if target.event != "" && strings.HasPrefix(ev, target.event) {
				if seen++; seen > target.skip {
					time.Sleep(time.Duration(rng.Int64N(int64(target.jitter))))
					break wait
				}
			}
		case <-deadline:
			break wait
		case <-stuck:
			hung = true
			break wait
		}
	}
	if !finished {
		// The child may have finished meanwhile; then this does nothing.
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	for range lines {
		// Drain what the child wrote before it died.
	}
	wg.Wait()
	err = cmd.Wait()
	require.False(t, hung, "the child made no progress for 30s; its last events: %q", all[max(0, len(all)-5):])
	var exit *exec.ExitError
	switch {
	case err == nil:
		require.Contains(t, all, "done", "a child that exited on its own finished the thread")
		return all, false
	case errors.As(err, &exit):
		ws, ok := exit.Sys().(syscall.WaitStatus)
		require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL,
			"the child failed on its own: %v\n%s%s", err, other.String(), stderr.String())
		return all, true
	default:
		require.NoError(t, err)
		return nil, false
	}
}

// landing says where a kill landed, from the log it left and the child's
// last event: "model" (a model call was under way and its turn is not in
// the log), "model.turn" (the log ends with a model turn), "tool" (a tool
// was running after its action.started, and its completion is not in the
// log), "between answers" (the log ends with the answer to one of a
// turn's confirmations and another is unanswered), "answer" (it ends with
// the last answer of a turn), or "elsewhere".
func landing(log []facts.Fact, events []string) string {
	if len(log) == 0 || len(events) == 0 {
		return "elsewhere"
	}
	last := events[len(events)-1]
	turns := 0
	for _, f := range log {
		if f.Kind == facts.KindModelTurn {
			turns++
		}
	}
	switch end := log[len(log)-1].Kind; {
	case end == facts.KindModelTurn:
		return "model.turn"
	case end == facts.KindConfirmationAnswered && unanswered(log) > 0:
		return "between answers"
	case end == facts.KindConfirmationAnswered:
		return "answer"
	case strings.HasPrefix(last, "model "):
		if n, err := strconv.Atoi(strings.TrimPrefix(last, "model ")); err == nil && n == turns+1 {
			return "model"
		}
	case strings.HasPrefix(last, "tool ") && end == facts.KindActionStarted:
		return "tool"
	}
	return "elsewhere"
}
