package rerun_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rerun"
)

// Each way a turn can diverge is named, at its turn, and the rerun stops
// there having run nothing.
func TestDivergences(t *testing.T) {
	const read = `{"id": "r", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}`
	const list = `{"id": "l", "name": "list_files", "args": "{}"}`
	for _, c := range []struct {
		name, script string
		turn         int
		why          string
	}{
		{"an extra call", `{"tool_calls": [` + read + `, ` + list + `]}`, 1, facts.DivergedExtraCall},
		{"an earlier stop", `{"tool_calls": [` + read + `]}
{"text": "Nothing to change."}`, 2, facts.DivergedEarlierStop},
		{"a question", `{"question": {"text": "Which TTL?"}}`, 1, facts.DivergedQuestion},
		{"a call where the original answered", scriptA[:len(scriptA)-len(`{"text": "Done."}`)] + `{"tool_calls": [` + read + `]}`, 4, facts.DivergedExtraCall},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := harnesstest.NewStock(t, scriptA)
			require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
			rt, actor, _, ran := rerunOn(t, e, c.script)
			rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
			require.NoError(t, err)
			require.Equal(t, rerun.VerdictDiverged, rep.Verdict)
			require.Equal(t, c.turn, rep.DivergedAt)
			require.Equal(t, c.why, rep.Divergence.Why, rep.Divergence.Detail)
			require.Equal(t, harness.StatusStopped, rep.Outcome)
			require.Equal(t, int64(0), ran.Load())
			require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))
		})
	}
}

// A thread with a missing call: the original made two calls in a turn,
// the rerun one.
func TestDivergesOnAMissingCall(t *testing.T) {
	const two = `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}, {"id": "c", "name": "read_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"text": "Done."}`
	e := harnesstest.NewStock(t, two)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	rt, actor, _, ran := rerunOn(t, e, `{"tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}]}`)
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, 1, rep.DivergedAt)
	require.Equal(t, facts.DivergedMissingCall, rep.Divergence.Why)
	require.Equal(t, int64(0), ran.Load())
}

// A call the original never completed (it waits for a person) is not
// served: the rerun diverges there, and nothing runs.
func TestDivergesWhereTheOriginalWaits(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	out, err := e.Thread("t").Start(ctx, "Set the TTL")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	rt, actor, _, ran := rerunOn(t, e, scriptB)
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, 2, rep.DivergedAt)
	require.Equal(t, facts.DivergedUnserved, rep.Divergence.Why)
	require.Equal(t, 1, rep.Served)
	require.Equal(t, int64(0), ran.Load())
}

// A delegation is never served (its result is a child's report, not a
// recorded completion) and never spawned by a rerun that stops: the
// rerun diverges there, and no child runs.
func TestADelegationIsNotServed(t *testing.T) {
	const script = `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Note the TTL\"}"}]}
{"thread": "1-d1", "text": "Noted."}
{"text": "Done."}`
	e := harnesstest.NewStock(t, script)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	rt, actor, cm, ran := rerunOn(t, e, script)
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, 1, rep.DivergedAt)
	require.Equal(t, facts.DivergedUnserved, rep.Divergence.Why)
	require.Equal(t, int64(1), cm.n.Load(), "no child was asked anything")
	require.Equal(t, int64(0), ran.Load())
	for _, f := range logOf(t, e, rep.Rerun) {
		require.NotEqual(t, facts.KindChildSpawned, f.Kind)
	}
}
