package tell_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/tell"
)

func TestRerunBesideItsOriginal(t *testing.T) {
	r := &rerun.Report{Original: "t1", Rerun: "t1-rr-k", Model: "scripted:\x1b[31mb.jsonl", Verdict: "diverged",
		DivergedAt: 2, Divergence: &facts.Divergence{Why: "another tool", Detail: "read_file, not write_file"},
		Served: 1, PromptChanged: true,
		Turns: []rerun.TurnPair{
			{N: 1, Verdict: "served", Original: &rerun.TurnSide{Calls: []string{"read_file"}, InputTokens: 10, OutputTokens: 2, Priced: true, USD: 0.01, ChecksPassed: 1},
				Rerun: &rerun.TurnSide{Calls: []string{"read_file"}, InputTokens: 12, OutputTokens: 3, Priced: true, USD: 0.02, ChecksPassed: 1, Offered: []string{"message: go on"}}, CostRatio: 2},
			{N: 2, Verdict: "diverged", Original: &rerun.TurnSide{Text: "a very long answer that goes on and on past the column's forty-eight runes"}},
		},
		OriginalSide: rerun.Side{InputTokens: 10, OutputTokens: 2, Priced: true, USD: 0.01, ChecksPassed: 1},
		RerunSide:    rerun.Side{InputTokens: 12, OutputTokens: 3},
		Approvals:    []rerun.Approval{{Turn: 2, Tool: "write_file", Args: `{"path":"a"}`, Why: "served"}},
	}
	var b bytes.Buffer
	tell.Rerun(&b, r)
	out := b.String()
	require.NotContains(t, out, "\x1b", "the model spec is escaped")
	for _, want := range []string{
		"rerun of t1 as t1-rr-k on scripted:",
		": diverged at turn 2 (another tool)\n  read_file, not write_file\n",
		"the system prompt is not the original's",
		"answer: a very long answer that goes on and on …",
		"after turn 1, the rerun's: message: go on",
		"$0.0100", "2.00", "1/1",
		"checks: original 1 passed, 0 failed; rerun 0 passed, 0 failed",
		"tokens: original 10 in, 2 out, $0.0100; rerun 12 in, 3 out, cost not priced\n",
		"served: 1 call from t1's log, nothing run",
		"  turn 2: write_file {\"path\":\"a\"} (the original asked for approval; its result was served)",
	} {
		require.Contains(t, out, want)
	}

	b.Reset()
	tell.RerunSuite(&b, []rerun.Row{{Thread: "t1", Rerun: "t1-rr-k", Report: r}, {Thread: "t2", Rerun: "t2-rr-k", Err: "no such\nthread"}})
	out = b.String()
	require.Regexp(t, `(?m)^t1\s+t1-rr-k\s+diverged\s+2\s+1\s+1/1\s+0/0\s+-$`, out)
	require.Regexp(t, `(?m)^t2\s+t2-rr-k\s+error\s+-\s+-\s+-\s+-\s+no such\\nthread$`, out)
}

// Where a live rerun acts is said, its directory escaped.
func TestRerunScratch(t *testing.T) {
	var w bytes.Buffer
	say := tell.RerunScratch(&w, nil)
	say("t1-rr-k", "/tmp/x\x1b[2J", false)
	say("t1-rr-k", "/tmp/y", true)
	require.Equal(t, "harness: the live rerun acts in the scratch copy /tmp/x\\x1b[2J\nharness: the live rerun t1-rr-k goes on in its scratch copy /tmp/y\n", w.String())
}
