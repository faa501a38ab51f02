package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/stock"
)

// A person's "always" is part of the reply: the rule is added to the
// thread's own policy before the approval is posted, and the approval
// says so; one that comes with anything but an approval changes nothing.
func TestAnswerPendingWithAnAlwaysRule(t *testing.T) {
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	s := stock.SessionOf(e.Store, e.Stock)
	th := e.Thread("t")
	_, err := th.Start(ctx, "go")
	require.NoError(t, err)
	st, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	w := st.Waits[0]
	require.Equal(t, "write_file", w.Tool)

	// A denial with a rule is refused before anything is recorded.
	_, err = s.AnswerPending(ctx, th, w, drive.Reply{Kind: fold.WaitConfirmation, By: "ana", Always: "write_file"})
	require.ErrorIs(t, err, drive.ErrBadReply)
	_, _, ok, err := drive.ThreadPolicy(ctx, th)
	require.NoError(t, err)
	require.False(t, ok, "no policy recorded")

	rule := drive.Always(e.Root, w.Tool, w.Args).String()
	require.Equal(t, "write_file:cache.toml", rule)
	p, err := s.AnswerPending(ctx, th, w, drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "ana", Always: rule})
	require.NoError(t, err)
	require.False(t, p.Duplicate)
	own, _, ok, err := drive.ThreadPolicy(ctx, th)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []string{rule}, own.Allow)
	require.Equal(t, "ana", own.By)
	ans, err := facts.Decode[facts.ConfirmationAnswered](e.Watched[len(e.Watched)-1])
	require.NoError(t, err)
	require.True(t, ans.Approved)
	require.Equal(t, "always: "+rule, ans.Reason)
	require.Equal(t, w.RequestID, ans.RequestID)
	require.Equal(t, facts.KindPolicySet, e.Watched[len(e.Watched)-2].Kind, "the rule first")
}
