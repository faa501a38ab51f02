package tell

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/present"
)

// Threads writes threads as a table, a row each, each indented by its
// depth in its tree (depth[i] for rows[i], as drive.InTreeOrder gives
// them): status, what it waits for, when it was last active (said from
// now), tokens and cost, model and title.
func Threads(w io.Writer, rows []drive.State, depth []int, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "THREAD\tSTATUS\tWAITS FOR\tLAST ACTIVITY\tTOKENS\tMODEL\tTITLE")
	for i, r := range rows {
		st, waits := threadStatus(r)
		tokens := "-"
		if r.Tokens > 0 {
			tokens = present.TokenCount(r.Tokens)
		}
		if r.Cost != nil && len(r.Cost.Tables) > 0 {
			// The tree's: a child's is in its parent's once it reported.
			tokens += " " + present.USD(r.Cost.USD)
		}
		indent := ""
		if i < len(depth) {
			indent = strings.Repeat("  ", depth[i])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", indent+r.Thread, st, Dash(waits), Ago(now, r.Head.At),
			tokens, Dash(ShortModel(r.Model)), present.Cut(OneLine(r.Title), 50))
	}
	return tw.Flush()
}

// threadStatus is a row's status and what it waits for, as the columns
// say them.
func threadStatus(r drive.State) (status, waits string) {
	// Request and action ids hold the model's call ids.
	var ws []string
	for _, w := range r.Waits {
		if w.Kind == fold.WaitBudget && w.Thread == "" {
			ws = append(ws, string(w.Kind)) // its request is named "budget" too
			continue
		}
		ws = append(ws, string(w.Kind)+" "+drive.Ref(w))
	}
	waits = OneLine(strings.Join(ws, ", "))
	switch {
	case r.Unreadable != "":
		return "unreadable", present.Cut(r.Unreadable, 60)
	case len(r.InDoubt) > 0:
		return "in doubt", OneLine(strings.Join(r.InDoubt, ", "))
	case len(r.Running) > 0:
		return "running", OneLine(strings.Join(r.Running, ", "))
	case waits == "" && r.Reason != "" && r.Retry != "":
		waits = present.Cut(present.Reason(r.Reason), 50) + " (resume tries it again)"
	case waits == "" && r.Reason != "":
		waits = present.Cut(present.Reason(r.Reason), 60)
	}
	return string(r.Status), waits
}

// Children writes, under a thread's state, how each child it waits on
// stands, and their children's, indented.
func Children(w io.Writer, st drive.State, indent string) {
	for _, c := range st.Children {
		line := fmt.Sprintf("%schild %s: %s", indent, c.Thread, c.Status)
		if c.Reason != "" {
			line += ": " + present.EscapeLine(c.Reason)
		}
		fmt.Fprintln(w, line)
		Children(w, c, indent+"  ")
	}
}

// Ago says when t was, from now, for a person: "just now", "5m ago", "3h
// ago", "2d ago", or the date.
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 7*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Local().Format("2006-01-02")
}

// ShortModel is a model spec as a column shows it: a script by its file
// name, escaped.
func ShortModel(spec string) string {
	if p, ok := strings.CutPrefix(spec, "scripted:"); ok {
		return "scripted:" + present.EscapeLine(filepath.Base(p))
	}
	return present.EscapeLine(spec)
}
