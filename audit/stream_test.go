package audit_test

import (
	"context"
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

// told is what ReplayEach tells of a thread: every entry, in order.
func told(t *testing.T, store thread.Store, actor harness.Actor, id string) (audit.Audit, []audit.AuditEntry) {
	t.Helper()
	var entries []audit.AuditEntry
	a, err := audit.ReplayEach(ctx, store, actor, id, func(e audit.AuditEntry) error {
		entries = append(entries, e)
		return nil
	})
	require.NoError(t, err)
	return a, entries
}

// requireTellsAsReplay checks that ReplayEach tells thread id as Replay
// does: the same entries, in the same order, each action's records with
// its completion (a write's check recorded after it), and the same
// status.
func requireTellsAsReplay(t *testing.T, store thread.Store, actor harness.Actor, id string) {
	t.Helper()
	want, err := audit.Replay(ctx, store, actor, id)
	require.NoError(t, err)
	got, entries := told(t, store, actor, id)
	require.Equal(t, want.Entries, entries)
	require.Equal(t, len(want.Entries), got.Facts)
	require.Nil(t, got.Entries, "told, not kept")
	got.Entries = want.Entries
	require.Equal(t, want, got)
}

// Actions with checks (a write that is checked, one that did nothing and
// was retried after a person's word) are told as Replay tells them.
func TestReplayEachTellsWhatReplayDoes(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	require.Equal(t, harness.StatusDone, o.StartApproved("done").Status)
	o.Write = harnesstest.Idle
	require.NoError(t, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	require.Equal(t, harness.StatusParked, o.StartApproved("open").Status)
	requireTellsAsReplay(t, o.Store, o.Actor, "open") // parked on its doubt
	_, err := o.Post("open", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionRetry, By: "ana"}, "r")
	require.NoError(t, err)
	o.Write = harnesstest.Honest
	require.NoError(t, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	_, err = o.RT.Resume(ctx, o.Actor, "open")
	require.NoError(t, err)

	for _, id := range []string{"done", "open"} {
		requireTellsAsReplay(t, o.Store, o.Actor, id)
		_, entries := told(t, o.Store, o.Actor, id)
		checked := 0
		for _, e := range entries {
			if e.Action != nil && e.Action.Check != nil {
				checked++
			}
		}
		require.NotZero(t, checked, "%s: a completion is told with the check recorded after it", id)
	}

	_, err = audit.ReplayEach(ctx, o.Store, o.Actor, "nobody", func(audit.AuditEntry) error { return nil })
	require.ErrorIs(t, err, harness.ErrUnknownThread)
}

// A tree is told as ReplayTree tells it: the parent's entries as they
// come, its children's audits kept.
func TestReplayTreeEachTellsWhatReplayTreeDoes(t *testing.T) {
	e := harnesstest.NewDelegating(t, harnesstest.DelegateScript)
	th := e.Thread("p")
	_, err := th.Start(context.Background(), "Set the TTL through a child")
	require.NoError(t, err)
	_, err = drive.Answer(ctx, th, drive.Reply{Kind: "confirmation", Approved: true, By: "ana"})
	require.NoError(t, err)
	st, err := drive.Drive(ctx, th, drive.Options{})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status)

	want, err := audit.ReplayTree(ctx, e.Store, e.Actor, "p")
	require.NoError(t, err)
	require.Len(t, want.Children, 1)
	var entries []audit.AuditEntry
	got, err := audit.ReplayTreeEach(ctx, e.Store, e.Actor, "p", func(e audit.AuditEntry) error {
		entries = append(entries, e)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, want.Entries, entries)
	got.Entries = want.Entries
	require.Equal(t, want, got)
	requireTellsAsReplay(t, e.Store, e.Actor, "p.1-d1")
}
