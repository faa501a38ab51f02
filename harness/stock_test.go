package harness_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// stockEnv is the stock harness of a real workspace on a real store: the
// built-in tools, an observer that keeps file contents in the store.
type stockEnv struct {
	t       *testing.T
	root    string
	store   *thread.PebbleStore
	stock   *harness.Stock
	rt      *harness.Runtime
	watched []facts.Fact
}

const stockScript = `{"text": "Setting the TTL, then noting it.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}, {"id": "c", "name": "run_command", "args": "{\"command\":\"echo 'ttl is 300' >> notes.txt && echo new > made.txt\"}"}]}
{"text": "Done."}`

func newStockEnv(t *testing.T, script string) *stockEnv {
	t.Helper()
	root := t.TempDir()
	for name, content := range map[string]string{"cache.toml": "ttl_seconds = 60\n", "notes.txt": "line one\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	p, err := harness.Locate(root, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	m, err := model.ParseScript("stock", []byte(script))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:stock"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	e := &stockEnv{t: t, root: root, store: store.(*thread.PebbleStore)}
	e.stock, err = harness.NewStock(p, cfg)
	require.NoError(t, err)
	svc, err := e.stock.Services(m, harness.BlobsOf(store))
	require.NoError(t, err)
	require.NotNil(t, svc.Blobs, "the Pebble store keeps contents")
	e.rt, err = harness.NewRuntime(harness.Watch(store, func(f facts.Fact, err error) {
		require.NoError(t, err)
		e.watched = append(e.watched, f)
	}), svc, cfg)
	require.NoError(t, err)
	return e
}

func (e *stockEnv) read(name string) string {
	b, err := os.ReadFile(filepath.Join(e.root, name))
	if os.IsNotExist(err) {
		return "(absent)"
	}
	require.NoError(e.t, err)
	return string(b)
}

// runApproved starts a thread and answers every confirmation by approving
// it, the way --approve all does.
func (e *stockEnv) runApproved(id string) harness.State {
	_, err := e.rt.Start(ctx, e.stock.Actor, id, "Set the TTL and note it")
	require.NoError(e.t, err)
	all, err := harness.NewApproval("all", nil, nil)
	require.NoError(e.t, err)
	for {
		st, err := harness.Inspect(ctx, e.store, e.stock.Actor, id)
		require.NoError(e.t, err)
		if st.Status != harness.StatusParked {
			return st
		}
		left, posted, err := harness.ApplyApproval(ctx, e.rt, e.stock.Actor, id, all, st.Waits)
		require.NoError(e.t, err)
		if posted == 0 {
			require.NotEmpty(e.t, left)
			return st
		}
		_, err = e.rt.Resume(ctx, e.stock.Actor, id)
		require.NoError(e.t, err)
	}
}

func TestInspectAndWatch(t *testing.T) {
	e := newStockEnv(t, stockScript)
	_, err := e.rt.Start(ctx, e.stock.Actor, "t", "Set the TTL and note it")
	require.NoError(t, err)
	st, err := harness.Inspect(ctx, e.store, e.stock.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	require.Equal(t, "scripted:stock", st.Model)
	require.Equal(t, harness.WorkspaceName(e.root), st.Workspace, "system.configured records where the thread works")
	require.Contains(t, st.Workspace, ":"+e.root)
	require.Len(t, st.Waits, 2)
	require.Equal(t, fold.WaitConfirmation, st.Waits[0].Kind)
	require.Equal(t, "write_file", st.Waits[0].Tool)
	require.JSONEq(t, `{"path":"cache.toml","content":"ttl_seconds = 300\n"}`, st.Waits[0].Args)
	require.NotEmpty(t, st.Waits[0].Digest)
	require.Equal(t, "run_command", st.Waits[1].Tool)

	// Watch reported every fact appended, in order, as the log holds it.
	var logged []facts.Fact
	for f, err := range e.store.Read(ctx, "t", 1) {
		require.NoError(t, err)
		logged = append(logged, f)
	}
	require.Equal(t, logged, e.watched)

	_, err = harness.Inspect(ctx, e.store, e.stock.Actor, "nope")
	require.ErrorIs(t, err, harness.ErrUnknownThread)
}

func TestApplyApprovalAsksWhatItDoesNotDecide(t *testing.T) {
	e := newStockEnv(t, stockScript)
	_, err := e.rt.Start(ctx, e.stock.Actor, "t", "go")
	require.NoError(t, err)
	st, err := harness.Inspect(ctx, e.store, e.stock.Actor, "t")
	require.NoError(t, err)
	writes, err := harness.NewApproval("writes", nil, nil)
	require.NoError(t, err)
	left, posted, err := harness.ApplyApproval(ctx, e.rt, e.stock.Actor, "t", writes, st.Waits)
	require.NoError(t, err)
	require.Equal(t, 1, posted)
	require.Len(t, left, 1)
	require.Equal(t, "run_command", left[0].Tool)
	ans, err := facts.Decode[facts.ConfirmationAnswered](e.watched[len(e.watched)-1])
	require.NoError(t, err)
	require.Equal(t, facts.ConfirmationAnswered{RequestID: "1-w", Approved: true, By: harness.PolicyBy, Reason: "approve writes", Digest: st.Waits[0].Digest}, ans)
	require.Equal(t, facts.IngressCause(harness.AnswerKey(facts.KindConfirmationAnswered, "1-w")), e.watched[len(e.watched)-1].Cause)

	// Applying it again appends nothing.
	_, posted, err = harness.ApplyApproval(ctx, e.rt, e.stock.Actor, "t", writes, st.Waits)
	require.NoError(t, err)
	require.Zero(t, posted)
}

func TestUndo(t *testing.T) {
	e := newStockEnv(t, stockScript)
	st := e.runApproved("t")
	require.Equal(t, harness.StatusDone, st.Status)
	require.Equal(t, "ttl_seconds = 300\n", e.read("cache.toml"))
	require.Equal(t, "line one\nttl is 300\n", e.read("notes.txt"))
	require.Equal(t, "new\n", e.read("made.txt"))
	svc := e.rt.Services

	plan, err := harness.PlanUndo(ctx, e.store, svc, "t", 0)
	require.NoError(t, err)
	verbs := map[string]string{}
	for _, s := range plan.Steps {
		verbs[s.Path] = map[bool]string{true: "remove", false: "restore"}[s.Restore == ""]
	}
	require.Equal(t, map[string]string{"cache.toml": "restore", "made.txt": "remove", "notes.txt": "restore"}, verbs)
	require.Equal(t, "ttl_seconds = 300\n", e.read("cache.toml"), "a plan changes nothing")

	// --to: only the command's changes, after the write's completion.
	var writeDone uint64
	for f, err := range e.store.Read(ctx, "t", 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindCheckRecorded {
			writeDone = f.Seq
		}
	}
	plan, err = harness.PlanUndo(ctx, e.store, svc, "t", writeDone)
	require.NoError(t, err)
	require.Len(t, plan.Steps, 2)
	require.Equal(t, "made.txt", plan.Steps[0].Path)
	require.Equal(t, "notes.txt", plan.Steps[1].Path)

	head, err := e.store.Head(ctx, "t")
	require.NoError(t, err)
	_, err = harness.Undo(ctx, e.store, svc, "t", 0, "ana")
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 60\n", e.read("cache.toml"))
	require.Equal(t, "line one\n", e.read("notes.txt"))
	require.Equal(t, "(absent)", e.read("made.txt"))
	after, err := e.store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, head.Seq+1, after.Seq, "the undo is one fact")
	require.Equal(t, facts.KindWorkspaceRestored, after.Kind)
	rec, err := facts.Decode[facts.WorkspaceRestored](lastFact(t, e.store, "t"))
	require.NoError(t, err)
	require.Equal(t, "ana", rec.By)
	require.Len(t, rec.Restored, 3)
	require.NoError(t, harness.VerifyLog(ctx, e.store, e.stock.Actor, "t"))

	// Undoing again finds nothing to do.
	plan, err = harness.Undo(ctx, e.store, svc, "t", 0, "ana")
	require.NoError(t, err)
	require.Empty(t, plan.Steps)
}

func TestUndoRefusesAChangedFile(t *testing.T) {
	e := newStockEnv(t, stockScript)
	require.Equal(t, harness.StatusDone, e.runApproved("t").Status)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "cache.toml"), []byte("ttl_seconds = 120\n"), 0o644))
	head, err := e.store.Head(ctx, "t")
	require.NoError(t, err)

	_, err = harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
	require.ErrorIs(t, err, harness.ErrUndoRefused)
	var ue *harness.UndoError
	require.ErrorAs(t, err, &ue)
	require.Len(t, ue.Conflicts, 1)
	require.Equal(t, "cache.toml", ue.Conflicts[0].Path)
	require.Contains(t, err.Error(), "cache.toml: changed since the thread last touched it")

	require.Equal(t, "ttl_seconds = 120\n", e.read("cache.toml"), "nothing was changed")
	require.Equal(t, "line one\nttl is 300\n", e.read("notes.txt"), "not even the paths that could be restored")
	require.Equal(t, "new\n", e.read("made.txt"))
	after, err := e.store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, head.Seq, after.Seq, "nothing was appended")
}

func TestFork(t *testing.T) {
	e := newStockEnv(t, stockScript)
	out, err := e.rt.Start(ctx, e.stock.Actor, "t", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)

	h, err := harness.Fork(ctx, e.store, "t", out.Seq, "what-if")
	require.NoError(t, err)
	require.Equal(t, out.Seq+1, h.Seq)
	require.Equal(t, facts.KindThreadForked, h.Kind)
	require.NoError(t, harness.VerifyLog(ctx, e.store, e.stock.Actor, "what-if"))

	// The fork waits for what the origin waited for; deny everything in it.
	st, err := harness.Inspect(ctx, e.store, e.stock.Actor, "what-if")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	for _, w := range st.Waits {
		d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: w.RequestID, By: "ana"})
		require.NoError(t, err)
		_, err = e.rt.Post(ctx, e.stock.Actor, "what-if", d, harness.AnswerKey(d.Kind, w.RequestID))
		require.NoError(t, err)
	}
	fo, err := e.rt.Resume(ctx, e.stock.Actor, "what-if")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, fo.Status)
	require.Equal(t, "ttl_seconds = 60\n", e.read("cache.toml"))
	require.NoError(t, harness.VerifyLog(ctx, e.store, e.stock.Actor, "what-if"))

	// The origin is untouched.
	orig, err := e.store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, out.Seq, orig.Seq)

	for _, tc := range []struct {
		from string
		at   uint64
		to   string
		err  error
		msg  string
	}{
		{"t", out.Seq, "what-if", harness.ErrThreadExists, "--as"},
		{"t", 0, "x", nil, "not a seq of the thread"},
		{"t", out.Seq + 1, "x", nil, "not a seq of the thread"},
		{"nope", 1, "x", harness.ErrUnknownThread, ""},
		{"t", 1, "bad id", thread.ErrBadThreadID, ""},
	} {
		_, err := harness.Fork(ctx, e.store, tc.from, tc.at, tc.to)
		require.Error(t, err)
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err)
		}
		require.ErrorContains(t, err, tc.msg)
	}
	require.Equal(t, "t-at5", harness.ForkID("t", 5))
}

func TestEffectsOpenFirst(t *testing.T) {
	e := newStockEnv(t, stockScript)
	require.Equal(t, harness.StatusDone, e.runApproved("a").Status)
	// A second thread writes what is already there: success reported,
	// nothing changed — unknown, open.
	st := e.runApproved("b")
	require.Equal(t, harness.StatusParked, st.Status)
	require.Equal(t, fold.WaitReconcile, st.Waits[0].Kind)
	require.NotNil(t, st.Waits[0].Completion)

	es, err := harness.Effects(ctx, e.store)
	require.NoError(t, err)
	require.Len(t, es, 4)
	require.True(t, es[0].Open)
	require.Equal(t, "b", es[0].Thread)
	require.Equal(t, facts.EffectUnknown, es[0].State)
	for _, x := range es[1:] {
		require.False(t, x.Open)
	}
	require.Equal(t, []string{"cache.toml"}, es[1].Changed)
	require.Equal(t, facts.VerdictPass, es[1].Check)
}

func TestDescribe(t *testing.T) {
	d := func(kind facts.Kind, p any) facts.Fact {
		dr, err := facts.NewDraft(kind, "", p)
		require.NoError(t, err)
		return facts.Fact{Kind: dr.Kind, Data: dr.Data}
	}
	cases := []struct {
		f    facts.Fact
		want string
	}{
		{d(facts.KindUserMessage, facts.UserMessage{Text: "Set the\nTTL"}), `"Set the TTL"`},
		{d(facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: "1-c", Approved: false, By: "ana", Reason: "no"}), `1-c denied by ana: "no"`},
		{d(facts.KindActionCompleted, facts.ActionCompleted{ActionID: "1-c", Report: facts.Report{Status: facts.StatusSucceeded},
			Observation: facts.Observation{Available: true, Before: "a", After: "a"}, EffectState: facts.EffectUnknown}),
			"1-c report succeeded · observed no change · effect unknown — success reported, nothing observed changed: open until a person reconciles it"},
		{d(facts.KindActionCompleted, facts.ActionCompleted{ActionID: "1-c", Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectReported}),
			"1-c report succeeded · not observed (nobody looked) · effect reported — nobody observed it; only the report says so"},
		{d(facts.KindCheckRecorded, facts.CheckRecorded{ActionID: "1-c", Check: facts.CheckSpec{Name: "file_equals", Target: "a"}, Verdict: facts.VerdictFail, Reason: "differs"}),
			"1-c file_equals a: fail (differs)"},
		{facts.Fact{Kind: facts.KindModelTurn, Data: []byte{0xc1}}, "(payload does not decode"},
	}
	for _, tc := range cases {
		require.Contains(t, harness.Describe(tc.f), tc.want)
	}
}

func lastFact(t *testing.T, s thread.Store, id string) facts.Fact {
	t.Helper()
	var last facts.Fact
	for f, err := range s.Read(ctx, id, 1) {
		require.NoError(t, err)
		last = f
	}
	return last
}

// Undo of a file whose earlier content was too large to keep says so, as
// the Pebble store reports a digest it keeps nothing under
// (fs.ErrNotExist).
func TestUndoSaysWhatWasNotKept(t *testing.T) {
	e := newStockEnv(t, `{"text": "Shrinking it.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"echo small > big.bin\"}"}]}
{"text": "Done."}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "big.bin"), bytes.Repeat([]byte("x"), int(action.DefaultBlobCap)+1), 0o644))
	require.Equal(t, harness.StatusDone, e.runApproved("t").Status)
	_, err := harness.Undo(ctx, e.store, e.rt.Services, "t", 0, "ana")
	require.ErrorContains(t, err, "was not kept (larger than")
	require.Equal(t, "small\n", e.read("big.bin"), "nothing was changed")
}
