package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread/natsstore/natstest"
	"github.com/seed-7cc7a084/harness/worker"
)

// delegatedLines: the parent delegates; the child appends two lines, one
// a turn. Every turn reads 1000 tokens.
const delegatedLines = `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Append lines 1 and 2\"}"}], "usage": {"input_tokens": 1000}}
{"text": "Done: the child appended them.", "usage": {"input_tokens": 1000}}
{"thread": "1-d1", "text": "one", "tool_calls": [{"id": "c1", "name": "append_line", "args": "{\"n\": 1}"}], "usage": {"input_tokens": 1000}}
{"thread": "1-d1", "text": "two", "tool_calls": [{"id": "c2", "name": "append_line", "args": "{\"n\": 2}"}], "usage": {"input_tokens": 1000}}
{"thread": "1-d1", "text": "Both appended.", "usage": {"input_tokens": 1000}}`

// A tree a worker drives parks on its budget (the child's second turn
// would pass 2500 tokens) and costs the worker nothing while it waits; a
// person's raise on the root is taken up by the worker, which shares it
// with the child and drives the tree to done. Each line once; every log
// verifies.
func TestAWorkerTakesUpARaisedTree(t *testing.T) {
	srv := natstest.Server(t)
	sc := newScenario(t, srv.ClientURL(), delegatedLines)
	sc.Delegating = true
	store := sc.dial(t)
	actor, cfg, err := sc.parts()
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, harness.Services{}, cfg)
	require.NoError(t, err)
	set, err := facts.NewDraft(facts.KindBudgetSet, "", facts.BudgetSet{Limit: facts.Spend{Tokens: 2500}, By: "ana", Source: "flag"})
	require.NoError(t, err)
	_, err = rt.Thread(actor, "t1").Submit(context.Background(), "Have a child append two lines", harness.Ingress{Draft: set, Key: "budget"})
	require.NoError(t, err)

	ev, _ := startWorker(t, sc)
	ids := []string{"t1"}
	waitFor(t, sc, store, ids, 30*time.Second, func(st drive.State) bool {
		return st.Status == harness.StatusParked && len(st.Waits) > 0 && st.Waits[len(st.Waits)-1].Kind == fold.WaitBudget
	})
	// (A child runs the actor's own toolbox, whose lines name no thread.)
	require.Equal(t, map[string]int{" 1": 1}, lines(t, sc), "the child's second turn did not run")
	require.Eventually(t, func() bool { return ev.count(worker.EventStopped) >= 1 }, 10*time.Second, 10*time.Millisecond)
	looks := ev.count(worker.EventTook)
	time.Sleep(3 * sc.AckWait)
	require.Equal(t, looks, ev.count(worker.EventTook), "no look at a tree parked on its budget")

	_, err = drive.RaiseBudget(context.Background(), rt.Thread(actor, "t1"), facts.Spend{Tokens: 10000}, "ana")
	require.NoError(t, err)
	waitFor(t, sc, store, ids, 30*time.Second, func(st drive.State) bool { return st.Status == harness.StatusDone })
	require.Equal(t, map[string]int{" 1": 1, " 2": 1}, lines(t, sc))
	st := view(t, sc, store, "t1")
	require.Equal(t, facts.Spend{Tokens: 12500}, st.Budget.Limit)
	require.Equal(t, int64(5000), st.Budget.Spent.Tokens)
	verifyAll(t, sc, store, []string{"t1", "t1.1-d1"})
}
