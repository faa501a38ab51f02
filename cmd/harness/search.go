package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

func (a *app) searchCmd() *cobra.Command {
	var limit int
	var page string
	var reindex bool
	cmd := &cobra.Command{
		Use:   "search QUERY... [--limit N] [--page CURSOR] | search --reindex",
		Short: "Find facts across every thread: by kind:, tool:, path:, by:, status:, effect:, check:, model:, thread:, since:, until: and words",
		Long: `Find facts across every thread of the store, newest first. A query is terms
that must all hold of a fact:

  kind:KIND      a kind (action.completed), or its first part (action)
  tool:NAME      the tool a call asked for (and every fact of that call)
  path:PATH      a path a call named or changed: the path, its name, or a
                 directory above it (path:go.mod, path:src)
  by:NAME        who answered: approved or denied a call (and every later
                 fact of it), answered a question, settled an effect
  status:STATUS  the thread's status: done, parked, failed, stopped, resumable
  effect:STATE   reported, observed, unknown or none
  check:VERDICT  a check's pass or fail, or its name
  model:MODEL    the model the thread was configured with
  thread:ID      one thread
  since:WHEN     at or after a date (2026-03-01), a time (RFC 3339) or a
  until:WHEN     duration back from now (90m, 36h, 7d); until: is before
  WORD           a word of a message, an answer, a tool call's arguments or
                 a command's output ("quote" a word holding a colon)

The index (.harness/search; for a NATS store, harness/search in the user's
cache directory) is brought up to date before each search (and as threads
are appended, by harness serve, and by harness worker on a NATS store), and
is never trusted: every hit is read back from its thread's log, and shown only if
the log says the same. --reindex builds it again from the logs.

  harness search by:ana path:go.mod kind:action.completed since:7d
  harness search effect:unknown status:parked
  harness search timeout tool:run_command`,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			text := strings.Join(args, " ")
			if text == "" && !reindex {
				return usageError("search: want a query (see 'harness search --help'), or --reindex")
			}
			if limit < 1 || limit > search.MaxLimit {
				return usageError("--limit %d: want 1 to %d", limit, search.MaxLimit)
			}
			s, err := a.openRead(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			res, st, err := s.Search(ctx, text, stock.Search{Reindex: reindex, Wait: a.wait,
				SearchOptions: drive.SearchOptions{Limit: limit, Cursor: page}})
			if err == nil && text == "" {
				if a.jsonOut() {
					return a.printJSON(st)
				}
				fmt.Fprintf(a.stdout, "indexed %s of %s\n", present.Plural(st.Facts, "fact", "facts"), present.Plural(st.Threads, "thread", "threads"))
				return nil
			}
			if errors.Is(err, search.ErrQuery) || errors.Is(err, search.ErrCursor) {
				return asUsage(err)
			}
			if err != nil {
				return err
			}
			if res.Dropped > 0 {
				hits := present.Plural(res.Dropped, "hit of the index was not in the logs and was", "hits of the index were not in the logs and were")
				fmt.Fprintf(a.stderr, "harness: %s left out: the index is out of date or damaged; 'harness search --reindex' builds it again\n", hits)
			}
			if a.jsonOut() {
				return a.printJSON(res)
			}
			if err := tell.SearchHits(a.stdout, res.Hits); err != nil || len(res.Hits) == 0 {
				return err
			}
			if res.Next != "" {
				fmt.Fprintf(a.stdout, "more: harness search --page %s %s\n", res.Next, present.EscapeLine(tell.ShellArgs(args)))
			}
			return nil
		}),
	}
	cmd.Flags().IntVar(&limit, "limit", search.DefaultLimit, "the most facts to show")
	cmd.Flags().StringVar(&page, "page", "", "the page after the one that printed this cursor (its \"more:\" line, or next in -o json)")
	cmd.Flags().BoolVar(&reindex, "reindex", false, "build the index again from the logs (then search, if a query is given)")
	return cmd
}
