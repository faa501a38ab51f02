package natsstore_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
)

// TestTwoRuntimesResumeOneThread: two runtimes, each on a store of its own
// over a connection of its own as two processes would be, resume one
// thread whose tool blocks. The second waits for the first's lease rather
// than taking the running action for one whose process died: the tool
// runs once, and the log is whole.
func TestTwoRuntimesResumeOneThread(t *testing.T) {
	_, opts := freshNamed()
	opts = append(opts, natsstore.WithLeaseTTL(ttl))
	stores := []*natsstore.Store{dial(t, shared, opts...), dial(t, shared, opts...)}
	ctx := context.Background()

	script, err := model.ParseScript("block", []byte(`{"text": "Running it.", "tool_calls": [{"id": "call_1", "name": "block", "args": "{}"}]}
{"text": "Done."}
`))
	require.NoError(t, err)
	var runs atomic.Int32
	entered, gate := make(chan struct{}), make(chan struct{})
	tools, err := harness.NewToolbox(harness.Tool{
		Spec:  facts.ToolSchema{Name: "block"},
		Needs: action.Read,
		Run: func(ctx context.Context, _ json.RawMessage) (facts.Report, error) {
			if runs.Add(1) == 1 {
				close(entered)
			}
			select {
			case <-gate:
			case <-ctx.Done():
				return facts.Report{}, ctx.Err()
			}
			return facts.Report{Status: facts.StatusSucceeded, Stdout: "ran"}, nil
		},
	})
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	var rts []*harness.Runtime
	for _, s := range stores {
		rt, err := harness.NewRuntime(s, harness.Services{Model: script, Tools: tools}, cfg)
		require.NoError(t, err)
		rts = append(rts, rt)
	}

	type result struct {
		out harness.Outcome
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		out, err := rts[0].Start(ctx, actor, "one", "Run the blocking tool.")
		first <- result{out, err}
	}()
	select {
	case <-entered:
	case r := <-first:
		t.Fatalf("the first runtime returned before the tool ran: %+v, %v", r.out, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the tool never ran")
	}
	go func() {
		out, err := rts[1].Resume(ctx, actor, "one")
		second <- result{out, err}
	}()
	// Longer than the lease's TTL: the first keeps renewing it.
	select {
	case r := <-second:
		t.Fatalf("the second runtime resumed while the first held the lease: %+v, %v", r.out, r.err)
	case <-time.After(ttl + ttl/4):
	}
	close(gate)

	for i, ch := range []chan result{first, second} {
		select {
		case r := <-ch:
			require.NoError(t, r.err, "runtime %d", i)
			require.Equal(t, harness.StatusDone, r.out.Status, "runtime %d", i)
		case <-time.After(10 * time.Second):
			t.Fatalf("runtime %d did not return", i)
		}
	}
	require.Equal(t, int32(1), runs.Load(), "the tool ran once")
	require.NoError(t, audit.VerifyLog(ctx, stores[1], actor, "one"))
	kinds := map[facts.Kind]int{}
	for _, f := range readAll(t, stores[0], "one") {
		kinds[f.Kind]++
	}
	require.Equal(t, 1, kinds[facts.KindActionStarted], "%v", kinds)
	require.Equal(t, 1, kinds[facts.KindActionCompleted], "%v", kinds)
}
