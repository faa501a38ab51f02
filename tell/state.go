package tell

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/tools"
)

// Teller tells a person how a thread stands (drive.State) and what it
// waits for, on a terminal or any writer: everything the model, a file or
// a server wrote is escaped, so nothing in it can hide a line from the
// person deciding.
type Teller struct {
	W     io.Writer
	Paint Paint
	// CommandTimeout is run_command's default timeout in the workspace,
	// shown with a command that names none.
	CommandTimeout time.Duration
	// Answer is the command that answers the open request p of thread
	// id, said under it; nil says none. After are the lines said under a
	// thread that failed or stopped: how to go on (nil: none). The
	// command line gives them: they name its commands.
	Answer func(id string, p drive.Pending) string
	After  func(st drive.State) []string
}

// Usage says a thread's model turns and tokens: "2 model turns, 980
// tokens", with what they cost (CostNote); "" before its first turn.
func Usage(st drive.State) string {
	b := st.View.Budget
	if b == nil || b.Turns == 0 {
		return ""
	}
	turns := present.Plural(b.Turns, "model turn", "model turns")
	if b.Tokens == 0 {
		return turns // a model that counts none
	}
	return fmt.Sprintf("%s, %s tokens%s", turns, present.TokenCount(b.Tokens), CostNote(st))
}

// CostNote says what a thread's turns cost (", $0.0123"), or, once, that
// its model is not in the price table (tokens only). A scripted model
// costs nothing and is not said.
func CostNote(st drive.State) string {
	c := st.Cost
	switch {
	case c == nil:
		return ""
	case len(c.Tables) > 0:
		return ", " + present.USD(c.USD)
	case c.UnpricedTurns > 0 && st.Model != "" && !strings.HasPrefix(st.Model, "scripted:"):
		return fmt.Sprintf(" (no price for %s in the price table: tokens only)", present.EscapeLine(st.Model))
	}
	return ""
}

// State tells how a thread stands, and for a parked one what it waits
// for and how to answer; root is the workspace a write is previewed in.
func (t Teller) State(st drive.State, root string) {
	w := t.W
	tail := ""
	if u := Usage(st); u != "" {
		tail = " · " + u
	}
	switch st.Status {
	case harness.StatusDone:
		fmt.Fprintf(w, "%s thread %s (seq %d)%s\n", t.Paint.on("green", "done:"), st.Thread, st.Head.Seq, tail)
	case harness.StatusResumable:
		fmt.Fprintf(w, "%s thread %s (seq %d)%s: harness resume %s\n", t.Paint.on("yellow", "resumable:"), st.Thread, st.Head.Seq, tail, st.Thread)
	case drive.StatusRunning:
		fmt.Fprintf(w, "%s thread %s (seq %d)%s: a process that drives it runs %s; harness log -f %s follows it\n", t.Paint.on("yellow", "running:"), st.Thread, st.Head.Seq, tail, OneLine(strings.Join(st.Running, ", ")), ShellWord(st.Thread))
	case harness.StatusParked:
		fmt.Fprintf(w, "%s thread %s waits for a person (seq %d)%s\n", t.Paint.on("yellow", "parked:"), st.Thread, st.Head.Seq, tail)
	case harness.StatusStepLimit:
		fmt.Fprintf(w, "%s thread %s (seq %d)%s: %s\n", t.Paint.on("yellow", "step limit:"), st.Thread, st.Head.Seq, tail, st.Reason)
	default:
		fmt.Fprintf(w, "%s thread %s (seq %d)%s: %s\n", t.Paint.on("red", string(st.Status)+":"), st.Thread, st.Head.Seq, tail, present.Reason(st.Reason))
		if t.After != nil {
			for _, line := range t.After(st) {
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
	}
	Children(w, st, "  ")
	// The open requests, whatever else the thread can do.
	for _, p := range st.Waits {
		t.Pending(p, st.PreviewRoot(p, root))
		if t.Answer != nil {
			fmt.Fprintf(w, "    %s\n", present.EscapeLine(t.Answer(st.Thread, p)))
		}
	}
}

// pendingArgsRunes is how much of a call's arguments a confirmation line
// shows; the preview below it shows what a write would change, whole or
// with its size and digest.
const pendingArgsRunes = 400

// Pending describes one open request: for a confirmation the tool,
// its arguments (a command as the shell will read it, with its timeout
// and sandbox) and the diff a write would make. What the model or a file
// wrote is shown with its control characters escaped, so nothing in it
// can hide a line from the person deciding.
func (t Teller) Pending(p drive.Pending, root string) {
	w := t.W
	esc := present.EscapeLine
	switch p.Kind {
	case fold.WaitConfirmation:
		if c, ok := present.CommandOf(p.Tool, p.Args, t.CommandTimeout); ok {
			fmt.Fprintf(w, "  confirmation %s: %s, %s\n", esc(drive.Ref(p)), esc(p.Tool), c.Timeout())
			for _, line := range c.Lines() {
				fmt.Fprintf(w, "    %s %s\n", t.Paint.on("bold", "│"), line)
			}
		} else {
			fmt.Fprintf(w, "  confirmation %s: %s %s\n", esc(drive.Ref(p)), esc(p.Tool), esc(present.Clip(p.Args, pendingArgsRunes)))
		}
		if p.Reason != "" {
			fmt.Fprintf(w, "    %s %s\n", t.Paint.on("yellow", "asked because"), esc(p.Reason))
		}
		if o := p.Offer; o != nil {
			fmt.Fprintf(w, "    %s %s\n", t.Paint.on("yellow", "offered by the thread's end:"), esc(fmt.Sprintf("its work in its own worktree, on branch %s, changing %s; denied, the branch keeps it", o.Branch, strings.Join(o.Changed, ", "))))
		}
		if p.Rewritten != "" {
			fmt.Fprintf(w, "    %s %s\n", t.Paint.on("yellow", "rewritten:"), esc(p.Rewritten))
		}
		if diff := tools.Preview(root, p.Tool, p.Args); diff != "" {
			for _, line := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
				color := ""
				switch {
				case strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++"):
					color = "green"
				case strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "---"):
					color = "red"
				}
				if color != "" {
					line = t.Paint.on(color, line)
				}
				fmt.Fprintf(w, "    %s\n", line)
			}
		}
		if p.Hook != "" {
			fmt.Fprintf(w, "    %s\n", t.Paint.on("yellow", esc(p.Hook)))
		}
		if p.Action != nil && p.Action.Requested.MCP != nil {
			m := p.Action.Requested.MCP
			fmt.Fprintf(w, "    MCP server %s (%s %s): tool %s · digest %s\n", esc(m.Server), m.Transport, esc(m.Endpoint), esc(m.Tool), ShortDigest(m.Digest))
		}
		if p.Action != nil && p.Action.Requested.Sandbox != nil {
			sb := present.SandboxDetail(*p.Action.Requested.Sandbox)
			if p.Action.Requested.Sandbox.Mode == facts.SandboxOff {
				sb = t.Paint.on("yellow", sb)
			}
			fmt.Fprintf(w, "    %s\n", sb)
		}
	case fold.WaitQuestion:
		fmt.Fprintf(w, "  question %s: %s\n", esc(drive.Ref(p)), esc(p.Summary))
		if len(p.Options) > 0 {
			fmt.Fprintf(w, "    options: %s", esc(strings.Join(p.Options, " | ")))
			if p.AllowFreeText {
				fmt.Fprint(w, " (or any answer)")
			}
			fmt.Fprintln(w)
		}
	case fold.WaitPlan:
		fmt.Fprintf(w, "  plan %s: %s\n", esc(drive.Ref(p)), esc(p.Summary))
	case fold.WaitBudget:
		// The tree has one budget: its request is named "budget" already.
		if p.Thread != "" {
			fmt.Fprintf(w, "  budget %s: %s\n", esc(drive.Ref(p)), esc(p.Summary))
		} else {
			fmt.Fprintf(w, "  budget: %s\n", esc(p.Summary))
		}
	case fold.WaitReconcile:
		fmt.Fprintf(w, "  reconcile %s: %s\n", esc(drive.Ref(p)), esc(p.Summary))
		switch {
		case p.Interrupted != nil:
			fmt.Fprintf(w, "    %s\n", present.Describe(InterruptedFact(p.Interrupted)))
		case p.Completion != nil:
			fmt.Fprintf(w, "    report %s; %s\n", p.Completion.Report.Status, present.DescribeObservation(p.Completion.Observation))
		}
	}
}

// ShellWord is s as one word of a shell command: as it is when it holds
// only characters no shell treats specially, else in single quotes.
func ShellWord(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/:@%+=,-", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
