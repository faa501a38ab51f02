package stock_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/stock"
)

// A session forks a thread under the default id, or the one named, and
// says how the fork stands; a seq the thread has not is a SeqError
// naming its last seq, and an id taken is refused with nothing written.
func TestSessionFork(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	out, err := e.RT.Start(ctx, e.Stock.Actor, "t", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	s := stock.SessionOf(e.Store, e.Stock)

	h, st, err := s.Fork(ctx, "t", out.Seq, "")
	require.NoError(t, err)
	require.Equal(t, out.Seq+1, h.Seq)
	require.Equal(t, rewind.ForkID("t", out.Seq), h.Thread)
	require.Equal(t, h.Thread, st.Thread)
	require.Equal(t, harness.StatusParked, st.Status, "the fork waits for what the origin waited for")

	_, _, err = s.Fork(ctx, "t", out.Seq, h.Thread)
	require.ErrorIs(t, err, harness.ErrThreadExists)

	for _, at := range []uint64{0, out.Seq + 1} {
		_, _, err = s.Fork(ctx, "t", at, "x")
		var seq *rewind.SeqError
		require.True(t, errors.As(err, &seq), "%v", err)
		require.Equal(t, rewind.SeqError{Thread: "t", Seq: at, Last: out.Seq}, *seq)
		require.ErrorContains(t, err, "is not a seq of the thread")
	}
	_, err = e.Store.Head(ctx, "x")
	require.Error(t, err, "nothing was forked")
}
