package main

import (
	"cmp"
	"context"
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

// threadRow is one thread, as threads lists it.
type threadRow struct {
	Thread       string         `json:"thread"`
	Parent       string         `json:"parent,omitempty"`
	Status       harness.Status `json:"status"`
	Title        string         `json:"title"`
	Model        string         `json:"model,omitempty"`
	Turns        int            `json:"turns"`
	Tokens       int64          `json:"tokens"`
	Waits        []string       `json:"waits,omitempty"`
	InDoubt      []string       `json:"in_doubt,omitempty"`
	Running      []string       `json:"running,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	Retry        string         `json:"retry,omitempty"`
	Facts        uint64         `json:"facts"`
	LastActivity time.Time      `json:"last_activity"`
	Workspace    string         `json:"workspace"`
}

func (a *app) threadsCmd() *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "threads [--status parked|done|failed|stopped|resumable]",
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
			rows, err := a.threadRows(ctx, s, harness.Status(status))
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(rows)
			}
			fmt.Fprintf(a.stdout, "workspace %s (store %s)\n", present.EscapeLine(s.stock.Config.Workspace), s.place.Where())
			if len(rows) == 0 {
				fmt.Fprintln(a.stdout, "no threads")
				return nil
			}
			depth := threadDepths(rows)
			now := time.Now()
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "THREAD\tSTATUS\tWAITS FOR\tLAST ACTIVITY\tTOKENS\tMODEL\tTITLE")
			for i, r := range rows {
				// Request and action ids hold the model's call ids.
				waits := oneLine(strings.Join(r.Waits, ", "))
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", strings.Repeat("  ", depth[i])+r.Thread, st, dash(waits), ago(now, r.LastActivity),
					tokens, dash(shortModel(r.Model)), cut(oneLine(r.Title), 50))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "only threads with this status: parked, done, failed, stopped or resumable")
	completeFlag(cmd, "status", "parked", "done", "failed", "stopped", "resumable")
	return cmd
}

// threadRows are the store's threads with the status wanted ("" for
// all), the one active last first (ties by id, numbers as numbers).
func (a *app) threadRows(ctx context.Context, s *session, status harness.Status) ([]threadRow, error) {
	rt, err := s.runtime()
	if err != nil {
		return nil, err
	}
	rows := []threadRow{}
	page := thread.ThreadsPage{}
	for {
		heads, err := s.store.Threads(ctx, page)
		if err != nil {
			return nil, err
		}
		if len(heads) == 0 {
			break
		}
		for _, h := range heads {
			th, err := rt.Open(ctx, s.stock.Actor, h.Thread)
			if err != nil {
				return nil, err
			}
			st, err := drive.Inspect(ctx, th)
			if err != nil {
				return nil, err
			}
			if status != "" && st.Status != status {
				continue
			}
			r := threadRow{Thread: h.Thread, Parent: parentOf(st), Status: st.Status, Model: st.Model, InDoubt: st.InDoubt, Running: st.Running, Reason: st.Reason, Retry: st.Retry,
				Facts: h.Seq, LastActivity: h.At, Workspace: cmpOr(st.Workspace, s.stock.Config.Workspace)}
			if b := st.View.Budget; b != nil {
				r.Turns, r.Tokens = b.Turns, b.Tokens
			}
			if r.Title, err = st.View.Own.Title(); err != nil {
				return nil, err
			}
			for _, w := range st.Waits {
				r.Waits = append(r.Waits, string(w.Kind)+" "+drive.Ref(w))
			}
			rows = append(rows, r)
		}
		page.After = heads[len(heads)-1].Thread
	}
	slices.SortStableFunc(rows, func(x, y threadRow) int {
		if c := y.LastActivity.Compare(x.LastActivity); c != 0 {
			return c
		}
		return naturalCompare(x.Thread, y.Thread)
	})
	// A tree's threads are listed as a tree: each child under its parent.
	ordered, _ := treeOrder(rowsOf(rows, func(r threadRow) (string, string) { return r.Thread, r.Parent }))
	rows = rows[:0]
	for _, o := range ordered {
		rows = append(rows, o.v)
	}
	return rows, nil
}

// lastThread is the store's thread active last that is not a child (a
// child is resumed through its parent).
func lastThread(ctx context.Context, s *session) (string, error) {
	var heads []thread.Head
	page := thread.ThreadsPage{}
	for {
		hs, err := s.store.Threads(ctx, page)
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
		_, child, err := harness.SpawnOf(ctx, s.store, h.Thread)
		if err != nil {
			return "", err
		}
		if !child {
			return h.Thread, nil
		}
	}
	return "", fmt.Errorf("no threads in %s; start one with `harness run`", s.place.Where())
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

// threadDepths is how deep each row stands in its tree, rows as
// threadRows ordered them (each child after its parent).
func threadDepths(rows []threadRow) []int {
	at := map[string]int{}
	depth := make([]int, len(rows))
	for i, r := range rows {
		if d, ok := at[r.Parent]; ok && r.Parent != "" {
			depth[i] = d + 1
		}
		at[r.Thread] = depth[i]
	}
	return depth
}
