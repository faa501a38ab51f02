package tell

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// EffectDocs are effects as the command line prints them as JSON: the
// effects themselves (audit.Effect's JSON, the HTTP API's GET
// /api/effects), in their order, and an empty list, never null.
func EffectDocs(es []audit.Effect) []audit.Effect {
	if es == nil {
		return []audit.Effect{}
	}
	return es
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
// restored of thread, to how it was at seq to — the plan's own JSON
// (rewind.UndoPlan, as the HTTP API gives it), and whether it was a dry
// run.
type UndoDoc struct {
	rewind.UndoPlan
	DryRun bool `json:"dry_run"`
}

// UndoDocOf is the document of an undo plan of thread id to seq to; its
// steps are an empty list, never null, when there are none.
func UndoDocOf(id string, to uint64, dryRun bool, plan rewind.UndoPlan) UndoDoc {
	plan.Thread, plan.To = id, to
	if plan.Steps == nil {
		plan.Steps = []rewind.UndoStep{}
	}
	return UndoDoc{plan, dryRun}
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
	were := "they were"
	if len(plan.Steps) == 1 {
		were = "it was"
	}
	fmt.Fprintf(w, "%s %s to how %s at seq %d of %s:\n", verb, present.Plural(len(plan.Steps), "path", "paths"), were, to, id)
	for _, st := range plan.Steps {
		seqs := make([]string, len(st.Seqs))
		for i, q := range st.Seqs {
			seqs[i] = strconv.FormatUint(q, 10)
		}
		fmt.Fprintf(w, "  %-8s %s (%schanged at seq %s)\n", st.Action(), present.EscapeLine(st.Path), undoModeNote(st), strings.Join(seqs, ", "))
	}
	if dryRun {
		fmt.Fprintln(w, "dry run: nothing was changed")
	}
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
