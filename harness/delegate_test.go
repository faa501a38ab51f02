package harness_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// tree is a delegating runtime on a real Pebble store: a scripted model
// (lines with "thread" for the children), and write_file (confirms) and
// read_file tools whose runs are counted by their arguments.
type tree struct {
	t     *testing.T
	store thread.Store
	rt    *harness.Runtime
	actor harness.Actor
	tools *harness.Toolbox

	mu   sync.Mutex
	runs map[string]int
}

func newTree(t *testing.T, store thread.Store, script string, opts ...harness.Option) *tree {
	t.Helper()
	if store == nil {
		s, err := thread.OpenPebble(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		store = s
	}
	e := &tree{t: t, store: store, runs: map[string]int{}}
	m, err := model.ParseScript("tree", []byte(script))
	require.NoError(t, err)
	run := func(name string) func(context.Context, json.RawMessage) (facts.Report, error) {
		return func(_ context.Context, args json.RawMessage) (facts.Report, error) {
			e.mu.Lock()
			e.runs[name+" "+string(args)]++
			e.mu.Unlock()
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "ran " + name}, nil
		}
	}
	e.tools, err = harness.NewToolbox(
		harness.Tool{Spec: facts.ToolSchema{Name: "write_file"}, Needs: action.Write, Run: run("write_file")},
		harness.Tool{Spec: facts.ToolSchema{Name: "read_file"}, Needs: action.Read, Run: run("read_file")},
	)
	require.NoError(t, err)
	cfg, err := harness.NewConfig(append([]harness.Option{harness.WithModelBackoff(0)}, opts...)...)
	require.NoError(t, err)
	e.actor, err = harness.Compose(cfg, harness.System(), harness.Tools(e.tools), harness.Budget(), harness.Compact(),
		harness.Infer(harness.Scheduler()), harness.Delegate(nil))
	require.NoError(t, err)
	e.rt, err = harness.NewRuntime(store, harness.Services{Model: m, Tools: e.tools}, cfg)
	require.NoError(t, err)
	return e
}

func (e *tree) log(id string) []facts.Fact {
	var out []facts.Fact
	for f, err := range e.store.Read(context.Background(), id, 1) {
		require.NoError(e.t, err)
		out = append(out, f)
	}
	return out
}

func (e *tree) kinds(id string) []facts.Kind { return kindsOf(e.log(id)) }

func (e *tree) ran(call string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[call]
}

// approve answers a confirmation of the tree's thread id through the
// parent's tree (Thread.Open).
func (e *tree) approve(parent, id, request string) {
	e.t.Helper()
	ctx := context.Background()
	th, err := e.rt.Thread(e.actor, parent).Open(ctx, id)
	require.NoError(e.t, err)
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: request, Approved: true, By: "ana"})
	require.NoError(e.t, err)
	_, err = th.Post(ctx, d, "confirm-"+request)
	require.NoError(e.t, err)
}

func countKind(log []facts.Fact, k facts.Kind) int {
	n := 0
	for _, f := range log {
		if f.Kind == k {
			n++
		}
	}
	return n
}

// delegateScript: the parent delegates a write to a child, which asks for
// its confirmation, writes, and says done; the parent then says done.
const delegateScript = `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL to 300\",\"tools\":[\"write_file\"]}"}]}
{"text": "The child set it."}
{"thread": "1-d1", "text": "Writing.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\"}"}]}
{"thread": "1-d1", "text": "Done: the TTL is 300."}`

// A child that needs a confirmation parks its parent's tree; the
// confirmation is answered through the parent, and the parent's resume
// drives the child to its end and takes its report.
func TestDelegateConfirmationThroughTheParent(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, delegateScript)
	out, err := e.rt.Start(ctx, e.actor, "p", "Set the TTL through a child")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	child := "p.1-d1"
	require.Equal(t, []fold.Wait{
		{Kind: fold.WaitChild, RequestID: child, Summary: "child p.1-d1: Set the TTL to 300"},
		{Kind: fold.WaitConfirmation, RequestID: "1-w", Summary: `run write_file {"path":"cache.toml"}`, Thread: child},
	}, out.Waits)

	// The child's first facts name the parent's spawn and its hash.
	plog, clog := e.log("p"), e.log(child)
	require.Equal(t, []facts.Kind{facts.KindThreadSpawned, facts.KindUserMessage}, kindsOf(clog[:2]))
	sp := mustDecode[facts.ThreadSpawned](t, clog[0])
	spawnFact := plog[sp.Seq-1]
	require.Equal(t, facts.KindChildSpawned, spawnFact.Kind)
	require.Equal(t, facts.ThreadSpawned{Parent: "p", Seq: spawnFact.Seq, Hash: spawnFact.Hash().String(), Key: "delegate/spawn/1-d1",
		CallID: "1-d1", Task: "Set the TTL to 300", Tools: []string{"write_file"}}, sp)

	tr, err := e.rt.Thread(e.actor, "p").Tree(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, tr.Status)
	require.Len(t, tr.Children, 1)
	require.Equal(t, []fold.Wait{{Kind: fold.WaitConfirmation, RequestID: "1-w", Summary: `run write_file {"path":"cache.toml"}`, Thread: child}}, tr.Waits)

	e.approve("p", child, "1-w")
	out, err = e.rt.Resume(ctx, e.actor, "p")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, 1, e.ran(`write_file {"path":"cache.toml"}`))

	plog, clog = e.log("p"), e.log(child)
	require.Equal(t, 1, countKind(plog, facts.KindChildSpawned))
	require.Equal(t, 1, countKind(plog, facts.KindChildReported))
	last := clog[len(clog)-1]
	require.Equal(t, facts.KindThreadEnded, last.Kind)
	rep := mustDecode[facts.ChildReported](t, plog[slicesIndexKind(plog, facts.KindChildReported)])
	require.Equal(t, last.Seq, rep.Seq)
	require.Equal(t, last.Hash().String(), rep.Hash)
	require.Equal(t, facts.EndDone, rep.Status)
	require.Equal(t, "Done: the TTL is 300.", rep.Result)
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, child))
}

func slicesIndexKind(log []facts.Fact, k facts.Kind) int {
	for i, f := range log {
		if f.Kind == k {
			return i
		}
	}
	return -1
}
