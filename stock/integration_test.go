package stock_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

func TestInspectAndWatch(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	_, err := e.RT.Start(ctx, e.Stock.Actor, "t", "Set the TTL and note it")
	require.NoError(t, err)
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	require.Equal(t, "scripted:stock", st.Model)
	require.Equal(t, stock.WorkspaceName(e.Root), st.Workspace, "system.configured records where the thread works")
	require.Contains(t, st.Workspace, ":"+e.Root)
	require.Len(t, st.Waits, 2)
	require.Equal(t, fold.WaitConfirmation, st.Waits[0].Kind)
	require.Equal(t, "write_file", st.Waits[0].Tool)
	require.JSONEq(t, `{"path":"cache.toml","content":"ttl_seconds = 300\n"}`, st.Waits[0].Args)
	require.NotEmpty(t, st.Waits[0].Digest)
	require.Equal(t, "run_command", st.Waits[1].Tool)

	// Watch reported every fact appended, in order, as the log holds it.
	var logged []facts.Fact
	for f, err := range e.Store.Read(ctx, "t", 1) {
		require.NoError(t, err)
		logged = append(logged, f)
	}
	require.Equal(t, logged, e.Watched)

	_, err = drive.Inspect(ctx, e.Thread("nope"))
	require.ErrorIs(t, err, harness.ErrUnknownThread)
}

func TestApplyApprovalAsksWhatItDoesNotDecide(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	_, err := e.RT.Start(ctx, e.Stock.Actor, "t", "go")
	require.NoError(t, err)
	st, err := drive.Inspect(ctx, e.Thread("t"))
	require.NoError(t, err)
	writes, err := drive.NewApproval("writes", nil, nil)
	require.NoError(t, err)
	left, posted, err := drive.ApplyApproval(ctx, e.Thread("t"), writes, st.Waits)
	require.NoError(t, err)
	require.Equal(t, 1, posted)
	require.Len(t, left, 1)
	require.Equal(t, "run_command", left[0].Tool)
	ans, err := facts.Decode[facts.ConfirmationAnswered](e.Watched[len(e.Watched)-1])
	require.NoError(t, err)
	require.Equal(t, facts.ConfirmationAnswered{RequestID: "1-w", Approved: true, By: drive.PolicyBy, Reason: "approve writes", Digest: st.Waits[0].Digest}, ans)
	require.Equal(t, facts.IngressCause(drive.AnswerKey(facts.KindConfirmationAnswered, "1-w")), e.Watched[len(e.Watched)-1].Cause)

	// Applying it again appends nothing.
	_, posted, err = drive.ApplyApproval(ctx, e.Thread("t"), writes, st.Waits)
	require.NoError(t, err)
	require.Zero(t, posted)
}

func TestUndo(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	st := e.RunApproved("t")
	require.Equal(t, harness.StatusDone, st.Status)
	require.Equal(t, "ttl_seconds = 300\n", e.Read("cache.toml"))
	require.Equal(t, "line one\nttl is 300\n", e.Read("notes.txt"))
	require.Equal(t, "new\n", e.Read("made.txt"))
	plan, err := rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", 0)
	require.NoError(t, err)
	verbs := map[string]string{}
	for _, s := range plan.Steps {
		verbs[s.Path] = map[bool]string{true: "remove", false: "restore"}[s.Restore == ""]
	}
	require.Equal(t, map[string]string{"cache.toml": "restore", "made.txt": "remove", "notes.txt": "restore"}, verbs)
	require.Equal(t, "ttl_seconds = 300\n", e.Read("cache.toml"), "a plan changes nothing")

	// --to: only the command's changes, after the write's completion.
	var writeDone uint64
	for f, err := range e.Store.Read(ctx, "t", 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindCheckRecorded {
			writeDone = f.Seq
		}
	}
	plan, err = rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", writeDone)
	require.NoError(t, err)
	require.Len(t, plan.Steps, 2)
	require.Equal(t, "made.txt", plan.Steps[0].Path)
	require.Equal(t, "notes.txt", plan.Steps[1].Path)

	head, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 60\n", e.Read("cache.toml"))
	require.Equal(t, "line one\n", e.Read("notes.txt"))
	require.Equal(t, "(absent)", e.Read("made.txt"))
	after, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, head.Seq+1, after.Seq, "the undo is one fact")
	require.Equal(t, facts.KindWorkspaceRestored, after.Kind)
	rec, err := facts.Decode[facts.WorkspaceRestored](harnesstest.LastFact(t, e.Store, "t"))
	require.NoError(t, err)
	require.Equal(t, "ana", rec.By)
	require.Len(t, rec.Restored, 3)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "t"))

	// Undoing again finds nothing to do.
	plan, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
	require.NoError(t, err)
	require.Empty(t, plan.Steps)
}

func TestUndoRefusesAChangedFile(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	require.NoError(t, os.WriteFile(filepath.Join(e.Root, "cache.toml"), []byte("ttl_seconds = 120\n"), 0o644))
	head, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)

	_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
	require.ErrorIs(t, err, rewind.ErrUndoRefused)
	var ue *rewind.UndoError
	require.ErrorAs(t, err, &ue)
	require.Len(t, ue.Conflicts, 1)
	require.Equal(t, "cache.toml", ue.Conflicts[0].Path)
	require.Contains(t, err.Error(), "cache.toml: changed since the thread last touched it")

	require.Equal(t, "ttl_seconds = 120\n", e.Read("cache.toml"), "nothing was changed")
	require.Equal(t, "line one\nttl is 300\n", e.Read("notes.txt"), "not even the paths that could be restored")
	require.Equal(t, "new\n", e.Read("made.txt"))
	after, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, head.Seq, after.Seq, "nothing was appended")
}

func TestFork(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	out, err := e.RT.Start(ctx, e.Stock.Actor, "t", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)

	h, err := rewind.Fork(ctx, e.Store, "t", out.Seq, "what-if")
	require.NoError(t, err)
	require.Equal(t, out.Seq+1, h.Seq)
	require.Equal(t, facts.KindThreadForked, h.Kind)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "what-if"))

	// The fork waits for what the origin waited for; deny everything in it.
	st, err := drive.Inspect(ctx, e.Thread("what-if"))
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	for _, w := range st.Waits {
		d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: w.RequestID, By: "ana"})
		require.NoError(t, err)
		_, err = e.RT.Post(ctx, e.Stock.Actor, "what-if", d, drive.AnswerKey(d.Kind, w.RequestID))
		require.NoError(t, err)
	}
	fo, err := e.RT.Resume(ctx, e.Stock.Actor, "what-if")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, fo.Status)
	require.Equal(t, "ttl_seconds = 60\n", e.Read("cache.toml"))
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "what-if"))

	// The origin is untouched.
	orig, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, out.Seq, orig.Seq)

	for _, tc := range []struct {
		from string
		at   uint64
		to   string
		err  error
		msg  string
	}{
		{"t", out.Seq, "what-if", harness.ErrThreadExists, "into what-if"},
		{"t", 0, "x", nil, "not a seq of the thread"},
		{"t", out.Seq + 1, "x", nil, "not a seq of the thread"},
		{"nope", 1, "x", harness.ErrUnknownThread, ""},
		{"t", 1, "bad id", thread.ErrBadThreadID, ""},
	} {
		_, err := rewind.Fork(ctx, e.Store, tc.from, tc.at, tc.to)
		require.Error(t, err)
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err)
		}
		require.ErrorContains(t, err, tc.msg)
	}
	require.Equal(t, "t-at5", rewind.ForkID("t", 5))
}

func TestEffectsOfAWriteOfWhatIsThere(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	require.Equal(t, harness.StatusDone, e.RunApproved("a").Status)
	// A second thread writes what is already there: success reported,
	// nothing changed, and its check passes — what it was to make holds,
	// so its effect is none, and nobody is asked to settle it.
	st := e.RunApproved("b")
	require.Equal(t, harness.StatusDone, st.Status)

	es, err := audit.Effects(ctx, e.RT, e.Stock.Actor)
	require.NoError(t, err)
	require.Len(t, es, 4)
	for _, x := range es {
		require.False(t, x.Open, "%s %s", x.Thread, x.ActionID)
	}
	var b []audit.Effect
	for _, x := range es {
		if x.Thread == "b" && x.Tool == "write_file" {
			b = append(b, x)
		}
	}
	require.Len(t, b, 1)
	require.Equal(t, facts.EffectNone, b[0].State)
	require.Empty(t, b[0].Changed)
	require.Equal(t, facts.VerdictPass, b[0].Check)
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
		require.Contains(t, present.Describe(tc.f), tc.want)
	}
}

// Undo of a file whose earlier content was too large to keep says so, as
// the Pebble store reports a digest it keeps nothing under
// (fs.ErrNotExist).
func TestUndoSaysWhatWasNotKept(t *testing.T) {
	e := harnesstest.NewStock(t, `{"text": "Shrinking it.", "tool_calls": [{"id": "c", "name": "run_command", "args": "{\"command\":\"echo small > big.bin\"}"}]}
{"text": "Done."}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.Root, "big.bin"), bytes.Repeat([]byte("x"), int(action.DefaultBlobCap)+1), 0o644))
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	_, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
	require.ErrorContains(t, err, "was not kept (larger than")
	require.Equal(t, "small\n", e.Read("big.bin"), "nothing was changed")
}
