package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/demo"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/present/tell"
	"github.com/seed-7cc7a084/harness/safegit"
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
			if dir == "" {
				tmp, err := os.MkdirTemp("", "harness-demo-")
				if err != nil {
					return err
				}
				dir = tmp
				if !keep {
					defer os.RemoveAll(tmp)
				}
			} else {
				keep = true
				if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
					return usageError("--dir %s is not empty; the demo needs an empty or new directory", dir)
				}
			}
			var r demo.Reporter = &demoText{a: a}
			if a.jsonOut() {
				r = &demo.Record{}
			}
			root, err := demo.Run(ctx, demo.Options{Dir: dir, Version: "harness/" + version(), Git: safegit.Command}, r)
			if err != nil {
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

// demoText narrates the demo for a person.
type demoText struct {
	a     *app
	root  string
	quiet bool // the workers' facts are summarized, not listed
}

func (t *demoText) section(title string) {
	fmt.Fprintf(t.a.stdout, "\n%s\n", t.a.paint("bold", "== "+title))
}

func (t *demoText) Workspace(root string, git bool) {
	t.root = root
	w := t.a.stdout
	fmt.Fprintln(w, t.a.paint("bold", "harness demo")+": a coding thread, a confirmation, the effect boundary, an audit — offline, from the log.")
	kind := "a git workspace"
	if !git {
		kind = "a workspace (git is not installed; the demo does not need it)"
	}
	fmt.Fprintf(w, "In %s at %s holding cache.toml (ttl_seconds = 60), store in .harness/.\n", kind, root)
	t.section("1. A thread asks for 300; each fact is printed as it is appended")
}

func (t *demoText) Fact(f facts.Fact) {
	if t.quiet {
		return
	}
	fmt.Fprintln(t.a.stdout, t.a.factLine(f))
}

func (t *demoText) Parked(st drive.State) {
	w := t.a.stdout
	t.section("2. Parked: the write waits for a person (nothing runs, no timer)")
	fmt.Fprintf(w, "thread %s is %s at seq %d; the pending request:\n", st.Thread, st.Status, st.Head.Seq)
	for _, p := range st.Waits {
		t.a.printPending(p, t.root)
		fmt.Fprintf(w, "    on the command line: harness approve %s %s --resume\n", st.Thread, p.RequestID)
	}
	t.section("3. You approve (confirmation.answered), and the thread resumes")
}

func (t *demoText) Answered(drive.State) {}

func (t *demoText) Done(st drive.State, audit audit.Audit) {
	w := t.a.stdout
	fmt.Fprintf(w, "thread %s is %s at seq %d. What the record says of the write:\n", st.Thread, st.Status, st.Head.Seq)
	for _, e := range audit.Entries {
		if e.Action == nil {
			continue
		}
		act := e.Action
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  \treport (what the tool said)\t%s: %s\n", act.Report.Status, oneLine(act.Report.Transcript+" "+act.Report.Stdout))
		fmt.Fprintf(tw, "  \tobservation (what the runtime saw)\t%s\n", present.DescribeObservation(act.Observation))
		fmt.Fprintf(tw, "  \teffect state\t%s\n", act.EffectState)
		if act.Check != nil {
			fmt.Fprintf(tw, "  \tcheck (declared before it ran)\t%s %s: %s\n", act.Check.Check.Name, act.Check.Check.Target, act.Check.Verdict)
		}
		tw.Flush()
	}
	t.section("4. Four workers each report success for \"set cache.toml to ttl_seconds = 300\"")
	t.quiet = true
}

func (t *demoText) Workers(ws []demo.Worker) {
	w := t.a.stdout
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tREALLY\tREPORT\tOBSERVATION\tEFFECT\tCHECK\tTHREAD")
	for _, wk := range ws {
		check := "-"
		if wk.Check != nil {
			check = string(wk.Check.Verdict)
		}
		status := string(wk.Status)
		if len(wk.Waits) > 0 {
			status += " on " + string(wk.Waits[0].Kind)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s (%s)\n", wk.Name, wk.Does, wk.Report.Status, present.DescribeObservation(wk.Observation),
			wk.EffectState, check, wk.Thread, status)
	}
	tw.Flush()
	fmt.Fprintln(w, "Every worker said it succeeded. The observation tells diligent and busy from idle (unknown: open until a")
	fmt.Fprintln(w, "person reconciles it) and unwatched (reported: nobody looked); only the declared check tells diligent from busy.")
	t.quiet = false
	t.section("5. harness replay --verify " + demo.Thread)
}

func (t *demoText) Verified(audit audit.Audit, err error) {
	tell.Audit(t.a.stdout, audit, t.a.paint)
	if !tell.Verified(t.a.stdout, audit, err, t.a.paint) {
		fmt.Fprintln(t.a.stdout, "(the demo's own record should verify: this is a bug)")
	}
}
