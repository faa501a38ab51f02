package harness_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// The benchmarks measure the runtime against the store doing the raw part
// of the same work in the same run, interleaved op by op so that drift in
// the disk's speed hits both alike, and report ratio = runtime rate / raw
// rate. ns/op is the runtime's alone.

// benchFacts is the length of the parked thread BenchmarkResumeParked
// resumes.
const benchFacts = 100_000

// BenchmarkResumeParked resumes a parked 100,000-fact coding thread on a
// store that keeps no snapshots (as a NATS store, or when none fits): the
// runtime reads and folds every fact, projects once, finds the thread
// waiting for a confirmation, and runs nothing. The baseline is Store.Read
// iterating every fact of the same thread. (BenchmarkResumeSnapshot is the
// same resume from a snapshot.) Two threads:
//
//	tool-loop: a long coding session — model turns each calling a read
//	           tool, and the tool's request, start and completion — that
//	           the scheduler decodes fact by fact;
//	notes:     the same start, then facts of a kind no component reads
//	           (an application's notes), so the fold only steps over them.
//
// Both end with a model turn whose write call waits for a confirmation.
func BenchmarkResumeParked(b *testing.B) {
	for _, shape := range []string{"tool-loop", "notes"} {
		b.Run("thread="+shape, func(b *testing.B) {
			benchResumeParked(b, shape)
		})
	}
}

func benchResumeParked(b *testing.B, shape string) {
	ctx := context.Background()
	s := openBenchStore(b)
	const id = "long"
	parkedThread(b, s, id, shape, benchFacts)

	calls := 0
	m := modelFunc(func(context.Context, model.Request) (model.Decision, error) {
		calls++
		return model.Decision{}, errors.New("a parked thread called the model")
	})
	tools := codingTools(b, func(context.Context, string, string) (facts.Report, error) {
		return facts.Report{}, errors.New("a parked thread ran a tool")
	})
	cfg, err := harness.NewConfig()
	require.NoError(b, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(b, err)
	rt, err := harness.NewRuntime(blind{s}, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(b, err)

	var readT, resumeT time.Duration
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		n := 0
		for f, err := range s.Read(ctx, id, 1) {
			if err != nil {
				b.Fatal(err)
			}
			n += len(f.Data) & 0 // touch the fact
			n++
		}
		readT += time.Since(start)
		require.Equal(b, benchFacts, n)
		b.StartTimer()

		start = time.Now()
		out, err := rt.Resume(ctx, actor, id)
		resumeT += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if out.Status != harness.StatusParked || out.Steps != 0 || out.Seq != benchFacts {
			b.Fatalf("resume: %+v, want parked at seq %d with no step", out, benchFacts)
		}
	}
	require.Zero(b, calls)
	total := float64(b.N) * benchFacts
	b.ReportMetric(total/resumeT.Seconds(), "facts/s")
	b.ReportMetric(total/readT.Seconds(), "read-facts/s")
	b.ReportMetric(readT.Seconds()/resumeT.Seconds(), "ratio")
}

// parkedThread appends a parked coding thread of n facts of the given
// shape to s (see harnesstest.Parked). Whether the runtime reads it so —
// parked, nothing to run — the benchmarks check on every resume.
func parkedThread(b testing.TB, s thread.Store, id, shape string, n int) {
	if shape != "tool-loop" && shape != "notes" {
		b.Fatalf("unknown shape %q", shape)
	}
	harnesstest.Parked{Facts: n, Notes: shape == "notes", InputTokens: 18000}.Append(b, s, id)
}

// modelFunc is a model made of a function.
type modelFunc func(context.Context, model.Request) (model.Decision, error)

func (f modelFunc) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	return f(ctx, req)
}

func openBenchStore(b testing.TB) *thread.PebbleStore {
	s, err := thread.OpenPebble(b.TempDir())
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, s.Close()) })
	return s
}

// benchSteps is how many steps one op of BenchmarkSteps runs.
const benchSteps = 100

// BenchmarkSteps runs an actor whose transitions do no I/O: each appends
// one small fact, until benchSteps have run. Every step is the runtime's
// whole loop — project, run the effect, append with a sync, fold what was
// appended. The baseline appends the same facts to the store directly, one
// synced append each.
func BenchmarkSteps(b *testing.B) {
	ctx := context.Background()
	s := openBenchStore(b)
	drafts := make([]facts.Draft, benchSteps)
	for i := range drafts {
		d, err := facts.NewDraft(stepKind, "step/"+strconv.Itoa(i+1), map[string]any{"n": i + 1})
		require.NoError(b, err)
		drafts[i] = d
	}
	start, err := facts.NewDraft("bench.start", facts.IngressCause(harness.StartKey), nil)
	require.NoError(b, err)
	actor := harness.Actor{Name: "stepper", New: func() []fold.Component[harness.Services] {
		return []fold.Component[harness.Services]{&stepper{drafts: drafts}}
	}}
	cfg, err := harness.NewConfig(harness.WithMaxSteps(benchSteps))
	require.NoError(b, err)
	rt, err := harness.NewRuntime(s, harness.Services{}, cfg)
	require.NoError(b, err)

	var rawT, stepT time.Duration
	op := 0
	for b.Loop() {
		op++
		b.StopTimer()
		raw, steps := fmt.Sprintf("raw-%d", op), fmt.Sprintf("steps-%d", op)
		_, err := s.Append(ctx, raw, 0, start)
		require.NoError(b, err)
		_, err = s.Append(ctx, steps, 0, start)
		require.NoError(b, err)
		runRaw := func() {
			b.StopTimer()
			defer b.StartTimer()
			t0 := time.Now()
			for i, d := range drafts {
				if _, err := s.Append(ctx, raw, uint64(i+1), d); err != nil {
					b.Fatal(err)
				}
			}
			rawT += time.Since(t0)
		}
		runSteps := func() {
			t0 := time.Now()
			out, err := rt.Resume(ctx, actor, steps)
			stepT += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if out.Status != harness.StatusDone || out.Steps != benchSteps {
				b.Fatalf("resume: %+v, want done after %d steps", out, benchSteps)
			}
		}
		b.StartTimer()
		// Take turns going first, so that neither always follows the
		// other's syncs.
		if op%2 == 0 {
			runRaw()
			runSteps()
		} else {
			runSteps()
			runRaw()
		}
	}
	total := float64(b.N) * benchSteps
	b.ReportMetric(total/stepT.Seconds(), "steps/s")
	b.ReportMetric(total/rawT.Seconds(), "raw-appends/s")
	b.ReportMetric(rawT.Seconds()/stepT.Seconds(), "ratio")
}

// stepKind is the kind of the facts the stepper appends.
const stepKind facts.Kind = "bench.step"

// stepper is a component that enables step/N, appending the Nth of its
// drafts, until every draft is appended. Its effects do nothing but return
// the draft.
type stepper struct {
	drafts []facts.Draft
	done   int
}

func (s *stepper) Name() string { return "stepper" }

func (s *stepper) Step(f facts.Fact) error {
	if f.Kind == stepKind {
		s.done++
	}
	return nil
}

func (s *stepper) Output() fold.Output[harness.Services] {
	if s.done >= len(s.drafts) {
		return fold.Output[harness.Services]{View: s.done}
	}
	return fold.Output[harness.Services]{View: s.done, Transitions: []fold.Transition[harness.Services]{{
		Key:    "step/" + strconv.Itoa(s.done+1),
		Effect: effect.Succeed[harness.Services]([]facts.Draft{s.drafts[s.done]}),
	}}}
}
