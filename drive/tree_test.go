package drive_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// A parent whose child waits for a confirmation stands where its tree
// does: parked on the child's request, which names the child; answering
// it through the parent posts it to the child, and Drive takes the tree
// to its end.
func TestTreeInspectAnswerDrive(t *testing.T) {
	ctx := context.Background()
	e := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
	th := e.Thread("p")
	_, err := th.Start(ctx, "Set the TTL through a child")
	require.NoError(t, err)

	st, err := drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status)
	require.Len(t, st.Waits, 1)
	w := st.Waits[0]
	require.Equal(t, fold.WaitConfirmation, w.Kind)
	require.Equal(t, "1-w", w.RequestID)
	require.Equal(t, "p.1-d1", w.Thread)
	require.Equal(t, "write_file", w.Tool, "the child's reading says what its request asks")
	require.Equal(t, "p.1-d1/1-w", drive.Ref(w))
	require.Len(t, st.Children, 1)
	require.Equal(t, harness.StatusParked, st.Children[0].Status)

	ans, err := drive.Answer(ctx, th, drive.Reply{Kind: fold.WaitConfirmation, Approved: true, By: "ana"})
	require.NoError(t, err)
	require.False(t, ans.Posted.Duplicate)
	require.Equal(t, facts.KindConfirmationAnswered, harnesstest.LastFact(t, e.Store, "p.1-d1").Kind, "posted to the child")

	st, err = drive.Inspect(ctx, th)
	require.NoError(t, err)
	require.Equal(t, harness.StatusResumable, st.Status, "a resume of the parent runs the child on")
	st, err = drive.Drive(ctx, th, drive.Options{})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.Equal(t, int64(1), e.Runs.Load())
}

// An approval policy answers a child's confirmations as it answers the
// parent's: Drive runs the tree to its end without asking anyone.
func TestTreeApprovalPolicyAnswersTheChild(t *testing.T) {
	ctx := context.Background()
	e := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
	th := e.Thread("p")
	_, err := th.Start(ctx, "Set the TTL through a child")
	require.NoError(t, err)
	writes, err := drive.NewApproval("writes", nil, nil)
	require.NoError(t, err)
	asked := 0
	st, err := drive.Drive(ctx, th, drive.Options{Approval: writes, Ask: approveAll(e, &asked)})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.Zero(t, asked)
	require.Equal(t, int64(1), e.Runs.Load())
	ans := harnesstest.LastFact(t, e.Store, "p")
	require.Equal(t, facts.KindModelTurn, ans.Kind)
}

// A front end's Ask is given the tree's requests and posts each to the
// thread it names (Target).
func TestTreeAskPostsToTheChild(t *testing.T) {
	ctx := context.Background()
	e := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
	th := e.Thread("p")
	_, err := th.Start(ctx, "Set the TTL through a child")
	require.NoError(t, err)
	var asked []string
	st, err := drive.Drive(ctx, th, drive.Options{Ask: func(ctx context.Context, th *harness.Thread, waits []drive.Pending) (int, error) {
		for _, w := range waits {
			asked = append(asked, drive.Ref(w))
			to, err := drive.Target(ctx, th, w)
			if err != nil {
				return 0, err
			}
			d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: w.RequestID, Approved: true, By: "ana", Digest: w.Digest})
			if err != nil {
				return 0, err
			}
			if _, err := drive.PostAnswer(ctx, to, d, drive.AnswerKey(d.Kind, w.RequestID)); err != nil {
				return 0, err
			}
		}
		return len(waits), nil
	}})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.Equal(t, []string{"p.1-d1/1-w"}, asked)
}
