package main

import (
	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
)

func (a *app) planCmd() *cobra.Command {
	var f driveFlags
	cmd := &cobra.Command{
		Use:   "plan THREAD on|off|act",
		Short: "Switch a thread's plan mode on or off, or act on the plan it waits on, and run it on",
		Long: `Plan mode: the thread's turns are offered no tool that writes (nor delegate),
its commands run in the sandbox with the workspace read-only, and the model is
asked for a plan. Its final answer is recorded as the plan (plan.recorded),
and the thread waits for a person: "act" switches plan mode off for that plan
and tells the model to carry it out; "harness continue THREAD MESSAGE" asks for
another plan instead. Each switch is a fact of the thread (plan.mode_set).

"on" and "off" take effect at the thread's next model turn; "act" and "off"
run the thread on, as resume does ("on" too, when something is to run).
"harness run --plan" starts a thread in plan mode.`,
		Example: `  harness run --plan "Make the cache TTL configurable"
  harness plan t1 act           # carry out the plan t1 waits on
  harness plan t1 on            # plan again from the next turn`,
		Args:              args(2, 2, "THREAD and on, off or act"),
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, what := args[0], args[1]
			if err := checkID(id); err != nil {
				return err
			}
			if what != "on" && what != "off" && what != "act" {
				return usageError("plan %s: want on, off or act", what)
			}
			s, dr, err := a.driveThread(ctx, id, &f)
			if err != nil {
				return err
			}
			defer s.Close()
			switch what {
			case "act":
				_, err = drive.ActOnPlan(ctx, dr.Thread, a.whoami())
			default:
				_, err = drive.SetPlanMode(ctx, dr.Thread, what == "on", a.whoami())
			}
			if err != nil {
				return err
			}
			return dr.finish(ctx)
		}),
	}
	f.add(cmd)
	return cmd
}
