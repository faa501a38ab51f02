package scheduler_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/scheduler"
	store "github.com/seed-7cc7a084/harness/thread"
)

// TestWholeFoldReleasesFoldedFacts folds a long thread twice: once as a
// verifier does, asking for the whole log's fold at every fact (which
// lets the scheduler release the facts before the latest turn), and once
// stepping only. What each says after is the same: the snapshot (which
// carries the last observation of the workspace, recorded early in the
// log, and the latest turn's facts), the reading, and what is enabled.
func TestWholeFoldReleasesFoldedFacts(t *testing.T) {
	s, err := store.OpenPebble(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	harnesstest.Parked{Facts: 6000, InputTokens: 100}.Append(t, s, "long")
	var log []facts.Fact
	observed := uint64(0)
	for f, err := range s.Read(context.Background(), "long", 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindActionStarted && observed == 0 {
			// The thread's only reading of the workspace, long before the
			// latest turn.
			p, err := facts.Decode[facts.ActionStarted](f)
			require.NoError(t, err)
			p.ObservedBefore, p.Manifest = "sha256:early", "sha256:manifest"
			d, err := facts.NewDraft(f.Kind, f.Cause, p)
			require.NoError(t, err)
			f.Data, observed = d.Data, f.Seq
		}
		log = append(log, f)
	}
	require.NotZero(t, observed)

	actor := harnesstest.LoopActor(t)
	sched := func(fd *fold.Fold[harness.Services]) *scheduler.Scheduler[harness.Services] {
		for _, c := range fd.Components() {
			if s, ok := c.(*scheduler.Scheduler[harness.Services]); ok {
				return s
			}
		}
		t.Fatal("no scheduler in the fold")
		return nil
	}
	checked, stepped := fold.New(actor.New()...), fold.New(actor.New()...)
	for _, f := range log {
		require.NoError(t, sched(checked).Check(f), "seq %d", f.Seq)
		require.NoError(t, checked.Step(f))
		require.NoError(t, stepped.Step(f))
	}
	a, b := sched(checked), sched(stepped)
	require.Greater(t, scheduler.HeldFrom(a), 4000, "the whole fold's scheduler still holds the facts it folded")
	require.Zero(t, scheduler.HeldFrom(b))

	snapA, err := a.Snapshot()
	require.NoError(t, err)
	snapB, err := b.Snapshot()
	require.NoError(t, err)
	require.Equal(t, snapB, snapA)
	require.Contains(t, string(snapA), "sha256:early")

	ra, err := a.Reading()
	require.NoError(t, err)
	rb, err := b.Reading()
	require.NoError(t, err)
	require.Equal(t, rb, ra)
	pa, err := checked.Project()
	require.NoError(t, err)
	pb, err := stepped.Project()
	require.NoError(t, err)
	require.Equal(t, len(pb.Enabled), len(pa.Enabled))
	for i := range pa.Enabled {
		require.Equal(t, pb.Enabled[i].Key, pa.Enabled[i].Key)
	}
	require.Equal(t, b.Messages(), a.Messages())
}
