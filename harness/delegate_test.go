package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/effect"
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
		{Kind: fold.WaitConfirmation, RequestID: "1-w", Summary: `run write_file {"path":"cache.toml"}`, Thread: child},
	}, out.Waits, "the child's request, not the wait for the child nobody can answer")

	// The child's first facts name the parent's spawn and its hash.
	plog, clog := e.log("p"), e.log(child)
	require.Equal(t, []facts.Kind{facts.KindThreadSpawned, facts.KindUserMessage}, kindsOf(clog[:2]))
	sp := mustDecode[facts.ThreadSpawned](t, clog[0])
	spawnFact := plog[sp.Seq-1]
	require.Equal(t, facts.KindChildSpawned, spawnFact.Kind)
	require.Equal(t, facts.ThreadSpawned{Parent: "p", Seq: spawnFact.Seq, Hash: spawnFact.Hash().String(), Key: "delegate/spawn/1-d1",
		CallID: "1-d1", Task: "Set the TTL to 300", Tools: []string{"write_file"}}, sp)

	// The parked tree's threads keep snapshots of their folds (every part
	// keeps one, the lineage included), and a tree read anew from them
	// stands where the logs say.
	for _, id := range []string{"p", child} {
		snap, err := thread.SnapshotsOf(e.store).LatestSnapshot(ctx, id)
		require.NoError(t, err, id)
		h, err := e.store.Head(ctx, id)
		require.NoError(t, err)
		require.Equal(t, h.Seq, snap.Seq, id)
	}
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

// defectFor is a model whose turns in one thread die (a bug, not an
// expected failure): that thread fails for good.
type defectFor struct {
	inner  model.Model
	thread string
}

func (m defectFor) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	if req.Thread == m.thread {
		return model.Decision{}, effect.Defect(errors.New("the model's client has a bug"))
	}
	return m.inner.Turn(ctx, req)
}

// Two delegations in one turn: two children, each its own thread; one
// fails for good, the other finishes; the parent goes on when both have
// reported, in call order, and its model sees both outcomes.
func TestDelegateParallelPairOneFails(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, `{"text": "Two at once.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read a\"}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"Read b\"}"}]}
{"text": "One of them failed."}
{"thread": "1-d1", "text": "Reading.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"thread": "1-d1", "text": "a holds 1."}
{"thread": "1-d2", "text": "never"}`)
	e.rt.Services.Model = defectFor{inner: e.rt.Services.Model, thread: "p.1-d2"}
	out, err := e.rt.Start(ctx, e.actor, "p", "Read a and b")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)

	plog := e.log("p")
	require.Equal(t, []facts.Kind{facts.KindUserMessage, facts.KindSystemConfigured, facts.KindModelTurn,
		facts.KindChildSpawned, facts.KindChildSpawned, facts.KindChildReported, facts.KindChildReported, facts.KindModelTurn}, kindsOf(plog))
	r1, r2 := mustDecode[facts.ChildReported](t, plog[5]), mustDecode[facts.ChildReported](t, plog[6])
	require.Equal(t, "p.1-d1", r1.Child, "in call order")
	require.Equal(t, facts.EndDone, r1.Status)
	require.Equal(t, "a holds 1.", r1.Result)
	require.Equal(t, "p.1-d2", r2.Child)
	require.Equal(t, facts.EndFailed, r2.Status)
	require.Contains(t, r2.Reason, "the model's client has a bug")
	require.Equal(t, 1, e.ran(`read_file {"path":"a"}`))

	// The parent's next turn was shown both outcomes, as tool results.
	r, err := e.rt.Reading(ctx, e.actor, "p")
	require.NoError(t, err)
	require.Len(t, r.Children(), 2)
	th := e.rt.Thread(e.actor, "p")
	v, err := th.View(ctx)
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, v.Status)
	require.Equal(t, 2+2, v.Budget.Turns, "the parent's turns and those its children reported")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
}

// A child's budget is what its delegation gave it: when it is spent the
// child stops, visibly, and reports so.
func TestDelegateChildBudgetSpent(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read all\",\"tools\":[\"read_file\"],\"max_turns\":1}"}]}
{"text": "It ran out."}
{"thread": "1-d1", "text": "Reading.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"thread": "1-d1", "text": "never reached"}`)
	out, err := e.rt.Start(ctx, e.actor, "p", "Read everything")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	clog := e.log("p.1-d1")
	require.Equal(t, facts.KindBudgetExhausted, clog[len(clog)-2].Kind)
	end := mustDecode[facts.ThreadEnded](t, clog[len(clog)-1])
	require.Equal(t, facts.EndStopped, end.Status)
	require.Equal(t, "turns budget exhausted: 1 used of 1", end.Reason)
	rep := mustDecode[facts.ChildReported](t, e.log("p")[4])
	require.Equal(t, facts.EndStopped, rep.Status)
	require.Equal(t, 1, rep.Turns)
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
}

// A child's budget is never more than its parent has left, and a
// delegation that asks for tools its parent lacks is refused, saying why.
func TestDelegateNeverWiderThanTheParent(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, `{"tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"x\",\"max_turns\":99}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"y\",\"tools\":[\"rm_rf\"]}"}, {"id": "d3", "name": "delegate", "args": "{\"tasks\":\"y\"}"}]}
{"text": "ok"}
{"thread": "1-d1", "text": "done"}`, harness.WithBudget(10, 0))
	out, err := e.rt.Start(ctx, e.actor, "p", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	plog := e.log("p")
	var spawned []facts.ChildSpawned
	for _, f := range plog {
		if f.Kind == facts.KindChildSpawned {
			spawned = append(spawned, mustDecode[facts.ChildSpawned](t, f))
		}
	}
	require.Len(t, spawned, 3)
	require.Equal(t, 9, spawned[0].MaxTurns, "10 turns, 1 used: 9 left")
	require.Equal(t, []string{"write_file", "read_file"}, spawned[0].Tools, "all of the parent's but delegate")
	require.Contains(t, spawned[1].Refused, `tool "rm_rf" is not one of this thread's`)
	require.Contains(t, spawned[2].Refused, `unknown field "tasks"`)
	_, err = e.store.Head(ctx, "p.1-d2")
	require.ErrorIs(t, err, thread.ErrNotFound, "a refused delegation spawns nothing")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
}

// A parent whose budget a child's report spends stops the children it
// still waits on, and a person's stop of a parent does too: recorded on
// both sides — thread.stopped and thread.ended in the child, its report in
// the parent.
func TestDelegateCancellation(t *testing.T) {
	ctx := context.Background()
	const script = `{"text": "Two at once.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read\"}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"Write\"}"}]}
{"text": "after"}
{"thread": "1-d1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"thread": "1-d1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"b\"}"}]}
{"thread": "1-d1", "text": "read both"}
{"thread": "1-d2", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"c\"}"}]}
{"thread": "1-d2", "text": "wrote"}`
	stoppedChild := func(t *testing.T, e *tree, id, by string) {
		t.Helper()
		clog := e.log(id)
		st := mustDecode[facts.ThreadStopped](t, clog[len(clog)-2])
		require.Equal(t, by, st.By)
		end := mustDecode[facts.ThreadEnded](t, clog[len(clog)-1])
		require.Equal(t, facts.EndStopped, end.Status)
		require.Zero(t, e.ran(`write_file {"path":"c"}`), "the stopped child's write never ran")
	}
	t.Run("budget", func(t *testing.T) {
		// A log from before a bound in turns waited (see
		// TestTurnLimitWaitsAndARaiseResumes for one after).
		e := newTree(t, nil, script, harness.WithBudget(4, 0), harness.WithoutTurnsWait())
		out, err := e.rt.Start(ctx, e.actor, "p", "go")
		require.NoError(t, err)
		require.Equal(t, harness.StatusStopped, out.Status)
		require.Equal(t, "turns budget exhausted: 4 used of 4", out.Reason)
		plog := e.log("p")
		require.Equal(t, []facts.Kind{facts.KindChildReported, facts.KindBudgetExhausted, facts.KindChildReported}, kindsOf(plog[len(plog)-3:]))
		rep := mustDecode[facts.ChildReported](t, plog[len(plog)-1])
		require.Equal(t, "p.1-d2", rep.Child)
		require.Equal(t, facts.EndStopped, rep.Status)
		require.Contains(t, rep.Reason, "stopped by parent p: turns budget exhausted")
		stoppedChild(t, e, "p.1-d2", "parent p")
		require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
	})
	t.Run("turns wait", func(t *testing.T) {
		// Now the root's bound in turns waits: d1's report spends it, and
		// nothing ends — d2, given its own bound when it was spawned (at
		// most the 3 turns the parent then had left), goes on to it (here
		// it waits for its write's confirmation), and the root will wait
		// for a raise once it reports. The root's bound is passed by what
		// d2 spends: see turnlimit.go.
		e := newTree(t, nil, script, harness.WithBudget(4, 0))
		out, err := e.rt.Start(ctx, e.actor, "p", "go")
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, out.Status, out.Reason)
		require.Zero(t, countKind(e.log("p"), facts.KindBudgetExhausted))
		require.Zero(t, countKind(e.log("p.1-d2"), facts.KindThreadStopped))
		var kinds []fold.WaitKind
		for _, w := range out.Waits {
			kinds = append(kinds, w.Kind)
		}
		require.Contains(t, kinds, fold.WaitConfirmation, "d2 waits for its write: %+v", out.Waits)
		require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
	})
	t.Run("person", func(t *testing.T) {
		e := newTree(t, nil, script)
		out, err := e.rt.Start(ctx, e.actor, "p", "go")
		require.NoError(t, err)
		require.Equal(t, harness.StatusParked, out.Status, "d1 reported, d2 waits for its confirmation")
		out, err = e.rt.Thread(e.actor, "p").Stop(ctx, "ana", "enough")
		require.NoError(t, err)
		require.Equal(t, harness.StatusStopped, out.Status)
		require.Equal(t, "stopped by ana: enough", out.Reason)
		stoppedChild(t, e, "p.1-d2", "parent p")
		plog := e.log("p")
		rep := mustDecode[facts.ChildReported](t, plog[len(plog)-1])
		require.Equal(t, facts.EndStopped, rep.Status)
		out, err = e.rt.Thread(e.actor, "p").Stop(ctx, "ana", "again")
		require.NoError(t, err)
		require.Equal(t, harness.StatusStopped, out.Status)
		require.Len(t, e.log("p"), len(plog), "a thread is stopped once")
		require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
	})
}

// A result fact that names a head the child does not have — a forged
// report — is caught by verify, from the parent's side and the child's.
func TestDelegateForgedResultCaughtByVerify(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, delegateScript)
	_, err := e.rt.Start(ctx, e.actor, "p", "Set the TTL through a child")
	require.NoError(t, err)
	e.approve("p", "p.1-d1", "1-w")
	out, err := e.rt.Resume(ctx, e.actor, "p")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	plog, clog := e.log("p"), e.log("p.1-d1")

	// The same tree, copied fact by fact into another store; forge names
	// the child head its report claims.
	copyTree := func(t *testing.T, forge func(rep *facts.ChildReported, child []facts.Fact)) thread.Store {
		s, err := thread.OpenPebble(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		draft := func(f facts.Fact, payload any) facts.Draft {
			if payload == nil {
				return facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data}
			}
			d, err := facts.NewDraft(f.Kind, f.Cause, payload)
			require.NoError(t, err)
			return d
		}
		appendTo := func(id string, d facts.Draft) facts.Fact {
			h, err := s.Head(ctx, id)
			if errors.Is(err, thread.ErrNotFound) {
				h = thread.Head{}
			} else {
				require.NoError(t, err)
			}
			_, err = s.Append(ctx, id, h.Seq, d)
			require.NoError(t, err)
			log := readLog(t, s, id)
			return log[len(log)-1]
		}
		var spawnFact facts.Fact
		var child []facts.Fact
		for _, f := range plog {
			switch f.Kind {
			case facts.KindChildSpawned:
				spawnFact = appendTo("p", draft(f, nil))
				for _, g := range clog {
					if g.Kind == facts.KindThreadSpawned {
						sp := mustDecode[facts.ThreadSpawned](t, g)
						sp.Hash = spawnFact.Hash().String()
						child = append(child, appendTo("p.1-d1", draft(g, sp)))
						continue
					}
					child = append(child, appendTo("p.1-d1", draft(g, nil)))
				}
			case facts.KindChildReported:
				rep := mustDecode[facts.ChildReported](t, f)
				forge(&rep, child)
				d := draft(f, rep)
				d.Cause = facts.IngressCause(facts.ReportKey(rep.Child, rep.Seq, rep.Hash))
				appendTo("p", d)
			default:
				appendTo("p", draft(f, nil))
			}
		}
		return s
	}
	honest := copyTree(t, func(rep *facts.ChildReported, child []facts.Fact) {
		last := child[len(child)-1]
		rep.Seq, rep.Hash = last.Seq, last.Hash().String()
	})
	require.NoError(t, audit.VerifyLog(ctx, honest, e.actor, "p"), "the copy, honestly linked, verifies")
	require.NoError(t, audit.VerifyLog(ctx, honest, e.actor, "p.1-d1"))

	forged := copyTree(t, func(rep *facts.ChildReported, child []facts.Fact) {
		before := child[len(child)-2] // a head the child had, not its final one
		rep.Seq, rep.Hash = before.Seq, before.Hash().String()
	})
	err = audit.VerifyLog(ctx, forged, e.actor, "p")
	var ve *audit.VerifyError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, facts.KindChildReported, ve.Kind)
	require.Contains(t, ve.Reason, "names its final head seq 10")
	err = audit.VerifyLog(ctx, forged, e.actor, "p.1-d1")
	require.ErrorAs(t, err, &ve)
	require.Contains(t, ve.Reason, "its parent p reported it at seq 5")

	wrongHash := copyTree(t, func(rep *facts.ChildReported, child []facts.Fact) {
		last := child[len(child)-1]
		rep.Seq, rep.Hash = last.Seq, strings.Repeat("0", 64)
	})
	require.ErrorIs(t, audit.VerifyLog(ctx, wrongHash, e.actor, "p"), audit.ErrUnverified)

	// A thread that claims a spawn its parent's log does not have.
	claim, err := facts.NewDraft(facts.KindThreadSpawned, facts.IngressCause(facts.SpawnKey), facts.ThreadSpawned{
		Parent: "p", Seq: 4, Hash: strings.Repeat("0", 64), Key: "delegate/spawn/1-d1", Task: "x"})
	require.NoError(t, err)
	task, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(harness.StartKey), facts.UserMessage{Text: "x"})
	require.NoError(t, err)
	_, err = honest.Append(ctx, "impostor", 0, claim, task)
	require.NoError(t, err)
	err = audit.VerifyLog(ctx, honest, e.actor, "impostor")
	require.ErrorAs(t, err, &ve)
	require.Equal(t, uint64(1), ve.Seq)
	require.Contains(t, ve.Reason, "its link to its parent")
	require.ErrorIs(t, err, audit.ErrUnverified)
}

// turnCounter counts the model's turns by thread and turn, across every
// runtime that shares it.
type turnCounter struct {
	inner model.Model
	mu    sync.Mutex
	turns map[string]int
}

func (c *turnCounter) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	c.mu.Lock()
	c.turns[fmt.Sprintf("%s/%d", req.Thread, req.Turn)]++
	c.mu.Unlock()
	return c.inner.Turn(ctx, req)
}

// Eight runtimes race to resume a parent whose first turn delegates: one
// child is spawned, runs once and reports once; every model turn and tool
// run happens once.
func TestDelegateRacingResumersSpawnOnce(t *testing.T) {
	ctx := context.Background()
	const script = `{"text": "Two at once.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read a\"}"}, {"id": "d2", "name": "delegate", "args": "{\"task\":\"Read b\"}"}]}
{"text": "both done"}
{"thread": "1-d1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"thread": "1-d1", "text": "a"}
{"thread": "1-d2", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"b\"}"}]}
{"thread": "1-d2", "text": "b"}`
	e := newTree(t, nil, script)
	counter := &turnCounter{inner: e.rt.Services.Model, turns: map[string]int{}}
	start, err := facts.NewDraft(facts.KindUserMessage, facts.IngressCause(harness.StartKey), facts.UserMessage{Text: "go"})
	require.NoError(t, err)
	_, err = e.store.Append(ctx, "p", 0, start)
	require.NoError(t, err)

	const n = 8
	outs := make([]harness.Outcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range n {
		rt, err := harness.NewRuntime(e.store, harness.Services{Model: counter, Tools: e.tools}, e.rt.Config)
		require.NoError(t, err)
		wg.Go(func() {
			<-ready
			outs[i], errs[i] = rt.Resume(ctx, e.actor, "p")
		})
	}
	close(ready)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, harness.StatusDone, outs[i].Status)
	}
	plog := e.log("p")
	requireCausesOnce(t, plog)
	require.Equal(t, 2, countKind(plog, facts.KindChildSpawned))
	require.Equal(t, 2, countKind(plog, facts.KindChildReported))
	heads, err := e.store.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	require.Len(t, heads, 3, "the parent and its two children")
	for _, id := range []string{"p.1-d1", "p.1-d2"} {
		clog := e.log(id)
		requireCausesOnce(t, clog)
		require.Equal(t, 1, countKind(clog, facts.KindThreadSpawned))
		require.Equal(t, 1, countKind(clog, facts.KindThreadEnded))
	}
	for k, c := range counter.turns {
		require.Equal(t, 1, c, "model turn %s", k)
	}
	require.Len(t, counter.turns, 2+2+2)
	require.Equal(t, 1, e.ran(`read_file {"path":"a"}`))
	require.Equal(t, 1, e.ran(`read_file {"path":"b"}`))
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
}

// A child whose delegation named the delegate tool delegates in turn: a
// grandchild, its tools some of the child's, reports to the child, which
// reports to the parent; the tree of three verifies.
func TestDelegateNested(t *testing.T) {
	ctx := context.Background()
	e := newTree(t, nil, `{"tool_calls": [{"id": "d", "name": "delegate", "args": "{\"task\":\"Find out, with help\",\"tools\":[\"read_file\",\"delegate\"]}"}]}
{"text": "found"}
{"thread": "1-d", "tool_calls": [{"id": "g", "name": "delegate", "args": "{\"task\":\"Read a\",\"tools\":[\"read_file\"]}"}]}
{"thread": "1-d", "text": "my helper read it"}
{"thread": "1-g", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"thread": "1-g", "text": "a holds 1"}`)
	out, err := e.rt.Start(ctx, e.actor, "p", "Find out")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.Equal(t, 1, e.ran(`read_file {"path":"a"}`))
	grand := e.log("p.1-d.1-g")
	sp := mustDecode[facts.ThreadSpawned](t, grand[0])
	require.Equal(t, "p.1-d", sp.Parent)
	require.Equal(t, []string{"read_file"}, sp.Tools)
	rep := mustDecode[facts.ChildReported](t, e.log("p")[4])
	require.Equal(t, "my helper read it", rep.Result)
	require.Equal(t, 2+2, rep.Turns, "the child's turns and its child's")
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p"))
	require.NoError(t, audit.VerifyLog(ctx, e.store, e.actor, "p.1-d.1-g"))

	// A child whose delegation did not name delegate is not offered it.
	e2 := newTree(t, nil, `{"tool_calls": [{"id": "d", "name": "delegate", "args": "{\"task\":\"x\",\"tools\":[\"read_file\"]}"}]}
{"text": "ok"}
{"thread": "1-d", "tool_calls": [{"id": "g", "name": "delegate", "args": "{\"task\":\"y\"}"}]}
{"thread": "1-d", "text": "could not"}`)
	out, err = e2.rt.Start(ctx, e2.actor, "p", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	clog := e2.log("p.1-d")
	require.Equal(t, facts.KindActionRequested, clog[4].Kind, "delegate is an unknown tool to this child: an action with no adapter")
	_, err = e2.store.Head(ctx, "p.1-d.1-g")
	require.ErrorIs(t, err, thread.ErrNotFound)
}
