package audit_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/thread"
)

// requireOnePassAsTwo checks that VerifyReplayTreeEach tells thread id as
// ReplayTreeEach does — the same entries in the same order, the same
// tree — and says of it what VerifyLog says; it returns that.
func requireOnePassAsTwo(t *testing.T, store thread.Store, actor harness.Actor, id string) error {
	t.Helper()
	wantVerify := audit.VerifyLog(ctx, store, actor, id)
	var want, got []audit.AuditEntry
	wantTree, wantErr := audit.ReplayTreeEach(ctx, store, actor, id, func(e audit.AuditEntry) error {
		want = append(want, e)
		return nil
	})
	gotTree, verify, err := audit.VerifyReplayTreeEach(ctx, store, actor, id, func(e audit.AuditEntry) error {
		got = append(got, e)
		return nil
	})
	require.Equal(t, errText(wantErr), errText(err), "the replay's error")
	require.Equal(t, errText(wantVerify), errText(verify), "what the verifier says")
	require.Equal(t, want, got, "the entries told")
	require.Equal(t, wantTree, gotTree)
	return verify
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// One reading of a log verifies and tells it as VerifyLog and
// ReplayTreeEach do one after the other: a thread done, one recovered
// from doubt, a tree, a long parked thread, a thread with snapshots, a
// thread that fails to verify part way and goes on after, and one
// nobody wrote.
func TestVerifyReplayTreeEachIsVerifyLogAndReplayTreeEach(t *testing.T) {
	t.Run("done and retried", func(t *testing.T) {
		o := harnesstest.NewObserved(t, harnesstest.WriteScript)
		require.Equal(t, harness.StatusDone, o.StartApproved("done").Status)
		o.Write = harnesstest.Idle
		require.NoError(t, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
		require.Equal(t, harness.StatusParked, o.StartApproved("open").Status)
		require.NoError(t, requireOnePassAsTwo(t, o.Store, o.Actor, "open"))
		_, err := o.Post("open", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionRetry, By: "ana"}, "r")
		require.NoError(t, err)
		o.Write = harnesstest.Honest
		require.NoError(t, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
		_, err = o.RT.Resume(ctx, o.Actor, "open")
		require.NoError(t, err)
		for _, id := range []string{"done", "open"} {
			require.NoError(t, requireOnePassAsTwo(t, o.Store, o.Actor, id))
		}
		require.Error(t, requireOnePassAsTwo(t, o.Store, o.Actor, "nobody"))
	})
	t.Run("a tree", func(t *testing.T) {
		e := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
		th := e.Thread("p")
		_, err := th.Start(ctx, "Set the TTL through a child")
		require.NoError(t, err)
		_, err = drive.Answer(ctx, th, drive.Reply{Kind: "confirmation", Approved: true, By: "ana"})
		require.NoError(t, err)
		st, err := drive.Drive(ctx, th, drive.Options{})
		require.NoError(t, err)
		require.Equal(t, harness.StatusDone, st.Status)
		require.NoError(t, requireOnePassAsTwo(t, e.Store, e.Actor, "p"))
		require.NoError(t, requireOnePassAsTwo(t, e.Store, e.Actor, "p.1-d1"))
	})
	t.Run("long and parked", func(t *testing.T) {
		s, err := thread.OpenPebble(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		harnesstest.Parked{Facts: 3000, InputTokens: 1800}.Append(t, s, "long")
		require.NoError(t, requireOnePassAsTwo(t, s, harnesstest.LoopActor(t), "long"))
	})
	t.Run("snapshots", func(t *testing.T) {
		e := snapshotted(t)
		require.NoError(t, requireOnePassAsTwo(t, e.Store, e.Actor, "t"))
	})
	t.Run("fails part way", func(t *testing.T) {
		o := harnesstest.NewObserved(t, harnesstest.WriteScript)
		out, err := o.RT.Start(ctx, o.Actor, "t", "Set the cache TTL to 300")
		require.NoError(t, err)
		o.Approve("t", out.Waits[0].RequestID, true)
		o.DiedMidAct("t", "ttl_seconds = 300\n")
		out, err = o.RT.Resume(ctx, o.Actor, "t")
		require.NoError(t, err)
		late, err := facts.NewDraft(facts.KindActionCompleted, "tool/execute/1-c", facts.ActionCompleted{ActionID: "1-c",
			Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectReported})
		require.NoError(t, err)
		more, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause("more"), facts.UserMessage{Text: "and then?"})
		require.NoError(t, err)
		_, err = o.Store.Append(ctx, "t", out.Seq, late, more)
		require.NoError(t, err)
		var ve *audit.VerifyError
		require.ErrorAs(t, requireOnePassAsTwo(t, o.Store, o.Actor, "t"), &ve)
		require.Equal(t, out.Seq+1, ve.Seq, "the late completion")
	})
}
