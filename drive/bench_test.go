package drive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// sessionScript is a session of turns model turns: each but the last
// calls write_file (which asks for a confirmation), the last says done.
func sessionScript(turns int) string {
	var b strings.Builder
	for i := 1; i < turns; i++ {
		fmt.Fprintf(&b, `{"text": "step %d", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"f%d.txt\",\"content\":\"x\"}"}]}`+"\n", i, i)
	}
	b.WriteString(`{"text": "done"}` + "\n")
	return b.String()
}

// runSession drives a new thread of turns model turns to done, every
// confirmation answered by an approval policy (as --approve all does), and
// returns the time it took.
func runSession(b *testing.B, store thread.Store, id string, turns int) time.Duration {
	b.Helper()
	ctx := context.Background()
	script, err := model.ParseScript("session", []byte(sessionScript(turns)))
	if err != nil {
		b.Fatal(err)
	}
	tools, err := harness.NewToolbox(harness.Tool{
		Spec:  facts.ToolSchema{Name: "write_file"},
		Needs: action.Write,
		Run: func(context.Context, json.RawMessage) (facts.Report, error) {
			return facts.Report{Status: facts.StatusSucceeded}, nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), harness.WithMaxSteps(10*turns))
	if err != nil {
		b.Fatal(err)
	}
	actor, err := harness.CodingActor(cfg, tools)
	if err != nil {
		b.Fatal(err)
	}
	rt, err := harness.NewRuntime(store, harness.Services{Model: script, Tools: tools}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	all, err := drive.NewApproval("all", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	th := rt.Thread(actor, id)
	if _, err := th.Start(ctx, "go"); err != nil {
		b.Fatal(err)
	}
	st, err := drive.Drive(ctx, th, drive.Options{Approval: all})
	if err != nil {
		b.Fatal(err)
	}
	if st.Status != harness.StatusDone {
		b.Fatalf("session of %d turns: %s (%s)", turns, st.Status, st.Reason)
	}
	return time.Since(start)
}

// BenchmarkDriveSession is the per-turn cost of a session driven to its
// end by Drive — a model turn, a confirmation answered by the policy, the
// tool run — at 50, 200 and 800 turns. Drive folds the log once and goes
// on from where it read, so a turn costs the same late in a long session
// as early in a short one: ratio is the 800-turn session's per-turn cost
// over the 50-turn one's (aim: within 1.5).
func BenchmarkDriveSession(b *testing.B) {
	store, err := thread.OpenPebble(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	sizes := []int{50, 200, 800}
	total := make([]time.Duration, len(sizes))
	for i := 0; b.Loop(); i++ {
		for j, n := range sizes {
			total[j] += runSession(b, store, fmt.Sprintf("s%d-%d", n, i), n)
		}
	}
	per := func(j int) float64 {
		return float64(total[j]) / float64(b.N) / float64(sizes[j]) / float64(time.Millisecond)
	}
	for j, n := range sizes {
		b.ReportMetric(per(j), fmt.Sprintf("ms/turn@%d", n))
	}
	b.ReportMetric(per(2)/per(0), "ratio")
}
