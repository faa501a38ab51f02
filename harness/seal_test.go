package harness_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread"
)

// recorder is a Sealer that keeps the heads it is given.
type recorder struct {
	mu    sync.Mutex // guards heads
	heads []thread.Head
}

func (r *recorder) SealHead(_ context.Context, _ thread.Store, h thread.Head) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.heads = append(r.heads, h)
	return nil
}

// A Resume that leaves a thread parked or done seals its head, while one
// stopped at the step limit does not: the head sealed is the log's.
func TestResumeSealsParkedAndEnded(t *testing.T) {
	e := harnesstest.New(t, compactScript, harness.WithMaxSteps(3))
	r := &recorder{}
	e.RT.Sealer = r
	out, err := e.RT.Start(ctx, e.Actor, "t", "Read a and b, then write c.")
	require.NoError(t, err)
	require.Equal(t, harness.StatusStepLimit, out.Status)
	require.Empty(t, r.heads, "no seal at the step limit")
	for out.Status == harness.StatusStepLimit {
		out, err = e.RT.Resume(ctx, e.Actor, "t")
		require.NoError(t, err)
	}
	require.Equal(t, harness.StatusParked, out.Status)
	head, err := e.Store.Head(ctx, "t")
	require.NoError(t, err)
	require.Len(t, r.heads, 1)
	require.Equal(t, head.Seq, r.heads[0].Seq)
	require.Equal(t, head.Hash, r.heads[0].Hash)

	_, err = e.RT.Post(ctx, e.Actor, "t", approval(t, out.Waits[0].RequestID), "approve")
	require.NoError(t, err)
	for out.Status != harness.StatusDone {
		out, err = e.RT.Resume(ctx, e.Actor, "t")
		require.NoError(t, err)
	}
	head, err = e.Store.Head(ctx, "t")
	require.NoError(t, err)
	last := r.heads[len(r.heads)-1]
	require.Equal(t, head.Seq, last.Seq)
	require.Equal(t, head.Hash, last.Hash)
}
