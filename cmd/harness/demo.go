package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/demo"
	"github.com/seed-7cc7a084/harness/safegit"
	"github.com/seed-7cc7a084/harness/tell"
)

func (a *app) demoCmd() *cobra.Command {
	var dir string
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--keep]",
		Short: "The harness end to end, offline: a confirmation, an observed write, four workers, a verified replay",
		Long: `Run the harness's main job with a scripted model and no network, in a temporary
git workspace holding cache.toml (ttl_seconds = 60): a thread asks for 300 and
parks on the confirmation of its write; the demo shows the pending request,
answers it as you would (confirmation.answered) and resumes; the tool runs and
the runtime's observation and the declared check are recorded. Then four
workers each report success for the same change, and the record shows what the
runtime could confirm of each. Last, the thread is replayed and verified.
Everything printed comes from the log.

--keep (or --dir) keeps the workspace, so you can look around:
cd into it and try harness threads, log, replay, effects.`,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			keep = keep || dir != "" // a directory named is kept
			var r demo.Reporter = &tell.Demo{W: a.stdout, Paint: a.paint, Pending: a.printPending,
				Approve: func(id, req string) string { return fmt.Sprintf("harness approve %s %s --resume", id, req) },
				Verify:  "harness replay --verify " + demo.Thread}
			if a.jsonOut() {
				r = &demo.Record{}
			}
			root, err := demo.Run(ctx, demo.Options{Dir: dir, Keep: keep, Version: "harness/" + version(), Git: safegit.Command}, r)
			if errors.Is(err, demo.ErrDirNotEmpty) {
				return usageError("--dir %s is not empty; the demo needs an empty or new directory", dir)
			} else if err != nil {
				return err
			}
			if j, ok := r.(*demo.Record); ok {
				j.Root, j.Kept = root, keep
				return a.printJSON(j)
			}
			if keep {
				fmt.Fprintf(a.stdout, "\nThe workspace is kept: cd %s, then try harness threads, harness log demo, harness effects.\n", root)
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&dir, "dir", "", "make the demo in this empty directory (kept)")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary workspace and say where it is")
	return cmd
}
