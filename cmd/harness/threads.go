package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/thread"
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
				return a.printJSON(rows)
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
			return tw.Flush()
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
	slices.SortStableFunc(rows, func(x, y drive.State) int {
		if c := y.Head.At.Compare(x.Head.At); c != 0 {
			return c
		}
		return naturalCompare(x.Thread, y.Thread)
	})
	rows, depth := drive.InTreeOrder(rows)
	return rows, depth, nil
}

// lastThread is the store's thread active last that is not a child (a
// child is resumed through its parent).
func lastThread(ctx context.Context, s *session) (string, error) {
	var heads []thread.Head
	page := thread.ThreadsPage{}
	for {
		hs, err := s.Store.Threads(ctx, page)
		if err != nil {
			return "", err
		}
		if len(hs) == 0 {
			break
		}
		heads = append(heads, hs...)
		page.After = hs[len(hs)-1].Thread
	}
	slices.SortStableFunc(heads, func(x, y thread.Head) int {
		if c := y.At.Compare(x.At); c != 0 {
			return c
		}
		return naturalCompare(y.Thread, x.Thread)
	})
	for _, h := range heads {
		root, err := harness.RootOf(ctx, s.Store, h.Thread)
		if err != nil && !errors.Is(err, harness.ErrNotInTree) {
			return "", err
		}
		if root == h.Thread {
			return h.Thread, nil
		}
	}
	return "", fmt.Errorf("no threads in %s; start one with `harness run`", s.Place.Where())
}

// naturalCompare orders ids with their numbers as numbers: t2 before t10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := unicode.IsDigit(rune(a[0])), unicode.IsDigit(rune(b[0]))
		if da && db {
			na, ra := leadingDigits(a)
			nb, rb := leadingDigits(b)
			x, _ := strconv.ParseUint(na, 10, 64)
			y, _ := strconv.ParseUint(nb, 10, 64)
			if c := cmp.Compare(x, y); c != 0 {
				return c
			}
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
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
