package harnesstest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// refuse is a model that fails the test's expectation when it is asked.
type refuse struct{ calls *int }

func (r refuse) Turn(context.Context, model.Request) (model.Decision, error) {
	*r.calls++
	return model.Decision{}, errors.New("a parked thread called the model")
}

// TestParkedIsParked: the thread Parked writes is, to the runtime that
// resumes it, what it says — as many facts as asked, parked on the
// confirmation of its last write, nothing to run — at every length and
// shape, with and without a policy.
func TestParkedIsParked(t *testing.T) {
	ctx := context.Background()
	for _, p := range []harnesstest.Parked{
		{Facts: 5},
		{Facts: 6},
		{Facts: 1234, InputTokens: 18000},
		{Facts: 2001, Notes: true},
		{Facts: 6, Policy: &facts.PolicySet{Allow: []string{"read_file"}, By: "tester"}, Model: "scripted:none.jsonl", Workspace: "ws"},
		{Facts: 1500, Policy: &facts.PolicySet{Allow: []string{"read_file"}, By: "tester"}},
	} {
		t.Run(fmt.Sprintf("%d facts, notes %v, policy %v", p.Facts, p.Notes, p.Policy != nil), func(t *testing.T) {
			s, err := thread.OpenPebble(t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			p.Append(t, s, "p")

			n, kinds := 0, map[facts.Kind]int{}
			for f, err := range s.Read(ctx, "p", 1) {
				require.NoError(t, err)
				n++
				kinds[f.Kind]++
			}
			require.Equal(t, p.Facts, n)
			require.Equal(t, 1, kinds[facts.KindConfirmationRequested])
			if p.Policy != nil {
				require.Equal(t, 1, kinds[facts.KindPolicySet])
			}
			if p.Notes {
				require.Equal(t, p.Facts-5, kinds["app.note"])
			}

			calls := 0
			tool := func(name string, needs action.Capability) harness.ToolAdapter {
				return harness.Tool{Spec: facts.ToolSchema{Name: name}, Needs: needs,
					Run: func(context.Context, json.RawMessage) (facts.Report, error) {
						calls++
						return facts.Report{}, errors.New("a parked thread ran a tool")
					}}
			}
			tb, err := harness.NewToolbox(tool("write_file", action.Write), tool("read_file", action.Read), tool("run_command", action.Execute))
			require.NoError(t, err)
			cfg, err := harness.NewConfig()
			require.NoError(t, err)
			actor, err := harness.CodingActor(cfg, tb)
			require.NoError(t, err)
			rt, err := harness.NewRuntime(s, harness.Services{Model: refuse{&calls}, Tools: tb}, cfg)
			require.NoError(t, err)
			out, err := rt.Resume(ctx, actor, "p")
			require.NoError(t, err)
			require.Equal(t, harness.StatusParked, out.Status, out.Reason)
			require.Zero(t, out.Steps)
			require.EqualValues(t, p.Facts, out.Seq)
			require.Zero(t, calls, "nothing ran")
			v, err := rt.Thread(actor, "p").View(ctx)
			require.NoError(t, err)
			require.Len(t, v.Waits, 1)
			require.Equal(t, fold.WaitConfirmation, v.Waits[0].Kind)
		})
	}
}
