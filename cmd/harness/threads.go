package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
)

func (a *app) threadsCmd() *cobra.Command {
	var status, tree string
	cmd := &cobra.Command{
		Use:   "threads [--status parked|done|failed|stopped|resumable] [--tree ROOT]",
		Short: "List the threads of the store, the one active last first: status, what each waits for, title, model, tokens",
		Args:  args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			switch harness.Status(status) {
			case "", harness.StatusParked, harness.StatusDone, harness.StatusFailed, harness.StatusStopped, harness.StatusResumable:
			default:
				return usageError("--status %q: want parked, done, failed, stopped or resumable", status)
			}
			s, err := a.openRead(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			if tree != "" {
				if err := checkID(tree); err != nil {
					return err
				}
			}
			rows, depth, err := a.threadRows(ctx, s, drive.ListOptions{Status: harness.Status(status), Root: tree})
			if err != nil {
				return err
			}
			if a.jsonOut() {
				if err := a.printJSON(rows); err != nil {
					return err
				}
				return unreadable(rows)
			}
			fmt.Fprintf(a.stdout, "workspace %s (store %s)\n", present.EscapeLine(s.Stock.Config.Workspace), s.Place.Where())
			if len(rows) == 0 {
				fmt.Fprintln(a.stdout, "no threads")
				return nil
			}
			now := time.Now()
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "THREAD\tSTATUS\tWAITS FOR\tLAST ACTIVITY\tTOKENS\tMODEL\tTITLE")
			for i, r := range rows {
				// Request and action ids hold the model's call ids.
				var ws []string
				for _, w := range r.Waits {
					ws = append(ws, string(w.Kind)+" "+drive.Ref(w))
				}
				waits := oneLine(strings.Join(ws, ", "))
				st := string(r.Status)
				switch {
				case r.Unreadable != "":
					st, waits = "unreadable", cut(r.Unreadable, 60)
				case len(r.InDoubt) > 0:
					st, waits = "in doubt", oneLine(strings.Join(r.InDoubt, ", "))
				case len(r.Running) > 0:
					st, waits = "running", oneLine(strings.Join(r.Running, ", "))
				case waits == "" && r.Reason != "" && r.Retry != "":
					waits = cut(present.Reason(r.Reason), 50) + " (resume tries it again)"
				case waits == "" && r.Reason != "":
					waits = cut(present.Reason(r.Reason), 60)
				}
				tokens := "-"
				if r.Tokens > 0 {
					tokens = tokenCount(r.Tokens)
				}
				if r.Cost != nil && len(r.Cost.Tables) > 0 {
					// The tree's: a child's is in its parent's once it reported.
					tokens += " " + present.USD(r.Cost.USD)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", strings.Repeat("  ", depth[i])+r.Thread, st, dash(waits), ago(now, r.Head.At),
					tokens, dash(shortModel(r.Model)), cut(oneLine(r.Title), 50))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return unreadable(rows)
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "only threads with this status: parked, done, failed, stopped or resumable")
	cmd.Flags().StringVar(&tree, "tree", "", "only the threads of the tree of this root thread")
	completeFlag(cmd, "status", "parked", "done", "failed", "stopped", "resumable")
	return cmd
}

// threadRows are the store's threads the options keep (drive.List), the
// one active last first (ties by id, numbers as numbers), each child under
// its parent, with how deep each stands in its tree.
func (a *app) threadRows(ctx context.Context, s *session, o drive.ListOptions) ([]drive.State, []int, error) {
	rt, err := s.runtime()
	if err != nil {
		return nil, nil, err
	}
	rows, _, err := drive.List(ctx, rt, s.Stock.Actor, o)
	if err != nil {
		return nil, nil, err
	}
	drive.ActiveFirst(rows)
	rows, depth := drive.InTreeOrder(rows)
	return rows, depth, nil
}

// ago says when, for a person: "just now", "5m ago", "3h ago", "2d ago",
// or the date.
func ago(now, t time.Time) string {
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

// shortModel is a model spec as a column shows it: a script by its file
// name.
func shortModel(spec string) string {
	if p, ok := strings.CutPrefix(spec, "scripted:"); ok {
		return "scripted:" + filepath.Base(p)
	}
	return present.EscapeLine(spec)
}

// lastThread is the store's thread active last that is not a child
// (drive.LastActive).
func lastThread(ctx context.Context, s *session) (string, error) {
	id, err := drive.LastActive(ctx, s.Store)
	if errors.Is(err, drive.ErrNoThreads) {
		return "", fmt.Errorf("no threads in %s; start one with `harness run`", s.Place.Where())
	}
	return id, err
}

// unreadable is the error of a listing that holds threads it could not
// read (listed as such, with the others): the first one's reason, and how
// many there are. As ls does, the list is printed and the exit code says
// it is not whole.
func unreadable(rows []drive.State) error {
	var bad []drive.State
	for _, r := range rows {
		if r.Unreadable != "" {
			bad = append(bad, r)
		}
	}
	switch len(bad) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("1 thread cannot be read: %s; harness replay %s --verify says more", bad[0].Unreadable, bad[0].Thread)
	}
	return fmt.Errorf("%d threads cannot be read, the first: %s; harness replay %s --verify says more", len(bad), bad[0].Unreadable, bad[0].Thread)
}
