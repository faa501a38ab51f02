package harness_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// What a thread records of itself — its title, its workspace, its latest
// policy, the answers posted to it — is in its view, read by a new Thread
// from the snapshot without a read of the log before it, and the same as
// a fold of the whole log says.
func TestViewOwnFromSnapshot(t *testing.T) {
	e := harnesstest.New(t, compactScript, harness.WithWorkspace("host:/work/ws"))
	out, err := e.RT.Start(ctx, e.Actor, "t", "Read a and b, then write c.")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	th := e.RT.Thread(e.Actor, "t")
	policy := func(mode string) facts.Draft {
		d, err := facts.NewDraft(facts.KindPolicySet, "", facts.PolicySet{Approve: mode, Allow: []string{"read_file"}, By: "ana"})
		require.NoError(t, err)
		return d
	}
	_, err = th.Post(ctx, policy("all"), "policy-a")
	require.NoError(t, err)
	second, err := th.Post(ctx, policy("ask"), "policy-b")
	require.NoError(t, err)
	answered, err := th.Post(ctx, approval(t, out.Waits[0].RequestID), "approve")
	require.NoError(t, err)
	out, err = th.Resume(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	snap, err := e.Store.LatestSnapshot(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, out.Seq, snap.Seq)

	r := &reading{PebbleStore: e.Store}
	rt, err := harness.NewRuntime(r, e.RT.Services, e.RT.Config)
	require.NoError(t, err)
	v, err := rt.View(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, []uint64{snap.Seq, second.Seq, snap.Seq + 1}, r.reads(),
		"the snapshot's fact, the policy it names (checked against the log), then the facts after it")

	title, err := v.Own.Title()
	require.NoError(t, err)
	require.Equal(t, "Read a and b, then write c.", title)
	ws, err := v.Own.Workspace()
	require.NoError(t, err)
	require.Equal(t, "host:/work/ws", ws)
	p, seq, ok, err := v.Own.Policy()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, second.Seq, seq, "the latest policy decides")
	require.Equal(t, "ask", p.Approve)
	f, ok := v.Own.LastAnswer(facts.KindConfirmationAnswered)
	require.True(t, ok, "the runtime's facts since do not count")
	require.Equal(t, answered.Seq, f.Seq)
	_, ok = v.Own.LastAnswer(facts.KindUserMessage)
	require.False(t, ok, "a policy and an answer were posted after the task")
	_, ok = v.Own.LastAnswer(facts.KindPolicySet)
	require.False(t, ok, "not an answer")

	// A fold of every fact says the same.
	brt, err := harness.NewRuntime(blind{e.Store}, e.RT.Services, e.RT.Config)
	require.NoError(t, err)
	whole, err := brt.View(ctx, e.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, whole.Own, v.Own)

	// A message posted now hides the answer, and is itself the last
	// user.message.
	msg, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: "Thanks"})
	require.NoError(t, err)
	posted, err := rt.Thread(e.Actor, "t").Post(ctx, msg, "thanks")
	require.NoError(t, err)
	v, err = rt.View(ctx, e.Actor, "t")
	require.NoError(t, err)
	_, ok = v.Own.LastAnswer(facts.KindConfirmationAnswered)
	require.False(t, ok, "something else was posted since")
	f, ok = v.Own.LastAnswer(facts.KindUserMessage)
	require.True(t, ok)
	require.Equal(t, posted.Seq, f.Seq)
}

// A thread that records no task and no configuration says so, with no
// error.
func TestViewOwnOfABareThread(t *testing.T) {
	e := harnesstest.New(t, compactScript)
	d, err := facts.NewDraft(facts.KindPolicySet, facts.IngressCause("policy"), facts.PolicySet{By: "ana"})
	require.NoError(t, err)
	_, err = e.Store.Append(ctx, "t", 0, d)
	require.NoError(t, err)
	v, err := e.RT.View(ctx, e.Actor, "t")
	require.NoError(t, err)
	title, err := v.Own.Title()
	require.NoError(t, err)
	require.Empty(t, title, "its first fact is no task")
	ws, err := v.Own.Workspace()
	require.NoError(t, err)
	require.Empty(t, ws, "never configured")
	_, seq, ok, err := v.Own.Policy()
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 1, seq)
}
