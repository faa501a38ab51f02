package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

func (a *app) threadsCmd() *cobra.Command {
	var status, tree string
	cmd := &cobra.Command{
		Use:   "threads [--status parked|done|failed|stopped|resumable|running] [--tree ROOT]",
		Short: "List the threads of the store, the one active last first: status, what each waits for, title, model, tokens",
		Args:  args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if status != "" && !slices.Contains(drive.Statuses, status) {
				return usageError("--status %q: want parked, done, failed, stopped, resumable or running", status)
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
			rows, depth, err := s.Threads(ctx, drive.ListOptions{Status: harness.Status(status), Root: tree})
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
			if err := tell.Threads(a.stdout, rows, depth, time.Now()); err != nil {
				return err
			}
			return unreadable(rows)
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "only threads with this status: parked, done, failed, stopped, resumable or running (another process drives it)")
	cmd.Flags().StringVar(&tree, "tree", "", "only the threads of the tree of this root thread")
	completeFlag(cmd, "status", "parked", "done", "failed", "stopped", "resumable", "running")
	return cmd
}

// lastThread is the store's thread active last that is not a child
// (drive.LastActive).
func lastThread(ctx context.Context, s *stock.Session) (string, error) {
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
