package tell

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rerun"
)

// Rerun tells one rerun beside its original: the verdict and where it
// diverged, the turns side by side, what each side was offered after a
// turn, tokens, cost and checks per turn and in all, the calls served, and
// the approvals the rerun would have needed. The model's words are
// escaped.
func Rerun(w io.Writer, r *rerun.Report) {
	e := present.EscapeLine
	head := fmt.Sprintf("rerun of %s as %s on %s: %s", r.Original, r.Rerun, e(r.Model), r.Verdict)
	if r.DivergedAt > 0 {
		head += fmt.Sprintf(" at turn %d (%s)", r.DivergedAt, r.Divergence.Why)
	}
	fmt.Fprintln(w, head)
	if d := r.Divergence; d != nil {
		fmt.Fprintf(w, "  %s\n", e(d.Detail))
	}
	if r.PromptChanged {
		fmt.Fprintln(w, "  the system prompt is not the original's")
	}
	if r.ToolsChanged {
		fmt.Fprintln(w, "  the tools offered are not the original's")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TURN\tORIGINAL\tRERUN\tVERDICT")
	for _, t := range r.Turns {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", t.N, sideWords(t.Original), sideWords(t.Rerun), t.Verdict)
	}
	_ = tw.Flush()
	for _, t := range r.Turns {
		for _, side := range []struct {
			who string
			t   *rerun.TurnSide
		}{{"original", t.Original}, {"rerun", t.Rerun}} {
			if side.t == nil {
				continue
			}
			for _, o := range side.t.Offered {
				fmt.Fprintf(w, "  after turn %d, the %s's: %s\n", t.N, side.who, e(o))
			}
		}
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TURN\tTOKENS ORIGINAL\tTOKENS RERUN\tCOST ORIGINAL\tCOST RERUN\tCOST RATIO\tCHECKS ORIGINAL\tCHECKS RERUN")
	for _, t := range r.Turns {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.N, turnTokens(t.Original), turnTokens(t.Rerun),
			turnCost(t.Original), turnCost(t.Rerun), costRatio(t.CostRatio), turnChecks(t.Original), turnChecks(t.Rerun))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "checks: original %d passed, %d failed; rerun %d passed, %d failed\n",
		r.OriginalSide.ChecksPassed, r.OriginalSide.ChecksFailed, r.RerunSide.ChecksPassed, r.RerunSide.ChecksFailed)
	fmt.Fprintf(w, "tokens: original %d in, %d out%s; rerun %d in, %d out%s%s\n",
		r.OriginalSide.InputTokens, r.OriginalSide.OutputTokens, usd(r.OriginalSide),
		r.RerunSide.InputTokens, r.RerunSide.OutputTokens, usd(r.RerunSide), ratio(r.CostRatio))
	calls := "calls"
	if r.Served == 1 {
		calls = "call"
	}
	fmt.Fprintf(w, "served: %d %s from %s's log, nothing run\n", r.Served, calls, r.Original)
	if r.Live && r.Outcome != "" {
		fmt.Fprintf(w, "live: the rerun is %s\n", r.Outcome)
	}
	if len(r.Approvals) == 0 {
		fmt.Fprintln(w, "approvals the rerun would have needed: none")
	}
	for i, ap := range r.Approvals {
		if i == 0 {
			fmt.Fprintln(w, "approvals the rerun would have needed:")
		}
		fmt.Fprintf(w, "  turn %d: %s %s (%s)\n", ap.Turn, e(ap.Tool), e(ap.Args), approvalWords(ap.Why))
	}
}

// RerunSuite tells a suite of reruns as one table: a row a thread.
func RerunSuite(w io.Writer, rows []rerun.Row) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "THREAD\tRERUN\tVERDICT\tTURN\tSERVED\tCHECKS ORIG\tCHECKS RERUN\tCOST RATIO")
	for _, r := range rows {
		if r.Report == nil {
			fmt.Fprintf(tw, "%s\t%s\terror\t-\t-\t-\t-\t%s\n", r.Thread, r.Rerun, present.EscapeLine(r.Err))
			continue
		}
		p := r.Report
		turn := "-"
		if p.DivergedAt > 0 {
			turn = fmt.Sprint(p.DivergedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d/%d\t%d/%d\t%s\n", r.Thread, r.Rerun, p.Verdict, turn, p.Served,
			p.OriginalSide.ChecksPassed, p.OriginalSide.ChecksPassed+p.OriginalSide.ChecksFailed,
			p.RerunSide.ChecksPassed, p.RerunSide.ChecksPassed+p.RerunSide.ChecksFailed, costRatio(p.CostRatio))
	}
	_ = tw.Flush()
}

// approvalWords says why a call of the rerun needed an approval.
func approvalWords(why string) string {
	switch why {
	case "served":
		return "the original asked for approval; its result was served"
	case "asked":
		return "asked in the rerun"
	default:
		return "not run; the tool asks first"
	}
}

// sideWords is one side of a turn in a column: its calls, else its
// question or its answer, cut to 48 characters and escaped.
func sideWords(t *rerun.TurnSide) string {
	if t == nil {
		return "-"
	}
	if t.Question != "" && len(t.Calls) == 0 {
		return present.EscapeLine(clipWords("question: "+t.Question, 48))
	}
	if len(t.Calls) == 0 {
		return present.EscapeLine(clipWords("answer: "+t.Text, 48))
	}
	return present.EscapeLine(clipWords(strings.Join(t.Calls, "; "), 48))
}

// clipWords is s cut to n runes, the last an ellipsis when cut.
func clipWords(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// turnTokens, turnCost and turnChecks say one side of a turn: tokens in
// and out, its cost, its checks passed of those recorded.
func turnTokens(t *rerun.TurnSide) string {
	if t == nil {
		return "-"
	}
	return fmt.Sprintf("%d in, %d out", t.InputTokens, t.OutputTokens)
}

func turnCost(t *rerun.TurnSide) string {
	if t == nil || !t.Priced {
		return "-"
	}
	return fmt.Sprintf("$%.4f", t.USD)
}

func turnChecks(t *rerun.TurnSide) string {
	if t == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", t.ChecksPassed, t.ChecksPassed+t.ChecksFailed)
}

// costRatio is a column's cost ratio, or "-" when not known.
func costRatio(r float64) string {
	if r > 0 {
		return fmt.Sprintf("%.2f", r)
	}
	return "-"
}

func usd(s rerun.Side) string {
	if !s.Priced {
		return ", cost not priced"
	}
	return fmt.Sprintf(", $%.4f", s.USD)
}

func ratio(r float64) string {
	if r == 0 {
		return ""
	}
	return fmt.Sprintf(" (cost ×%.2f)", r)
}

// RerunScratch says on w where a live rerun acts: the scratch copy dir
// made for the rerun id, or (again) the one it goes on in.
func RerunScratch(w io.Writer, paint Paint) func(id, dir string, again bool) {
	return func(id, dir string, again bool) {
		if again {
			fmt.Fprintf(w, "%s the live rerun %s goes on in its scratch copy %s\n", paint.on("bold", "harness:"), id, present.EscapeLine(dir))
		} else {
			fmt.Fprintf(w, "%s the live rerun acts in the scratch copy %s\n", paint.on("bold", "harness:"), present.EscapeLine(dir))
		}
	}
}
