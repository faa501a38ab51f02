package audit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// A follower kept while a thread grows gives VerifyLog's verdict after
// each stretch of appends — snapshots kept on the way included — reading
// only the new facts.
func TestFollowerAgreesWithVerifyLog(t *testing.T) {
	e := harnesstest.New(t, stepScript, harness.WithMaxSteps(3), func(c *harness.Config) { c.CompactAt = 5 })
	fl := audit.Follow(e.Store, e.Actor, "t")
	same := func(where string) {
		t.Helper()
		h, err := e.Store.Head(ctx, "t")
		require.NoError(t, err)
		seq, verdict, err := fl.Update(ctx)
		require.NoError(t, err, where)
		require.Equal(t, h.Seq, seq, where)
		want := audit.VerifyLog(ctx, e.Store, e.Actor, "t")
		if want == nil {
			require.NoError(t, verdict, where)
		} else {
			require.EqualError(t, verdict, want.Error(), where)
		}
	}
	out, err := e.RT.Start(ctx, e.Actor, "t", "Read a and b, then write c.")
	require.NoError(t, err)
	same("started")
	for out.Status == harness.StatusStepLimit {
		out, err = e.Thread("t").Resume(ctx)
		require.NoError(t, err)
		same("resumed")
	}
	require.Equal(t, harness.StatusParked, out.Status)
	same("parked, again")

	// A snapshot kept at a seq the follower passed, that is not the fold
	// there: the follower verifies the whole log again and names it.
	s, err := e.Store.LatestSnapshot(ctx, "t")
	require.NoError(t, err)
	s.Data = flipSystem(t, e, s)
	require.NoError(t, e.Store.PutSnapshot(ctx, s))
	same("a spoiled snapshot") // at the follower's seq: checked against its fold
	_, verdict, err := fl.Update(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, verdict, audit.ErrSnapshotMismatch)

	// A fact the fold never enabled, appended behind the runtime's back.
	h, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	d, err := facts.NewDraft(facts.KindModelTurn, "infer/turn/99", facts.ModelTurn{Turn: 99, Text: "forged"})
	require.NoError(t, err)
	_, err = e.Store.Append(ctx, "t", h.Seq, d)
	require.NoError(t, err)
	same("a forged fact")
	_, verdict, err = fl.Update(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, verdict, audit.ErrUnverified)
	require.ErrorContains(t, verdict, "never enabled infer/turn/99")
}

// A snapshot put again under a seq the follower has passed is checked:
// the follower verifies the whole log again and names it as VerifyLog
// does.
func TestFollowerFindsASnapshotBehindIt(t *testing.T) {
	e := snapshotted(t)
	fl := audit.Follow(e.Store, e.Actor, "t")
	_, verdict, err := fl.Update(ctx)
	require.NoError(t, err)
	require.NoError(t, verdict)
	seqs := snapshotSeqs(t, e)
	var first = seqs[0]
	for s, err := range e.Store.ListSnapshots(ctx, "t") {
		require.NoError(t, err)
		if s.Seq == first {
			s.Data = flipSystem(t, e, s)
			require.NoError(t, e.Store.PutSnapshot(ctx, s))
		}
	}
	_, verdict, err = fl.Update(ctx)
	require.NoError(t, err)
	want := audit.VerifyLog(ctx, e.Store, e.Actor, "t")
	require.ErrorIs(t, want, audit.ErrSnapshotMismatch)
	require.EqualError(t, verdict, want.Error())
}
