package tell

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/demo"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
)

// Demo narrates the demo (demo.Run) for a person: each step under its
// title, the facts as they are appended, the pending request, what the
// record says of the write and of each worker's, and the verified
// replay. It is a demo.Reporter.
type Demo struct {
	W     io.Writer
	Paint Paint
	// Pending shows a request the demo thread waits on, as the command
	// line shows one, for the workspace root.
	Pending func(p drive.Pending, root string)
	// Approve is the command line that approves request of thread and
	// resumes it; Verify the one that verifies the demo thread's log.
	Approve func(thread, request string) string
	Verify  string
	root    string
	quiet   bool // the workers' facts are summarized, not listed
}

func (t *Demo) section(title string) {
	fmt.Fprintf(t.W, "\n%s\n", t.Paint.on("bold", "== "+title))
}

// Workspace says where the demo runs.
func (t *Demo) Workspace(root string, git bool) {
	t.root = root
	fmt.Fprintln(t.W, t.Paint.on("bold", "harness demo")+": a coding thread, a confirmation, the effect boundary, an audit — offline, from the log.")
	kind := "a git workspace"
	if !git {
		kind = "a workspace (git is not installed; the demo does not need it)"
	}
	fmt.Fprintf(t.W, "In %s at %s holding cache.toml (ttl_seconds = 60), store in .harness/.\n", kind, root)
	t.section("1. A thread asks for 300; each fact is printed as it is appended")
}

// Fact prints a fact of the demo thread as it is appended.
func (t *Demo) Fact(f facts.Fact) {
	if !t.quiet {
		fmt.Fprintln(t.W, FactLine(f))
	}
}

// Parked shows the request the thread waits on, and how to answer it.
func (t *Demo) Parked(st drive.State) {
	t.section("2. Parked: the write waits for a person (nothing runs, no timer)")
	fmt.Fprintf(t.W, "thread %s is %s at seq %d; the pending request:\n", st.Thread, st.Status, st.Head.Seq)
	for _, p := range st.Waits {
		if t.Pending != nil {
			t.Pending(p, t.root)
		}
		if t.Approve != nil {
			fmt.Fprintf(t.W, "    on the command line: %s\n", t.Approve(st.Thread, p.RequestID))
		}
	}
	t.section("3. You approve (confirmation.answered), and the thread resumes")
}

// Answered says nothing: the facts appended say it.
func (t *Demo) Answered(drive.State) {}

// Done tells what the record says of the write: report, observation,
// effect state and check side by side.
func (t *Demo) Done(st drive.State, record audit.Audit) {
	fmt.Fprintf(t.W, "thread %s is %s at seq %d. What the record says of the write:\n", st.Thread, st.Status, st.Head.Seq)
	for _, e := range record.Entries {
		if e.Action == nil {
			continue
		}
		act := e.Action
		tw := tabwriter.NewWriter(t.W, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  \treport (what the tool said)\t%s: %s\n", act.Report.Status, OneLine(act.Report.Transcript+" "+act.Report.Stdout))
		fmt.Fprintf(tw, "  \tobservation (what the runtime saw)\t%s\n", present.DescribeObservation(act.Observation))
		fmt.Fprintf(tw, "  \teffect state\t%s\n", act.EffectState)
		if act.Check != nil {
			fmt.Fprintf(tw, "  \tcheck (declared before it ran)\t%s %s: %s\n", act.Check.Check.Name, act.Check.Check.Target, act.Check.Verdict)
		}
		tw.Flush()
	}
	t.section("4. Four workers each report success for \"set cache.toml to ttl_seconds = 300\"")
	t.quiet = true
}

// Workers tells each worker's record side by side.
func (t *Demo) Workers(ws []demo.Worker) {
	tw := tabwriter.NewWriter(t.W, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tREALLY\tREPORT\tOBSERVATION\tEFFECT\tCHECK\tTHREAD")
	for _, wk := range ws {
		check := "-"
		if wk.Check != nil {
			check = string(wk.Check.Verdict)
		}
		status := string(wk.Status)
		if len(wk.Waits) > 0 {
			status += " on " + string(wk.Waits[0].Kind)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s (%s)\n", wk.Name, wk.Does, wk.Report.Status, present.DescribeObservation(wk.Observation),
			wk.EffectState, check, wk.Thread, status)
	}
	tw.Flush()
	fmt.Fprintln(t.W, "Every worker said it succeeded. The observation tells diligent and busy from idle (unknown: open until a")
	fmt.Fprintln(t.W, "person reconciles it) and unwatched (reported: nobody looked); only the declared check tells diligent from busy.")
	t.quiet = false
	t.section("5. " + t.Verify)
}

// Verified tells the replay and whether it verified.
func (t *Demo) Verified(record audit.Audit, err error) {
	Audit(t.W, record, t.Paint)
	if !Verified(t.W, record, err, t.Paint) {
		fmt.Fprintln(t.W, "(the demo's own record should verify: this is a bug)")
	}
}
