package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// stopCmd stops a thread, and the children it waits on.
func (a *app) stopCmd() *cobra.Command {
	var by, reason string
	cmd := &cobra.Command{
		Use:   "stop THREAD [--reason TEXT]",
		Short: "Stop a thread: nothing more runs in it, and the children it waits on are stopped too",
		Long: `Stop a thread: thread.stopped is appended (once), nothing more runs in it, and
the child threads it waits on (see the delegate tool) are stopped and report
so, each recorded in the child and in its parent.

While another process drives the thread (a run or resume in a terminal, a
server, a worker: the store is shared through harness serve or NATS), stop
asks it to stop through the log (stop.requested): it cuts off what it runs — a
command gets SIGTERM, then SIGKILL after 500 ms, and is recorded as
action.interrupted with what the runtime observed — records thread.stopped,
and ends stopped (a run exits 1). stop returns once it has.`,
		Args: args(1, 1, "THREAD"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := args[0]
			if err := a.checkBy(by); err != nil {
				return err
			}
			// A run in a terminal that holds the store is asked to stop
			// the thread, and let go (stock.Place.OpenOrStop).
			var s *stock.Session
			p, err := a.place()
			if err == nil {
				err = p.OpenOrStop(ctx, stock.StopAsk{Thread: id, By: a.whoami(), Reason: reason},
					func() (err error) { s, err = a.openThread(ctx, id); return err },
					func() { fmt.Fprintf(a.stderr, "harness: another process holds the store: asking it to stop %s\n", id) })
			}
			if err != nil {
				return err
			}
			defer s.Close()
			st, appended, err := s.Stop(ctx, id, a.whoami(), reason, func(f facts.Fact, err error) {
				if err != nil {
					fmt.Fprintf(a.stderr, "harness: %s\n", tell.PersonError(err))
				} else if !a.jsonOut() {
					fmt.Fprintln(a.stdout, tell.TreeFactLine(f, id, a.paint))
				}
			})
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(tell.StopDoc{Thread: id, Status: st.Status, Reason: st.Reason, Seq: st.Head.Seq, Facts: appended})
			}
			fmt.Fprintf(a.stdout, "%s thread %s (seq %d): %s\n", a.paint("yellow", "stopped:"), id, st.Head.Seq, present.EscapeLine(st.Reason))
			return nil
		}),
	}
	cmd.Flags().StringVar(&by, "by", "", "who stops it: only you, the login name of the account the command runs as (the default)")
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the record")
	return cmd
}
