package harness_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// tally is a component of one's own: it counts the thread's completed
// actions, and every fact any tally ever stepped (steps).
type tally struct {
	steps *atomic.Int64
	view  tallyView
}

type tallyView struct{ Facts, Completed int }

func (c *tally) Name() string { return "tally" }

func (c *tally) Step(f facts.Fact) error {
	c.steps.Add(1)
	c.view.Facts++
	if f.Kind == facts.KindActionCompleted {
		c.view.Completed++
	}
	return nil
}

func (c *tally) Output() fold.Output[harness.Services] {
	return fold.Output[harness.Services]{View: c.view}
}

// TestComponentViewWithoutRefold: a component added with harness.Component
// folds the thread with the stock parts, and ViewAs reads its view from
// the thread's kept fold: every fact is stepped once, however often the
// view is read.
func TestComponentViewWithoutRefold(t *testing.T) {
	ctx := context.Background()
	e := harnesstest.New(t, harnesstest.WriteScript)
	var steps atomic.Int64
	actor, err := harness.Compose(e.RT.Config, harness.System(), harness.Tools(e.Toolbox), harness.Infer(harness.Scheduler()),
		harness.Component(func() fold.Component[harness.Services] { return &tally{steps: &steps} }))
	require.NoError(t, err)
	th := e.RT.Thread(actor, "t1")
	out, err := th.Start(ctx, "Set the TTL")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	e.Approve("t1", "1-c", true)
	out, err = th.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)

	for range 3 {
		v, err := harness.ViewAs[tallyView](ctx, th, "tally")
		require.NoError(t, err)
		require.Equal(t, tallyView{Facts: int(out.Seq), Completed: 1}, v)
	}
	require.Equal(t, int64(out.Seq), steps.Load(), "each fact stepped once: the view is read from the kept fold, not a refold")

	_, err = harness.ViewAs[string](ctx, th, "tally")
	require.ErrorIs(t, err, harness.ErrViewType)
	_, err = harness.ViewAs[tallyView](ctx, th, "talley")
	require.ErrorIs(t, err, harness.ErrNoComponent)
	_, err = harness.ViewAs[tallyView](ctx, e.RT.Thread(actor, "nobody"), "tally")
	require.ErrorIs(t, err, harness.ErrUnknownThread)
	require.False(t, errors.Is(err, harness.ErrNoComponent))
}
