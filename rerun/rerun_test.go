package rerun_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// scriptA reads notes.txt, sets the TTL, notes it, and is done.
const scriptA = `{"text": "Reading.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}]}
{"text": "Setting.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Noting.", "tool_calls": [{"id": "n", "name": "write_file", "args": "{\"path\":\"notes.txt\",\"content\":\"ttl is 300\\n\"}"}]}
{"text": "Done."}`

// scriptB makes the same first two turns — the arguments spelled
// otherwise, the same JSON — then reads a file where A wrote one.
const scriptB = `{"text": "Let me read.", "tool_calls": [{"id": "x1", "name": "read_file", "args": "{ \"path\": \"notes.txt\" }"}]}
{"text": "Now set.", "tool_calls": [{"id": "x2", "name": "write_file", "args": "{\"content\":\"ttl_seconds = 300\\n\",\"path\":\"cache.toml\"}"}]}
{"text": "Check it.", "tool_calls": [{"id": "x3", "name": "read_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"text": "Done."}`

// counting wraps a tool and counts the calls it runs.
type counting struct {
	harness.ToolAdapter
	n *atomic.Int64
}

func (c counting) Execute(ctx context.Context, req action.Request) (facts.Report, error) {
	c.n.Add(1)
	return c.ToolAdapter.Execute(ctx, req)
}

func (c counting) Confirm() bool {
	if cf, ok := c.ToolAdapter.(interface{ Confirm() bool }); ok {
		return cf.Confirm()
	}
	return c.Capability() != action.Read
}

// countingModel counts the turns it is asked.
type countingModel struct {
	model.Model
	n atomic.Int64
}

func (m *countingModel) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	m.n.Add(1)
	return m.Model.Turn(ctx, req)
}

// rerunOn returns a runtime on e's store and workspace, and its actor,
// whose model follows script and whose tools count what they run; opts
// configure the actor further.
func rerunOn(t testing.TB, e *harnesstest.Stock, script string, opts ...harness.Option) (*harness.Runtime, harness.Actor, *countingModel, *atomic.Int64) {
	t.Helper()
	return rerunIn(t, e.Stock.Place, e.Store, script, opts...)
}

// rerunIn is rerunOn of the workspace at p with its store.
func rerunIn(t testing.TB, p stock.Place, store thread.Store, script string, opts ...harness.Option) (*harness.Runtime, harness.Actor, *countingModel, *atomic.Int64) {
	t.Helper()
	m, err := model.ParseScript("b", []byte(script))
	require.NoError(t, err)
	cm := &countingModel{Model: m}
	cfg, err := harness.NewConfig(append([]harness.Option{harness.WithModelName("scripted:b"), harness.WithModelBackoff(0)}, opts...)...)
	require.NoError(t, err)
	st, err := stock.NewStock(p, cfg)
	require.NoError(t, err)
	svc, err := st.Services(cm, stock.BlobsOf(store))
	require.NoError(t, err)
	ran := &atomic.Int64{}
	var tools []harness.ToolAdapter
	for _, s := range svc.Tools.Schemas() {
		tl, ok := svc.Tools.Lookup(s.Name)
		require.True(t, ok)
		tools = append(tools, counting{tl, ran})
	}
	svc.Tools, err = harness.NewToolbox(tools...)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(t, err)
	return rt, st.Actor, cm, ran
}

func TestRerunDivergesAtTurnThree(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	before := logOf(t, e, "t")

	rt, actor, cm, ran := rerunOn(t, e, scriptB)
	rep, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)

	require.Equal(t, rerun.VerdictDiverged, rep.Verdict)
	require.Equal(t, 3, rep.DivergedAt)
	require.Equal(t, facts.DivergedTool, rep.Divergence.Why)
	require.Contains(t, rep.Divergence.Detail, "read_file where the original called write_file")
	require.Equal(t, 2, rep.Served)
	require.Equal(t, int64(0), ran.Load(), "nothing ran: turns 1 and 2 were served, turn 3 stopped")
	require.Equal(t, int64(3), cm.n.Load(), "the new model was asked three turns")
	require.Equal(t, harness.StatusStopped, rep.Outcome)
	require.Equal(t, []string{"served", "served", "diverged", "unreached"}, verdicts(rep))
	// The write of turn 2 was approved by a person in the original: the
	// rerun would have needed it.
	require.Len(t, rep.Approvals, 1)
	require.Equal(t, "served", rep.Approvals[0].Why)

	// The rerun names its sources and verifies; the original is unchanged.
	log := logOf(t, e, rep.Rerun)
	var served []uint64
	for _, f := range log {
		require.NotEqual(t, facts.KindActionStarted, f.Kind)
		require.NotEqual(t, facts.KindConfirmationRequested, f.Kind)
		if f.Kind == facts.KindActionCompleted {
			c, err := facts.Decode[facts.ActionCompleted](f)
			require.NoError(t, err)
			require.NotNil(t, c.Served)
			served = append(served, c.Served.Seq)
		}
	}
	require.Len(t, served, 2)
	for _, seq := range served {
		require.Equal(t, facts.KindActionCompleted, before[seq-1].Kind)
	}
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))
	require.Equal(t, before, logOf(t, e, "t"))

	// Again: the same rerun is found, not made twice.
	again, err := rerun.Run(ctx, rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.NoError(t, err)
	require.Equal(t, rep.Rerun, again.Rerun)
	require.Equal(t, int64(3), cm.n.Load())

	b, err := json.Marshal(rep)
	require.NoError(t, err)
	t.Logf("%s", b)
}

func verdicts(r *rerun.Report) []string {
	var out []string
	for _, p := range r.Turns {
		out = append(out, p.Verdict)
	}
	return out
}

// logOf is thread id's log.
func logOf(t *testing.T, e *harnesstest.Stock, id string) []facts.Fact {
	t.Helper()
	var out []facts.Fact
	for f, err := range e.Store.Read(ctx, id, 1) {
		require.NoError(t, err)
		out = append(out, f)
	}
	return out
}

// A rerun named like a child (PARENT.CALL) is refused before anything is
// asked or written: it would take the id of the child a thread PARENT
// spawns for CALL.
func TestRerunRefusesAChildsID(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	rt, actor, cm, _ := rerunOn(t, e, scriptB)
	_, err := rerun.Run(ctx, rerun.Options{From: "t", As: "p.1-d1", Model: "scripted:b", Runtime: rt, Actor: actor})
	require.ErrorIs(t, err, harness.ErrChildShaped)
	require.Equal(t, int64(0), cm.n.Load(), "no model was asked")
	_, err = e.Store.Head(ctx, "p.1-d1")
	require.ErrorIs(t, err, thread.ErrNotFound)
}
