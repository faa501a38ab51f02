package tell

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// EffectDoc is an action of a store's threads as JSON (audit.Effect).
type EffectDoc struct {
	Thread   string             `json:"thread"`
	ActionID string             `json:"action_id"`
	Tool     string             `json:"tool"`
	Seq      uint64             `json:"seq"`
	At       time.Time          `json:"at"`
	Stage    scheduler.Stage    `json:"stage"`
	State    facts.EffectState  `json:"effect_state,omitempty"`
	InDoubt  bool               `json:"in_doubt,omitempty"`
	Report   facts.ReportStatus `json:"report,omitempty"`
	Check    facts.Verdict      `json:"check,omitempty"`
	Changed  []string           `json:"changed,omitempty"`
	Open     bool               `json:"open"`
	Decision facts.Decision     `json:"decision,omitempty"`
	By       string             `json:"by,omitempty"`
}

// EffectDocs are the documents of effects, in their order (never nil).
func EffectDocs(es []audit.Effect) []EffectDoc {
	out := []EffectDoc{}
	for _, e := range es {
		out = append(out, EffectDoc{e.Thread, e.ActionID, e.Tool, e.Seq, e.At, e.Stage, e.State, e.InDoubt, e.Report, e.Check, e.Changed, e.Open, e.Decision, e.By})
	}
	return out
}

// Effects writes effects as a table, a row each; a change no action made
// names the action it was found before and who made it.
func Effects(w io.Writer, es []audit.Effect, paint Paint) error {
	if len(es) == 0 {
		_, err := fmt.Fprintln(w, "no actions")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "THREAD\tACTION\tTOOL\tREPORT\tEFFECT\tCHECK\tCHANGED\tOPEN")
	for _, e := range es {
		state := string(e.State)
		switch {
		case e.InDoubt:
			state = "in doubt"
		case e.Stage == scheduler.StageStarted:
			state = "running"
		case state == "":
			state = string(e.Stage)
		}
		changed := Dash(OneLine(strings.Join(e.Changed, ", ")))
		if len(e.Removed) > 0 {
			removed := "made, removed by harness: " + OneLine(strings.Join(e.Removed, ", "))
			if len(e.Changed) == 0 {
				changed = removed
			} else {
				changed += "; " + removed
			}
		}
		if e.By != "" {
			// A change no action made, found before action e.ActionID.
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Thread, "before "+OneLine(e.ActionID), "by "+OneLine(e.By), "-", state, "-", changed, "-")
			continue
		}
		openCol := "-"
		switch {
		case e.Open:
			openCol = paint.on("yellow", "open")
		case e.Decision != "":
			openCol = "settled: " + string(e.Decision)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Thread, OneLine(e.ActionID), OneLine(e.Tool), Dash(string(e.Report)), state,
			Dash(string(e.Check)), changed, openCol)
	}
	return tw.Flush()
}

// UndoDoc is an undo plan as JSON: what was (or, in a dry run, would be)
// restored of thread, to how it was at seq to.
type UndoDoc struct {
	Thread string        `json:"thread"`
	To     uint64        `json:"to"`
	DryRun bool          `json:"dry_run"`
	Steps  []UndoStepDoc `json:"steps"`
}

// UndoStepDoc is one path of an undo plan.
type UndoStepDoc struct {
	Path        string   `json:"path"`
	Action      string   `json:"action"`
	Left        string   `json:"left,omitempty"`
	Restore     string   `json:"restore,omitempty"`
	LeftMode    uint32   `json:"left_mode,omitempty"`
	RestoreMode uint32   `json:"restore_mode,omitempty"`
	Seqs        []uint64 `json:"seqs"`
}

// UndoDocOf is the document of an undo plan.
func UndoDocOf(id string, to uint64, dryRun bool, plan rewind.UndoPlan) UndoDoc {
	out := UndoDoc{id, to, dryRun, []UndoStepDoc{}}
	for _, st := range plan.Steps {
		out.Steps = append(out.Steps, UndoStepDoc{st.Path, UndoVerb(st), st.Left, st.Restore, st.LeftMode, st.RestoreMode, st.Seqs})
	}
	return out
}

// Undo writes an undo plan of thread id after seq to: a line a path, or
// that there is nothing to undo.
func Undo(w io.Writer, id string, to uint64, dryRun bool, plan rewind.UndoPlan) {
	if len(plan.Steps) == 0 {
		fmt.Fprintf(w, "nothing to undo: the files %s changed after seq %d hold what they held then\n", id, to)
		return
	}
	verb := "restored"
	if dryRun {
		verb = "would restore"
	}
	fmt.Fprintf(w, "%s %d path(s) to how they were at seq %d of %s:\n", verb, len(plan.Steps), to, id)
	for _, st := range plan.Steps {
		seqs := make([]string, len(st.Seqs))
		for i, q := range st.Seqs {
			seqs[i] = strconv.FormatUint(q, 10)
		}
		fmt.Fprintf(w, "  %-8s %s (%schanged at seq %s)\n", UndoVerb(st), present.EscapeLine(st.Path), undoModeNote(st), strings.Join(seqs, ", "))
	}
	if dryRun {
		fmt.Fprintln(w, "dry run: nothing was changed")
	}
}

// UndoVerb says what a step does to its path: remove, recreate, chmod or
// restore.
func UndoVerb(s rewind.UndoStep) string {
	switch {
	case s.Restore == "":
		return "remove"
	case s.Left == "":
		return "recreate"
	case s.ModeOnly():
		return "chmod"
	}
	return "restore"
}

// undoModeNote says how a step changes a file's mode ("mode 0755 → 0644, "),
// or "" where it does not, or the log did not record it.
func undoModeNote(s rewind.UndoStep) string {
	switch {
	case s.Restore == "" || s.RestoreMode == 0:
		return ""
	case s.LeftMode == 0 && s.Left == "":
		return fmt.Sprintf("mode %04o, ", s.RestoreMode)
	case s.LeftMode != 0 && s.LeftMode != s.RestoreMode:
		return fmt.Sprintf("mode %04o → %04o, ", s.LeftMode, s.RestoreMode)
	}
	return ""
}
