package action_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/tools"
)

// worker is an adapter whose behaviour is a function; it counts its calls.
type worker struct {
	name  string
	calls atomic.Int64
	do    func(root string) (facts.Report, error)
	root  string
}

func (w *worker) Name() string { return w.name }

func (w *worker) Execute(context.Context, action.Request) (facts.Report, error) {
	w.calls.Add(1)
	return w.do(w.root)
}

const (
	before = "ttl_seconds = 60\n"
	want   = "ttl_seconds = 300\n"
)

func workspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache.toml"), []byte(before), 0o644))
	return root
}

func request() action.Request {
	check := action.FileEquals("cache.toml", []byte(want))
	return action.Request{ActionID: "a1", Capability: action.Write, Instruction: "set cache.toml to ttl_seconds = 300",
		IdempotencyKey: "k1", ActorID: "file-worker", Adapter: "worker", Check: &check}
}

func writes(path, content string) func(string) (facts.Report, error) {
	return func(root string) (facts.Report, error) {
		if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o644); err != nil {
			return facts.Report{}, err
		}
		return facts.Report{Status: facts.StatusSucceeded, Transcript: "done"}, nil
	}
}

func run(t *testing.T, b *action.Boundary, w *worker) (facts.ActionCompleted, *facts.CheckRecorded) {
	t.Helper()
	req := request()
	bg, refused := b.Begin(context.Background(), req)
	require.Nil(t, refused)
	end := b.Finish(context.Background(), req, bg, w)
	require.Nil(t, end.Interrupted)
	return *end.Completed, end.Check
}

func observed(t *testing.T, root string) *action.Boundary {
	t.Helper()
	ws, err := action.NewWorkspace(root)
	require.NoError(t, err)
	return &action.Boundary{Observer: ws, Granted: []action.Capability{action.Read, action.Write, action.Execute}, Root: root}
}

// Four workers report succeeded for "set cache.toml to ttl_seconds = 300";
// the record takes none of their words for it.
func TestFourWorkers(t *testing.T) {
	cases := []struct {
		name     string
		do       func(string) (facts.Report, error)
		observer bool
		state    facts.EffectState
		verdict  facts.Verdict
		changed  []string
	}{
		{"diligent writes it", writes("cache.toml", want), true, facts.EffectObserved, facts.VerdictPass, []string{"cache.toml"}},
		{"busy writes another file", writes("other.toml", want), true, facts.EffectObserved, facts.VerdictFail, []string{"other.toml"}},
		{"idle writes nothing", func(string) (facts.Report, error) { return facts.Report{Status: facts.StatusSucceeded}, nil }, true, facts.EffectUnknown, facts.VerdictFail, nil},
		{"unwatched runs with nobody looking", writes("cache.toml", want), false, facts.EffectReported, facts.VerdictPass, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := workspace(t)
			b := &action.Boundary{Granted: []action.Capability{action.Write}, Root: root}
			if tc.observer {
				b = observed(t, root)
			}
			w := &worker{name: "worker", do: tc.do, root: root}
			done, check := run(t, b, w)
			require.Equal(t, facts.StatusSucceeded, done.Report.Status, "every worker reported success")
			require.Equal(t, tc.state, done.EffectState)
			require.Equal(t, tc.observer, done.Observation.Available)
			require.NotNil(t, check)
			require.Equal(t, tc.verdict, check.Verdict, check.Reason)
			var paths []string
			for _, c := range done.Observation.Changed {
				paths = append(paths, c.Path)
			}
			require.Equal(t, tc.changed, paths)
			require.EqualValues(t, 1, w.calls.Load())
		})
	}
}

func TestPartialWriterAndLiar(t *testing.T) {
	t.Run("a partial write then an error: failed, observed, check fail", func(t *testing.T) {
		root := workspace(t)
		w := &worker{name: "worker", root: root, do: func(root string) (facts.Report, error) {
			if err := os.WriteFile(filepath.Join(root, "cache.toml"), []byte(want[:len(want)/2]), 0o644); err != nil {
				return facts.Report{}, err
			}
			return facts.Report{}, errors.New("connection reset")
		}}
		done, check := run(t, observed(t, root), w)
		require.Equal(t, facts.StatusFailed, done.Report.Status)
		require.Contains(t, done.Report.Error, "connection reset")
		require.Equal(t, facts.EffectObserved, done.EffectState, "something moved: a partial write")
		require.Equal(t, facts.VerdictFail, check.Verdict)
	})
	t.Run("a liar's claimed state is kept beside the observation, never in it", func(t *testing.T) {
		root := workspace(t)
		w := &worker{name: "worker", root: root, do: func(string) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded, ClaimedState: "sha256:forged"}, nil
		}}
		done, _ := run(t, observed(t, root), w)
		require.Equal(t, "sha256:forged", done.Report.ClaimedState)
		require.NotEqual(t, "sha256:forged", done.Observation.After)
		require.Equal(t, done.Observation.Before, done.Observation.After)
		require.Equal(t, facts.EffectUnknown, done.EffectState)
	})
	t.Run("a panic is a failed report, still observed and completed", func(t *testing.T) {
		root := workspace(t)
		w := &worker{name: "worker", root: root, do: func(string) (facts.Report, error) { panic("worker bug") }}
		done, _ := run(t, observed(t, root), w)
		require.Equal(t, facts.StatusFailed, done.Report.Status)
		require.Contains(t, done.Report.Error, "worker bug")
		require.True(t, done.Observation.Available)
		require.Equal(t, facts.EffectNone, done.EffectState)
		require.NotEmpty(t, done.Report.StartedAt)
	})
	t.Run("a status that is not a status is a failed report", func(t *testing.T) {
		root := workspace(t)
		w := &worker{name: "worker", root: root, do: func(string) (facts.Report, error) { return facts.Report{Status: "done!"}, nil }}
		done, _ := run(t, observed(t, root), w)
		require.Equal(t, facts.StatusFailed, done.Report.Status)
		require.Contains(t, done.Report.Error, "done!")
	})
}

// flaky fails its nth observation.
type flaky struct {
	inner action.Observer
	n     int
	calls int
}

func (f *flaky) Observe(ctx context.Context) (action.Snapshot, error) {
	f.calls++
	if f.calls == f.n {
		return action.Snapshot{}, errors.New("disk went away")
	}
	return f.inner.Observe(ctx)
}

func TestObserverFailureStillCompletes(t *testing.T) {
	root := workspace(t)
	ws, err := action.NewWorkspace(root)
	require.NoError(t, err)
	b := &action.Boundary{Observer: &flaky{inner: ws, n: 2}, Granted: []action.Capability{action.Write}, Root: root}
	w := &worker{name: "worker", root: root, do: func(string) (facts.Report, error) { return facts.Report{}, errors.New("failed") }}
	done, _ := run(t, b, w)
	require.Equal(t, facts.StatusFailed, done.Report.Status)
	require.False(t, done.Observation.Available)
	require.Contains(t, done.Observation.Error, "disk went away")
	require.Equal(t, facts.EffectReported, done.EffectState)
}

func TestAuthorityAndPrecondition(t *testing.T) {
	t.Run("a capability not granted: denied, adapter not invoked", func(t *testing.T) {
		root := workspace(t)
		b := observed(t, root)
		b.Granted = []action.Capability{action.Read}
		w := &worker{name: "worker", root: root, do: writes("cache.toml", want)}
		_, refused := b.Begin(context.Background(), request())
		require.NotNil(t, refused)
		require.Equal(t, facts.StatusDenied, refused.Report.Status)
		require.Contains(t, refused.Report.Error, `"write" was not granted`)
		require.Equal(t, facts.EffectNone, refused.EffectState)
		require.Zero(t, w.calls.Load())
	})
	t.Run("a precondition that does not hold: failed, adapter not invoked", func(t *testing.T) {
		root := workspace(t)
		b := observed(t, root)
		req := request()
		req.Precondition = "0000"
		_, refused := b.Begin(context.Background(), req)
		require.NotNil(t, refused)
		require.Equal(t, facts.StatusFailed, refused.Report.Status)
		require.Contains(t, refused.Report.Error, "precondition")
	})
	t.Run("a precondition that holds", func(t *testing.T) {
		root := workspace(t)
		b := observed(t, root)
		ws, err := action.NewWorkspace(root)
		require.NoError(t, err)
		snap, err := ws.Observe(context.Background())
		require.NoError(t, err)
		req := request()
		req.Precondition = snap.Hash
		bg, refused := b.Begin(context.Background(), req)
		require.Nil(t, refused)
		require.Equal(t, snap.Hash, bg.Started.ObservedBefore)
	})
}

func TestReplayDoesNotInvoke(t *testing.T) {
	prior := facts.ActionCompleted{ActionID: "a1", Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectObserved}
	req := request()
	req.ActionID = "a2"
	got := action.Replay(req, prior)
	require.Equal(t, "a2", got.ActionID)
	require.Equal(t, facts.EffectObserved, got.EffectState)
	require.Contains(t, got.Report.Transcript, "already completed by action a1")
}

func TestRequestAttribution(t *testing.T) {
	r := action.Request{ActorID: "actor", Adapter: "local-file"}
	require.Equal(t, "actor", r.Requester())
	require.Equal(t, "local-file", r.AdapterKey())
	r.RequestedBy, r.AdapterID = "ana", "local-file-2"
	require.Equal(t, "ana", r.Requester())
	require.Equal(t, "local-file-2", r.AdapterKey())
	back := action.FromFact(r.Fact())
	require.Equal(t, "ana", back.RequestedBy)
}

func TestChecksStayInTheWorkspace(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte(want), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link")))
	for _, target := range []string{"link", "../secret", filepath.Join(outside, "secret")} {
		rec := action.Decide(context.Background(), "a", action.FileEquals(target, []byte(want)), action.CheckEnv{Root: root})
		require.Equal(t, facts.VerdictFail, rec.Verdict, target)
	}
	rec := action.Decide(context.Background(), "a", facts.CheckSpec{Name: "no_such_check"}, action.CheckEnv{Root: root})
	require.Equal(t, facts.VerdictFail, rec.Verdict)
	require.Contains(t, rec.Reason, "unknown check")
}

func TestBuiltInChecks(t *testing.T) {
	root := workspace(t)
	changed := []facts.PathChange{{Path: "cache.toml", Before: "a", After: "b"}, {Path: "notes.md", After: "c"}}
	commands, err := tools.New(root, tools.WithSandbox(sandbox.Spec{Mode: sandbox.Off}))
	require.NoError(t, err)
	cases := []struct {
		spec facts.CheckSpec
		env  action.CheckEnv
		want facts.Verdict
	}{
		{action.FileEquals("cache.toml", []byte(before)), action.CheckEnv{Root: root}, facts.VerdictPass},
		{action.FileEquals("cache.toml", []byte(want)), action.CheckEnv{Root: root}, facts.VerdictFail},
		{action.FileEquals("missing.toml", []byte(want)), action.CheckEnv{Root: root}, facts.VerdictFail},
		{action.FileContains("cache.toml", "ttl_seconds"), action.CheckEnv{Root: root}, facts.VerdictPass},
		{action.FileContains("cache.toml", "300"), action.CheckEnv{Root: root}, facts.VerdictFail},
		{action.CommandSucceeds("true"), action.CheckEnv{Root: root, Commands: commands}, facts.VerdictPass},
		{action.CommandSucceeds("sh", "-c", "exit 3"), action.CheckEnv{Root: root, Commands: commands}, facts.VerdictFail},
		{action.CommandSucceeds("true"), action.CheckEnv{Root: root}, facts.VerdictFail}, // nowhere to run it: not decided
		{action.OnlyPathsChanged("cache.toml", "notes.md"), action.CheckEnv{Root: root, Changed: changed, Observed: true}, facts.VerdictPass},
		{action.OnlyPathsChanged("cache.toml"), action.CheckEnv{Root: root, Changed: changed, Observed: true}, facts.VerdictFail},
		{action.OnlyPathsChanged("cache.toml"), action.CheckEnv{Root: root}, facts.VerdictFail},
	}
	for _, tc := range cases {
		t.Run(tc.spec.Name+" "+tc.spec.Target, func(t *testing.T) {
			rec := action.Decide(context.Background(), "a", tc.spec, tc.env)
			require.Equal(t, tc.want, rec.Verdict, rec.Reason)
			require.NotEmpty(t, rec.Reason)
		})
	}
}

// A change is the point of a write, not of a read or a command: only a
// write that reports success with nothing changed is open.
func TestStateDependsOnWhatTheActionWasFor(t *testing.T) {
	unchanged := facts.Observation{Available: true, Before: "h1", After: "h1"}
	changed := facts.Observation{Available: true, Before: "h1", After: "h2", Changed: []facts.PathChange{{Path: "a"}}}
	ok := facts.Report{Status: facts.StatusSucceeded}
	failed := facts.Report{Status: facts.StatusFailed}
	cases := []struct {
		c    action.Capability
		r    facts.Report
		o    facts.Observation
		want facts.EffectState
	}{
		{action.Write, ok, unchanged, facts.EffectUnknown},
		{action.Read, ok, unchanged, facts.EffectNone},
		{action.Execute, ok, unchanged, facts.EffectNone},
		{action.Read, ok, changed, facts.EffectObserved},
		{action.Execute, failed, changed, facts.EffectObserved},
		{action.Write, failed, unchanged, facts.EffectNone},
		{action.Write, ok, facts.Observation{}, facts.EffectReported},
		{action.Write, ok, facts.Observation{Available: true, Before: "h1"}, facts.EffectReported},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, action.State(tc.c, tc.r, tc.o), "%s %s %+v", tc.c, tc.r.Status, tc.o)
	}
}

// A write of what the file already holds changes nothing, and its check
// passes: what it was to make holds, so the effect is none, not unknown —
// nobody need settle it. The record says both: no change, check pass.
func TestAnIdenticalWriteWhoseCheckPassesIsNotOpen(t *testing.T) {
	root := workspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache.toml"), []byte(want), 0o644))
	w := &worker{name: "worker", do: writes("cache.toml", want), root: root}
	done, check := run(t, observed(t, root), w)
	require.Equal(t, facts.StatusSucceeded, done.Report.Status)
	require.Equal(t, done.Observation.Before, done.Observation.After, "nothing observed changed")
	require.Empty(t, done.Observation.Changed)
	require.Equal(t, facts.VerdictPass, check.Verdict, check.Reason)
	require.Equal(t, facts.EffectNone, done.EffectState)
}

func TestStateChecked(t *testing.T) {
	unchanged := facts.Observation{Available: true, Before: "h1", After: "h1"}
	changed := facts.Observation{Available: true, Before: "h1", After: "h2", Changed: []facts.PathChange{{Path: "a"}}}
	ok := facts.Report{Status: facts.StatusSucceeded}
	pass := &facts.CheckRecorded{Verdict: facts.VerdictPass}
	fail := &facts.CheckRecorded{Verdict: facts.VerdictFail}
	cases := []struct {
		name  string
		o     facts.Observation
		check *facts.CheckRecorded
		want  facts.EffectState
	}{
		{"unchanged, check passes: what it was to make holds", unchanged, pass, facts.EffectNone},
		{"unchanged, check fails: open", unchanged, fail, facts.EffectUnknown},
		{"unchanged, no check: open", unchanged, nil, facts.EffectUnknown},
		{"changed, check passes", changed, pass, facts.EffectObserved},
		{"nobody looked, check passes", facts.Observation{}, pass, facts.EffectReported},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, action.StateChecked(action.Write, ok, tc.o, tc.check), tc.name)
	}
}

// cancelledAdapter writes its file (when it has one), then works until its
// context is cancelled and returns the context's error, with what it said
// so far.
type cancelledAdapter struct {
	root, path string
	started    chan struct{}
}

func (cancelledAdapter) Name() string { return "worker" }

func (a cancelledAdapter) Execute(ctx context.Context, _ action.Request) (facts.Report, error) {
	if a.path != "" {
		if err := os.WriteFile(filepath.Join(a.root, a.path), []byte(want), 0o644); err != nil {
			return facts.Report{}, err
		}
	}
	close(a.started)
	<-ctx.Done()
	return facts.Report{Status: facts.StatusFailed, Stdout: "so far"}, ctx.Err()
}

// A run cancelled while the adapter works ends the action as interrupted,
// never completed with the cancellation as its failure: what the runtime
// observed once the adapter stopped, what the adapter said, and no check
// (the call did not finish).
func TestFinishCancelledIsInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		unchanged  bool
	}{
		{"nothing changed", "", true},
		{"a file written before the cancel", "cache.toml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := workspace(t)
			b := observed(t, root)
			req := request()
			bg, refused := b.Begin(context.Background(), req)
			require.Nil(t, refused)
			ctx, cancel := context.WithCancel(context.Background())
			a := cancelledAdapter{root: root, path: tc.path, started: make(chan struct{})}
			go func() {
				<-a.started
				cancel()
			}()
			end := b.Finish(ctx, req, bg, a)
			require.Nil(t, end.Completed)
			require.Nil(t, end.Check, "no check of a call that did not finish")
			in := end.Interrupted
			require.NotNil(t, in)
			require.NoError(t, in.Validate())
			require.True(t, in.Cancelled)
			require.Equal(t, "a1", in.ActionID)
			require.Equal(t, bg.Started.ObservedBefore, in.ObservedBefore)
			require.NotEmpty(t, in.ObservedNow)
			require.Equal(t, tc.unchanged, in.Unchanged())
			require.NotNil(t, in.Report)
			require.Equal(t, "so far", in.Report.Stdout)
			require.Contains(t, in.Report.Error, "context canceled")
			if tc.unchanged {
				require.Empty(t, in.Changed)
				return
			}
			require.Len(t, in.Changed, 1)
			require.Equal(t, "cache.toml", in.Changed[0].Path)
		})
	}
}

// An adapter that reports success although the run was cancelled did its
// work: the action is completed, as an effect that returns no error
// succeeds.
func TestFinishCancelledButSucceeded(t *testing.T) {
	root := workspace(t)
	b := observed(t, root)
	req := request()
	bg, refused := b.Begin(context.Background(), req)
	require.Nil(t, refused)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	end := b.Finish(ctx, req, bg, &worker{name: "worker", root: root, do: writes("cache.toml", want)})
	require.Nil(t, end.Interrupted)
	require.NotNil(t, end.Completed)
	require.Equal(t, facts.StatusSucceeded, end.Completed.Report.Status)
	require.Equal(t, facts.VerdictPass, end.Check.Verdict)
}
