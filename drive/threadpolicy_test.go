package drive_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// The policy a thread was set to is a fact of the thread: a later Drive
// that follows it applies it, whatever Approval its caller passes.
func TestDriveFollowsTheThreadsPolicy(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	out, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)

	writes, err := drive.NewApproval("writes", nil, []string{"run_command:rm *"})
	require.NoError(t, err)
	p, err := drive.SetPolicy(ctx, e.Thread("t"), writes.Policy("ana"))
	require.NoError(t, err)
	require.False(t, p.Duplicate)
	again, err := drive.SetPolicy(ctx, e.Thread("t"), writes.Policy("bob"))
	require.NoError(t, err)
	require.True(t, again.Duplicate, "the same policy again appends nothing")
	require.Equal(t, p.Seq, again.Seq)

	got, seq, ok, err := drive.ThreadPolicy(ctx, e.Thread("t"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, p.Seq, seq)
	require.Equal(t, facts.PolicySet{Approve: "writes", Deny: []string{"run_command:rm *"}, By: "ana"}, got)

	// The caller passes no policy at all: the thread's approves the write.
	st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{FollowPolicy: true})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.EqualValues(t, 1, e.Runs.Load())
	ans := e.Last("t", facts.KindConfirmationAnswered)
	a, err := facts.Decode[facts.ConfirmationAnswered](ans)
	require.NoError(t, err)
	require.Equal(t, drive.PolicyBy, a.By)
	require.Equal(t, "approve writes", a.Reason)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t"))
}

// A thread with no policy of its own is decided by the caller's Approval;
// one without FollowPolicy ignores the thread's.
func TestDriveWithoutAThreadPolicy(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	_, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
	require.NoError(t, err)
	st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{FollowPolicy: true})
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status, "nothing decides: a person is asked")

	all, err := drive.NewApproval("all", nil, nil)
	require.NoError(t, err)
	_, err = drive.SetPolicy(ctx, e.Thread("t"), facts.PolicySet{By: "ana"}) // ask for everything
	require.NoError(t, err)
	st, err = drive.Drive(ctx, e.Thread("t"), drive.Options{Approval: all, FollowPolicy: true})
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, st.Status, "the thread's own policy asks")
	st, err = drive.Drive(ctx, e.Thread("t"), drive.Options{Approval: all})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
}

// A policy that denies tells the model, and the thread goes on: the next
// model turn sees the denial.
func TestAPolicyDenialGoesOn(t *testing.T) {
	e := harnesstest.New(t, harnesstest.ToolScript)
	_, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
	require.NoError(t, err)
	deny, err := drive.NewApproval("all", nil, []string{"write_file:cache.toml"})
	require.NoError(t, err)
	st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{Approval: deny})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)
	require.Zero(t, e.Runs.Load(), "the write never ran")
	require.Equal(t, 2, e.Model.Calls(), "the model took another turn")
	last := e.Model.Last().Messages
	require.Contains(t, last[len(last)-1].Text, "Denied by policy: this tool call did not run. Reason: deny write_file:cache.toml")
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t"))
}

// A person's denial: "no, and tell the model" goes on to a model turn;
// "deny and stop" ends the thread there, stopped (not done).
func TestDenials(t *testing.T) {
	for _, tc := range []struct {
		then   facts.AfterDenial
		turns  int
		status harness.Status
	}{
		{facts.DenyContinue, 2, harness.StatusDone},
		{facts.DenyStop, 1, harness.StatusStopped},
	} {
		t.Run(string(tc.then), func(t *testing.T) {
			e := harnesstest.New(t, harnesstest.ToolScript)
			_, err := e.RT.Start(ctx, e.Actor, "t", "Set the TTL")
			require.NoError(t, err)
			st, err := drive.Drive(ctx, e.Thread("t"), drive.Options{Ask: func(ctx context.Context, th *harness.Thread, waits []drive.Pending) (int, error) {
				d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: waits[0].RequestID, By: "ana", Reason: "use 120", Then: tc.then})
				require.NoError(t, err)
				_, err = drive.PostAnswer(ctx, th, d, drive.AnswerKey(d.Kind, waits[0].RequestID))
				return 1, err
			}})
			require.NoError(t, err)
			require.Equal(t, tc.status, st.Status)
			require.Equal(t, tc.turns, e.Model.Calls())
			require.Zero(t, e.Runs.Load())
			require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Actor, "t"))
		})
	}
}

func TestAlways(t *testing.T) {
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"run_command", `{"command":"go test ./..."}`, "run_command:go test ./..."},
		{"write_file", `{"path":"docs/guide/a.md","content":"x"}`, "write_file:docs/guide/*"},
		{"write_file", `{"path":"./cache.toml","content":"x"}`, "write_file:cache.toml"},
		{"write_file", `{"path":"/ws/docs/a.md"}`, "write_file:docs/*"},
		{"list_files", `{"pattern":"src/*.go"}`, "list_files:src/*.go"},
		{"ask_nothing", `{}`, "ask_nothing"},
	} {
		got := drive.Always("/ws", tc.tool, tc.args)
		require.Equal(t, tc.want, got.String())
		if !strings.HasPrefix(tc.args, `{"path":"/`) {
			require.True(t, got.Match(tc.tool, tc.args), "%s approves the call it came from", got)
		}
	}
	// A path that leaves the workspace: the pattern matches nothing.
	p := drive.Always("/ws", "write_file", `{"path":"../x"}`)
	require.False(t, p.Match("write_file", `{"path":"../x"}`))
}
