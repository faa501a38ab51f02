package audit_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

func readAll(t *testing.T, o *harnesstest.Observed, id string) []facts.Fact {
	t.Helper()
	var out []facts.Fact
	for f, err := range o.Store.Read(context.Background(), id, 1) {
		require.NoError(t, err)
		out = append(out, f)
	}
	return out
}

// relink renumbers facts and rebuilds their chain, as a forger would.
func relink(fs []facts.Fact) []facts.Fact {
	out := slices.Clone(fs)
	var prev facts.Hash
	for i := range out {
		out[i].Seq, out[i].Prev = uint64(i+1), prev
		prev = out[i].Hash()
	}
	return out
}

func seq2(fs []facts.Fact) func(func(facts.Fact, error) bool) {
	return func(yield func(facts.Fact, error) bool) {
		for _, f := range fs {
			if !yield(f, nil) {
				return
			}
		}
	}
}

func TestVerifyLogAcceptsWhatTheRuntimeWrote(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	require.Equal(t, harness.StatusDone, o.StartApproved("done").Status)
	require.NoError(t, audit.VerifyLog(ctx, o.Store, o.Actor, "done"))

	// An idle worker on a file that does not hold what it claims to have
	// written: unknown, open.
	o.Write = harnesstest.Idle
	require.NoError(t, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	require.Equal(t, harness.StatusParked, o.StartApproved("open").Status)
	require.NoError(t, audit.VerifyLog(ctx, o.Store, o.Actor, "open"))
	_, err := o.Post("open", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionRetry, By: "ana"}, "r")
	require.NoError(t, err)
	o.Write = harnesstest.Honest
	require.NoError(t, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	_, err = o.RT.Resume(ctx, o.Actor, "open")
	require.NoError(t, err)
	require.NoError(t, audit.VerifyLog(ctx, o.Store, o.Actor, "open"))

	audit, err := audit.Replay(ctx, o.Store, o.Actor, "open")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, audit.Status)
	var flagged []string
	for _, e := range audit.Entries {
		if e.Action != nil {
			flagged = append(flagged, e.Action.ActionID+": "+e.Action.Flag)
		}
	}
	require.Equal(t, []string{"1-c: success reported, nothing changed", "1-c.2: "}, flagged)
}

func TestVerifyRejectsSeededCorruptions(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	require.Equal(t, harness.StatusDone, o.StartApproved("t").Status)
	good := readAll(t, o, "t")
	require.NoError(t, audit.VerifyFacts(o.Actor, "t", seq2(good)))
	idx := func(kind facts.Kind) int {
		i := slices.IndexFunc(good, func(f facts.Fact) bool { return f.Kind == kind })
		require.GreaterOrEqual(t, i, 0, kind)
		return i
	}

	cases := map[string]struct {
		log    func() []facts.Fact
		seq    uint64
		reason string
	}{
		"an altered payload": {func() []facts.Fact {
			fs := slices.Clone(good)
			d, _ := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: "Set the cache TTL to 3000"})
			fs[0].Data = d.Data
			return fs
		}, 2, "chain is broken"},
		"a removed fact": {func() []facts.Fact {
			i := idx(facts.KindConfirmationAnswered)
			return slices.Delete(slices.Clone(good), i, i+1)
		}, uint64(idx(facts.KindConfirmationAnswered) + 2), "missing or out of order"},
		"a removed fact, chain rebuilt": {func() []facts.Fact {
			i := idx(facts.KindConfirmationAnswered)
			return relink(slices.Delete(slices.Clone(good), i, i+1))
		}, uint64(idx(facts.KindConfirmationAnswered) + 1), "never enabled tool/start"},
		"reordered facts": {func() []facts.Fact {
			fs := slices.Clone(good)
			i := idx(facts.KindConfirmationRequested)
			fs[i-1], fs[i] = fs[i], fs[i-1]
			return fs
		}, uint64(idx(facts.KindConfirmationRequested) + 1), "missing or out of order"},
		"reordered facts, chain rebuilt": {func() []facts.Fact {
			fs := slices.Clone(good)
			i := idx(facts.KindConfirmationRequested)
			fs[i-1], fs[i] = fs[i], fs[i-1]
			return relink(fs)
		}, uint64(idx(facts.KindConfirmationRequested)), "never enabled confirm/1-c"},
		"an injected fact whose cause the fold never enabled": {func() []facts.Fact {
			d, _ := facts.NewDraft(facts.KindModelTurn, "infer/turn/7", facts.ModelTurn{Turn: 7, Text: "I am done"})
			fs := slices.Clone(good)
			fs = slices.Insert(fs, 3, facts.Fact{Thread: "t", Kind: d.Kind, Cause: d.Cause, Data: d.Data, At: fs[2].At})
			return relink(fs)
		}, 4, "never enabled infer/turn/7"},
		"a worker's report substituted for the observation": {func() []facts.Fact {
			fs := slices.Clone(good)
			i := idx(facts.KindActionCompleted)
			c, _ := facts.Decode[facts.ActionCompleted](fs[i])
			c.Observation.Before = "sha256:what-the-worker-claimed-before"
			c.Observation.After = "sha256:what-the-worker-claimed"
			d, _ := facts.NewDraft(facts.KindActionCompleted, fs[i].Cause, c)
			fs[i].Data = d.Data
			return relink(fs)
		}, uint64(idx(facts.KindActionCompleted) + 1), "not the one action.started recorded"},
		"an effect state the observation does not give": {func() []facts.Fact {
			fs := slices.Clone(good)
			i := idx(facts.KindActionCompleted)
			c, _ := facts.Decode[facts.ActionCompleted](fs[i])
			c.EffectState = facts.EffectReported
			d, _ := facts.NewDraft(facts.KindActionCompleted, fs[i].Cause, c)
			fs[i].Data = d.Data
			return relink(fs)
		}, uint64(idx(facts.KindActionCompleted) + 1), "effect state reported"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := audit.VerifyFacts(o.Actor, "t", seq2(tc.log()))
			require.ErrorIs(t, err, audit.ErrUnverified)
			var ve *audit.VerifyError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, tc.seq, ve.Seq, err.Error())
			require.Contains(t, ve.Reason, tc.reason)
		})
	}
	t.Run("an approval forged under the confirmation's own cause", func(t *testing.T) {
		i := idx(facts.KindConfirmationRequested)
		d, _ := facts.NewDraft(facts.KindConfirmationAnswered, good[i].Cause, facts.ConfirmationAnswered{RequestID: "1-c", Approved: true})
		fs := slices.Insert(slices.Clone(good[:i+1]), i+1, facts.Fact{Thread: "t", Kind: d.Kind, Cause: d.Cause, Data: d.Data, At: good[i].At})
		err := audit.VerifyFacts(o.Actor, "t", seq2(relink(fs)))
		require.ErrorContains(t, err, "comes from outside")
	})
	t.Run("a completion posted as if from outside", func(t *testing.T) {
		i := idx(facts.KindActionCompleted)
		fs := slices.Clone(good[:i+1])
		fs[i].Cause = facts.IngressCause("forged")
		err := audit.VerifyFacts(o.Actor, "t", seq2(relink(fs)))
		require.ErrorContains(t, err, "only the runtime appends action.completed")
	})
	t.Run("a tail truncated where an append ended is a shorter log, and verifies as one", func(t *testing.T) {
		require.NoError(t, audit.VerifyFacts(o.Actor, "t", seq2(good[:len(good)-1])))
	})
	t.Run("a tail truncated inside an append is not: the completion's check is missing", func(t *testing.T) {
		err := audit.VerifyFacts(o.Actor, "t", seq2(good[:len(good)-2]))
		var ve *audit.VerifyError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, uint64(len(good)-2), ve.Seq)
		require.Contains(t, ve.Reason, "declared a check (file_equals) that was not recorded")
	})
}

func TestVerifyAcceptsRecoveryFromDoubt(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	out, err := o.RT.Start(ctx, o.Actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	o.Approve("t", out.Waits[0].RequestID, true)
	o.DiedMidAct("t", "ttl_seconds = 300\n")
	out, err = o.RT.Resume(ctx, o.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	_, err = o.Post("t", facts.KindEffectReconciled, facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionAccept, By: "ana"}, "r")
	require.NoError(t, err)
	_, err = o.RT.Resume(ctx, o.Actor, "t")
	require.NoError(t, err)
	require.NoError(t, audit.VerifyLog(ctx, o.Store, o.Actor, "t"))
}

// A log with a fact deleted, or two facts swapped, and its chain
// recomputed, is not one the runtime could have written: the verifier
// checks each call's lifecycle, that a runtime ran the first transition
// enabled, and that a thread starts with its message — naming the seq.
// (The thread is the tour's: 1 user.message, 2 system.configured, 3
// model.turn, 4 action.requested, 5 confirmation.requested, 6
// confirmation.answered, 7 action.started, 8 action.completed, 9
// check.recorded, 10 model.turn.)
func TestVerifyCatchesDeletionsAndSwaps(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	require.Equal(t, harness.StatusDone, o.StartApproved("t").Status)
	good := readAll(t, o, "t")
	want := []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn, facts.KindActionRequested,
		facts.KindConfirmationRequested, facts.KindConfirmationAnswered, facts.KindActionStarted, facts.KindActionCompleted,
		facts.KindCheckRecorded, facts.KindModelTurn}
	var kinds []facts.Kind
	for _, f := range good {
		kinds = append(kinds, f.Kind)
	}
	require.Equal(t, want, kinds)
	without := func(kind facts.Kind) []facts.Fact {
		i := slices.IndexFunc(good, func(f facts.Fact) bool { return f.Kind == kind })
		return relink(slices.Delete(slices.Clone(good), i, i+1))
	}
	swap := func(a, b uint64) []facts.Fact {
		fs := slices.Clone(good)
		fs[a-1], fs[b-1] = fs[b-1], fs[a-1]
		return relink(fs)
	}
	for _, tc := range []struct {
		name   string
		log    []facts.Fact
		seq    uint64
		reason string
	}{
		{"action.started dropped", without(facts.KindActionStarted), 7, "no action.started precedes its completion"},
		{"check.recorded of an action that declared one dropped", without(facts.KindCheckRecorded), 9, "declared a check (file_equals) that was not recorded"},
		{"system.configured dropped", without(facts.KindSystemConfigured), 2, "out of order: infer/turn/1 was enabled here, but system/configure comes first"},
		{"seq 1 and 2 swapped", swap(1, 2), 1, "a thread starts with the message that started it"},
		{"seq 2 and 3 swapped", swap(2, 3), 2, "out of order: infer/turn/1 was enabled here, but system/configure comes first"},
		{"seq 8 and 9 swapped: the check before its completion", swap(8, 9), 8, "a check of action 1-c before its completion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := audit.VerifyFacts(o.Actor, "t", seq2(tc.log))
			var ve *audit.VerifyError
			require.ErrorAs(t, err, &ve, "%v", err)
			require.Equal(t, tc.seq, ve.Seq, err.Error())
			require.Contains(t, ve.Reason, tc.reason)
		})
	}
}

// A completion appended after its action was recorded as interrupted is
// what a second runtime that did not wait for the first leaves: the
// verifier refuses it.
func TestVerifyRefusesACompletionAfterAnInterruption(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	out, err := o.RT.Start(ctx, o.Actor, "t", "Set the cache TTL to 300")
	require.NoError(t, err)
	o.Approve("t", out.Waits[0].RequestID, true)
	o.DiedMidAct("t", "ttl_seconds = 300\n")
	out, err = o.RT.Resume(ctx, o.Actor, "t")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status, "found in doubt: parked on reconcile")
	require.NoError(t, audit.VerifyLog(ctx, o.Store, o.Actor, "t"))

	late, err := facts.NewDraft(facts.KindActionCompleted, "tool/execute/1-c", facts.ActionCompleted{ActionID: "1-c",
		Report: facts.Report{Status: facts.StatusSucceeded}, EffectState: facts.EffectReported})
	require.NoError(t, err)
	h, err := o.Store.Append(ctx, "t", out.Seq, late)
	require.NoError(t, err)
	err = audit.VerifyLog(ctx, o.Store, o.Actor, "t")
	var ve *audit.VerifyError
	require.ErrorAs(t, err, &ve, "%v", err)
	require.Equal(t, h.Seq, ve.Seq)
	require.Contains(t, ve.Reason, "completed after it was recorded as interrupted")
}

// A write of what the file already holds changes nothing and its check
// passes: its effect is none, the thread goes on, and the record verifies
// — but only with the passing check beside it. A log written before this
// rule (unknown, then a person's reconciliation) verifies as it did.
func TestVerifyAnIdenticalWrite(t *testing.T) {
	o := harnesstest.NewObserved(t, harnesstest.WriteScript)
	require.NoError(t, os.WriteFile(filepath.Join(o.Root, "cache.toml"), []byte("ttl_seconds = 300\n"), 0o644))
	require.Equal(t, harness.StatusDone, o.StartApproved("same").Status, "nobody is asked to settle it")
	require.Equal(t, facts.EffectNone, o.Completion("same").EffectState)
	good := readAll(t, o, "same")
	require.NoError(t, audit.VerifyFacts(o.Actor, "same", seq2(good)))
	i := slices.IndexFunc(good, func(f facts.Fact) bool { return f.Kind == facts.KindCheckRecorded })
	require.Greater(t, i, 0)

	t.Run("with its check turned to a fail", func(t *testing.T) {
		fs := slices.Clone(good)
		c, _ := facts.Decode[facts.CheckRecorded](fs[i])
		c.Verdict = facts.VerdictFail
		d, _ := facts.NewDraft(facts.KindCheckRecorded, fs[i].Cause, c)
		fs[i].Data = d.Data
		err := audit.VerifyFacts(o.Actor, "same", seq2(relink(fs)))
		require.ErrorContains(t, err, "no passing check was recorded with it")
	})
	t.Run("cut before its check", func(t *testing.T) {
		err := audit.VerifyFacts(o.Actor, "same", seq2(good[:i]))
		require.ErrorContains(t, err, "needs its check to pass")
	})
	t.Run("as written before: unknown, open until reconciled", func(t *testing.T) {
		fs := slices.Clone(good[:i+1])
		c, _ := facts.Decode[facts.ActionCompleted](fs[i-1])
		require.Equal(t, facts.KindActionCompleted, fs[i-1].Kind)
		c.EffectState = facts.EffectUnknown
		d, _ := facts.NewDraft(facts.KindActionCompleted, fs[i-1].Cause, c)
		fs[i-1].Data = d.Data
		r, _ := facts.NewDraft(facts.KindEffectReconciled, facts.IngressCause("reconcile-1-c"), facts.EffectReconciled{ActionID: "1-c", Decision: facts.DecisionAccept, By: "ana"})
		fs = append(fs, facts.Fact{Thread: "same", Kind: r.Kind, Cause: r.Cause, Data: r.Data, At: fs[i].At})
		require.NoError(t, audit.VerifyFacts(o.Actor, "same", seq2(relink(fs))))
	})
}
