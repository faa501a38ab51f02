package rewind_test

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/thread"
)

// treeScript: the parent sets the TTL to 300, then delegates; its child
// raises it to 500 and writes a note.
const treeScript = `{"text": "Set, then delegate.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}, {"id": "d1", "name": "delegate", "args": "{\"task\":\"Raise it to 500 and note it\"}"}]}
{"text": "Done."}
{"thread": "1-d1", "tool_calls": [{"id": "a", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 500\\n\"}"}, {"id": "b", "name": "write_file", "args": "{\"path\":\"notes.txt\",\"content\":\"raised\\n\"}"}]}
{"thread": "1-d1", "text": "Raised to 500."}`

func seqOf(t *testing.T, e *harnesstest.Stock, id string, kind facts.Kind) uint64 {
	t.Helper()
	for f, err := range e.Store.Read(ctx, id, 1) {
		require.NoError(t, err)
		if f.Kind == kind {
			return f.Seq
		}
	}
	t.Fatalf("no %s in %s", kind, id)
	return 0
}

// Undo of a parent includes its children's changes, in the order they
// were made: a file the parent and then its child changed is put back as
// it was before the parent.
func TestUndoATree(t *testing.T) {
	e := harnesstest.NewStock(t, treeScript)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	require.Equal(t, "ttl_seconds = 500\n", e.Read("cache.toml"))
	require.Equal(t, "raised\n", e.Read("notes.txt"))

	plan, err := rewind.PlanUndo(ctx, e.RT, e.Stock.Actor, "t", 1)
	require.NoError(t, err)
	var paths []string
	for _, s := range plan.Steps {
		paths = append(paths, s.Path)
	}
	require.Equal(t, []string{"cache.toml", "notes.txt"}, paths)
	report := seqOf(t, e, "t", facts.KindChildReported)
	require.Contains(t, plan.Steps[0].Seqs, report, "the child's change counts where its report is")

	_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 1, "ana")
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 60\n", e.Read("cache.toml"), "as before the parent's write, not the child's")
	require.Equal(t, "line one\n", e.Read("notes.txt"))
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "t"))

	// Undo to just before the report leaves the parent's own write: only
	// the child's changes come after.
	e2 := harnesstest.NewStock(t, treeScript)
	require.Equal(t, harness.StatusDone, e2.RunApproved("t").Status)
	_, err = rewind.Undo(ctx, e2.RT, e2.Stock.Actor, "t", seqOf(t, e2, "t", facts.KindChildReported)-1, "ana")
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", e2.Read("cache.toml"))
	require.Equal(t, "line one\n", e2.Read("notes.txt"))
}

// A fork of a parent cut while its child ran spawns a child of its own,
// which a resume of the fork runs; a fork cut after the child reported
// shares it. Both verify; a child thread itself is not forked.
func TestForkATree(t *testing.T) {
	e := harnesstest.NewStock(t, treeScript)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)

	// The workspace is not forked: put it back first, so that the fork's
	// child finds it as the original's did.
	_, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 1, "ana")
	require.NoError(t, err)
	at := seqOf(t, e, "t", facts.KindChildSpawned)
	_, err = rewind.Fork(ctx, e.Store, "t", at, "f")
	require.NoError(t, err)
	th, err := e.RT.Open(ctx, e.Stock.Actor, "f")
	require.NoError(t, err)
	r, err := th.Reading(ctx)
	require.NoError(t, err)
	require.Equal(t, "f.1-d1", r.Children()[0].Child.ID(), "the fork's own child")
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	st, err := drive.Drive(ctx, th, drive.Options{Approval: all})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status, "%+v", st.Waits)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "f"))
	sp := harnesstest.LastFact(t, e.Store, "f.1-d1")
	require.Equal(t, facts.KindThreadEnded, sp.Kind)
	require.Equal(t, "ttl_seconds = 500\n", e.Read("cache.toml"), "the fork's child ran")

	head, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	_, err = rewind.Fork(ctx, e.Store, "t", head.Seq, "g")
	require.NoError(t, err)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "g"), "a fork shares the children its origin had heard from")
	g, err := e.RT.Open(ctx, e.Stock.Actor, "g")
	require.NoError(t, err)
	r, err = g.Reading(ctx)
	require.NoError(t, err)
	require.Equal(t, "t.1-d1", r.Children()[0].Child.ID())

	_, err = rewind.Fork(ctx, e.Store, "t.1-d1", 2, "h")
	require.ErrorContains(t, err, "it is a child of t")
	_, err = e.Store.Head(ctx, "h")
	require.ErrorIs(t, err, thread.ErrNotFound, "nothing was forked")
}

// forging is a store whose reads of one fact of one thread give it
// changed in place, its payload another (as a store whose record was
// rewritten with a good checksum gives it).
type forging struct {
	thread.Store
	id  string
	seq uint64
}

func (s forging) Read(ctx context.Context, id string, from uint64) iter.Seq2[facts.Fact, error] {
	inner := s.Store.Read(ctx, id, from)
	return func(yield func(facts.Fact, error) bool) {
		for f, err := range inner {
			if err == nil && id == s.id && f.Seq == s.seq {
				f.Data = append(bytes.Clone(f.Data), 0xc0) // a msgpack nil more
			}
			if !yield(f, err) {
				return
			}
		}
	}
}

// A fork copies only facts that chain as the log says: one changed in
// place, before the cut or at it, is refused (rev-store14: the fork
// stamped it anew and verified). A fork records the hash it was cut at,
// and its audit checks the thread it came from against it.
func TestForkRefusesAChangedLog(t *testing.T) {
	e := harnesstest.NewStock(t, treeScript)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	at := seqOf(t, e, "t", facts.KindChildSpawned)
	head, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	for _, changed := range []uint64{2, at, head.Seq} {
		cut := at
		if changed == head.Seq {
			cut = head.Seq
		}
		_, err := rewind.Fork(ctx, forging{e.Store, "t", changed}, "t", cut, "f")
		require.ErrorIs(t, err, thread.ErrCorrupt, "fact %d changed, cut at %d", changed, cut)
		_, err = e.Store.Head(ctx, "f")
		require.ErrorIs(t, err, thread.ErrNotFound, "nothing was forked")
	}
	_, err = rewind.Fork(ctx, forging{e.Store, "t", at + 1}, "t", at-1, "f")
	require.NoError(t, err, "what lies after the cut is not copied")

	_, err = rewind.Fork(ctx, e.Store, "t", at, "g")
	require.NoError(t, err)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "g"))
	err = audit.VerifyLog(ctx, forging{e.Store, "t", at}, e.Stock.Actor, "g")
	require.ErrorContains(t, err, "forked from t at seq")
	require.ErrorContains(t, err, "one of the two logs was changed")
}

// A fork cut inside what one step wrote (two facts of one cause) is
// refused: the fork would hold the step half done, which the fold takes
// for done (rev-readme14: a fork at a turn's instructions.read, before
// its model.turn, was "done" with no turn). A cut between steps forks.
func TestForkRefusesACutInsideAStep(t *testing.T) {
	e := harnesstest.NewStock(t, treeScript)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	var prev facts.Fact
	mid := uint64(0)
	for f, err := range e.Store.Read(ctx, "t", 1) {
		require.NoError(t, err)
		if mid == 0 && prev.Seq != 0 && f.Cause == prev.Cause {
			mid = prev.Seq
		}
		prev = f
	}
	require.NotZero(t, mid, "the log has a step of two facts")
	_, err := rewind.Fork(ctx, e.Store, "t", mid, "f")
	require.ErrorIs(t, err, rewind.ErrMidStep)
	require.ErrorContains(t, err, fmt.Sprintf("at %d falls inside one step", mid))
	_, err = e.Store.Head(ctx, "f")
	require.ErrorIs(t, err, thread.ErrNotFound, "nothing was forked")
	_, err = rewind.Fork(ctx, e.Store, "t", mid-1, "f")
	require.NoError(t, err)
}

// A fork's id shaped like a child's (PARENT.CALL) is refused: a thread
// PARENT that later delegated CALL could not create its child. A store
// that has such a thread already (made before this was refused) says
// what is wrong: the parent's delegation, and its verification, name the
// thread that took its child's id.
func TestForkRefusesAChildsID(t *testing.T) {
	e := harnesstest.NewStock(t, treeScript)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	for _, as := range []string{"p.1-d1", "p.x", "q.2-d1.3-d2"} {
		_, err := rewind.Fork(ctx, e.Store, "t", 1, as)
		require.ErrorIs(t, err, harness.ErrChildShaped, as)
		_, err = e.Store.Head(ctx, as)
		require.ErrorIs(t, err, thread.ErrNotFound, "nothing was forked")
	}

	// The squatter, as an older harness forked it.
	_, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 1, "ana")
	require.NoError(t, err)
	d, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("start"), facts.UserMessage{Text: "squat"})
	require.NoError(t, err)
	_, err = e.Store.Append(ctx, "p.1-d1", 0, d)
	require.NoError(t, err)
	_, err = rewind.Fork(ctx, e.Store, "t", seqOf(t, e, "t", facts.KindChildSpawned)-1, "p")
	require.NoError(t, err)
	th, err := e.RT.Open(ctx, e.Stock.Actor, "p")
	require.NoError(t, err)
	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	_, err = drive.Drive(ctx, th, drive.Options{Approval: all})
	require.ErrorIs(t, err, harness.ErrNotChild)
	require.ErrorContains(t, err, "the id is taken by a thread p did not spawn")
	err = audit.VerifyLog(ctx, e.Store, e.Stock.Actor, "p")
	var ve *audit.VerifyError
	require.ErrorAs(t, err, &ve, "replay --verify does not say verified")
	require.Contains(t, ve.Reason, "child p.1-d1 spawned here cannot be created: its id is taken by a thread this one did not spawn")
}
