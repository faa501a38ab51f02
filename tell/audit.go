package tell

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/seal"
)

// CommandTail is how many of a command's last output lines an audit shows
// (as many as the live view of a running command).
const CommandTail = 5

// Audit writes the audit of a thread, one line per fact, with each
// action's report, observation, effect state and check side by side, and
// then the thread's status.
func Audit(w io.Writer, record audit.Audit, paint Paint) {
	AuditHead(w, record.Thread)
	for _, e := range record.Entries {
		AuditEntry(w, e, paint)
	}
	AuditEnd(w, record)
}

// AuditHead writes the line an audit of thread id starts with: Audit, told
// in parts for an audit told as it goes (audit.ReplayEach), is AuditHead,
// AuditEntry for each entry, and AuditEnd.
func AuditHead(w io.Writer, id string) { fmt.Fprintf(w, "replay of thread %s\n", id) }

// AuditEntry writes one entry of an audit: its fact's line, and an
// action's records under its completion.
func AuditEntry(w io.Writer, e audit.AuditEntry, paint Paint) {
	fmt.Fprintln(w, FactLine(e.Fact))
	if e.Action != nil {
		auditAction(w, e.Action, paint)
	}
}

// AuditEnd writes the line an audit ends with: the thread's status.
func AuditEnd(w io.Writer, record audit.Audit) {
	line := fmt.Sprintf("status: %s", record.Status)
	if record.Reason != "" {
		line += " (" + OneLine(record.Reason) + ")"
	}
	for _, wt := range record.Waits {
		line += fmt.Sprintf("; waits for %s %s", wt.Kind, OneLine(wt.RequestID))
	}
	fmt.Fprintln(w, line)
}

// auditAction writes an action's records side by side, under its fact.
func auditAction(w io.Writer, act *audit.ActionAudit, paint Paint) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	report := string(act.Report.Status)
	if act.Report.ClaimedState != "" {
		report += "; claims " + OneLine(act.Report.ClaimedState)
	}
	if act.Report.Error != "" {
		report += "; " + OneLine(act.Report.Error)
	}
	fmt.Fprintf(tw, "      \treport\t%s\n", report)
	fmt.Fprintf(tw, "      \tobservation\t%s\n", present.DescribeObservation(act.Observation))
	fmt.Fprintf(tw, "      \teffect\t%s\n", act.EffectState)
	check := "none declared"
	if act.Check != nil {
		check = fmt.Sprintf("%s %s: %s", OneLine(string(act.Check.Check.Name)), OneLine(act.Check.Check.Target), act.Check.Verdict)
		if act.Check.Reason != "" {
			check += " — " + OneLine(act.Check.Reason)
		}
	}
	fmt.Fprintf(tw, "      \tcheck\t%s\n", check)
	if out := present.CommandSummary(act.Report, CommandTail); len(out) > 0 {
		fmt.Fprintf(tw, "      \tcommand\t%s\n", out[len(out)-1])
		for _, line := range out[:len(out)-1] {
			fmt.Fprintf(tw, "      \t\t%s\n", line)
		}
	}
	if act.Flag != "" {
		fmt.Fprintf(tw, "      \t%s\t%s\n", paint.on("yellow", "⚑ flag"), present.EscapeLine(act.Flag))
	}
	tw.Flush()
}

// Tree writes the audits of a tree's children after their parent's, each
// indented under a line that says where it was spawned.
func Tree(w io.Writer, kids []audit.TreeAudit, indent string, paint Paint) {
	for _, k := range kids {
		sp := k.Spawn
		head := fmt.Sprintf("%schild %s", indent, k.Thread)
		if sp != nil && sp.Child != nil {
			head += fmt.Sprintf(" (call %s, spawned at seq %d", present.EscapeLine(sp.Ref), sp.Child.SpawnedSeq)
			if sp.Child.Reported != nil {
				head += fmt.Sprintf(", reported at seq %d", sp.Child.ReportedSeq)
			}
			head += ")"
		}
		fmt.Fprintln(w, paint.on("bold", head))
		in := &Indented{W: w, Prefix: indent + "    "}
		Audit(in, k.Audit, paint)
		Tree(in, k.Children, "", paint)
	}
}

// TreeSize counts the threads below a tree's root.
func TreeSize(kids []audit.TreeAudit) int {
	n := len(kids)
	for _, k := range kids {
		n += TreeSize(k.Children)
	}
	return n
}

// Verified writes whether the record verified (verr is audit.VerifyLog's
// error, nil when it did) and reports whether it did.
func Verified(w io.Writer, record audit.Audit, verr error, paint Paint) bool {
	if verr != nil {
		var ve *audit.VerifyError
		if errors.As(verr, &ve) {
			fmt.Fprintf(w, "%s thread %s at seq %d (%s, cause %s): %s\n", paint.on("red", "verification failed:"), ve.Thread, ve.Seq, OneLine(string(ve.Kind)), OneLine(ve.Cause), OneLine(ve.Reason))
		} else {
			fmt.Fprintf(w, "%s %s\n", paint.on("red", "verification failed:"), OneLine(verr.Error()))
		}
		return false
	}
	fmt.Fprintf(w, "%s %s: the hash chain is intact, every caused fact was enabled by the fold at its position, every action record is consistent\n",
		paint.on("green", "verified:"), present.Plural(max(record.Facts, len(record.Entries)), "fact", "facts"))
	return true
}

// TreeVerified writes that a tree of n threads below its root verified.
func TreeVerified(w io.Writer, n int, paint Paint) {
	verbs := "threads verify"
	if n == 1 {
		verbs = "thread verifies"
	}
	fmt.Fprintf(w, "%s the tree: %d child %s, each spawn has its child, and each report names its child's final head\n",
		paint.on("green", "verified:"), n, verbs)
}

// AuditDoc is an audit, and its verification, as JSON.
type AuditDoc struct {
	Thread  string          `json:"thread"`
	Status  harness.Status  `json:"status,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	Entries []AuditEntryDoc `json:"entries"`
	Verify  *VerifyDoc      `json:"verify,omitempty"`
}

// AuditEntryDoc is one fact of an audit: what it records and, for an
// action's, the action's records side by side.
type AuditEntryDoc struct {
	Seq     uint64             `json:"seq"`
	Kind    facts.Kind         `json:"kind"`
	Cause   string             `json:"cause"`
	At      time.Time          `json:"at"`
	Summary string             `json:"summary"`
	Action  *audit.ActionAudit `json:"action,omitempty"`
}

// VerifyDoc is a verification's verdict: where it failed, and why.
type VerifyDoc struct {
	OK     bool       `json:"ok"`
	Error  string     `json:"error,omitempty"`
	Seq    uint64     `json:"seq,omitempty"`
	Kind   facts.Kind `json:"kind,omitempty"`
	Cause  string     `json:"cause,omitempty"`
	Reason string     `json:"reason,omitempty"`
	// Seals are the verdicts on the thread's seals (not of an export).
	Seals *seal.Summary `json:"seals,omitempty"`
}

// AuditDocOf is the document of an audit; with verify, of its
// verification too (verr is the error, seals the seals' verdicts).
func AuditDocOf(record audit.Audit, verify bool, verr error, seals *seal.Summary) AuditDoc {
	out := AuditDoc{Thread: record.Thread, Status: record.Status, Reason: record.Reason, Entries: []AuditEntryDoc{}}
	for _, e := range record.Entries {
		f := e.Fact
		ej := AuditEntryDoc{Seq: f.Seq, Kind: f.Kind, Cause: f.Cause, At: f.At, Summary: present.Describe(f)}
		ej.Action = e.Action
		out.Entries = append(out.Entries, ej)
	}
	if verify {
		v := &VerifyDoc{OK: verr == nil, Seals: seals}
		if verr != nil {
			v.Error = verr.Error()
			var ve *audit.VerifyError
			if errors.As(verr, &ve) {
				v.Seq, v.Kind, v.Cause, v.Reason = ve.Seq, ve.Kind, ve.Cause, ve.Reason
			}
		}
		out.Verify = v
	}
	return out
}
