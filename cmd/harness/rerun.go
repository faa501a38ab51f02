package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

func (a *app) rerunCmd() *cobra.Command {
	var (
		r             rerunFlags
		status, query string
		all           bool
		concurrency   int
	)
	cmd := &cobra.Command{
		Use:   "rerun THREAD... --model SPEC | rerun --all [--status STATUS] --model SPEC | rerun --query QUERY --model SPEC",
		Short: "Re-run recorded threads against another model: where it diverges, what it would have done, what it costs",
		Long: `Offer another model (or another system prompt, other instructions, fewer tools)
the conversation of a recorded thread, as a new thread linked to it (THREAD-rr-KEY,
KEY the digest of the model spec and the overrides). While the new model makes the
calls the original made (the same tools, the same arguments as JSON, in the same
order) it is served the original's recorded results: nothing runs and nobody is
asked; each served result names the seq it was copied from. What a person said
after a turn of the original — the answer to the same question, a next message —
is offered to the rerun after its same turn, a copy naming its seq. At the first
divergence the rerun stops, or, with --live, goes on for real in a scratch copy of
the workspace with the original's file effects undone back to that point — never
in your workspace. A live rerun cut off midway goes on in the same scratch copy
when run again.

The comparison shows the turns side by side, where and why they diverged (another
tool, other arguments and how, a call the original did not make, an earlier
stop), the checks, tokens and cost on each side, and the approvals the rerun
would have needed. The original is never changed; the rerun is a thread like any
other (replay --verify, search, rerun it again).

Several threads (ids, --all, or --query) are a suite: at most --concurrency at
once, one table. A thread's rerun under the same key is never made twice: run the
suite again after a stop and it resumes what was cut off and reruns nothing twice.`,
		Example: `  harness rerun t1 --model openai:gpt-4.1-mini
  harness rerun t1 --model scripted:b.jsonl -o json
  harness rerun --all --status done --model anthropic:claude-sonnet-4-5
  harness rerun --query 'write_file status:done' --model openai:gpt-4.1 --concurrency 4`,
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, ids []string) error {
			ctx := cmd.Context()
			chosen := 0
			for _, on := range []bool{len(ids) > 0, all, query != ""} {
				if on {
					chosen++
				}
			}
			switch {
			case r.spec == "":
				return usageError("rerun: --model SPEC is required (the model to rerun on)")
			case chosen != 1:
				return usageError("rerun: name the threads one way: THREAD..., --all, or --query QUERY")
			case cmd.Flags().Changed("status") && !all:
				return usageError("rerun: --status goes with --all")
			case status != "" && !slices.Contains(drive.Statuses, status):
				return usageError("rerun: --status %s: want one of %s", status, strings.Join(drive.Statuses, ", "))
			case r.as != "" && len(ids) != 1:
				return usageError("rerun: --as names the rerun of one thread")
			case r.live && (len(ids) != 1 || all || query != ""):
				return usageError("rerun: --live reruns one thread (each in its own scratch copy)")
			case r.approve != "" && !r.live:
				return usageError("rerun: --approve answers what a --live rerun runs; a rerun without it runs nothing")
			case concurrency < 1:
				return usageError("rerun: --concurrency %d: want 1 or more", concurrency)
			}
			for _, id := range append(ids, r.as) {
				if id == "" {
					continue
				}
				if err := checkID(id); err != nil {
					return err
				}
			}
			r.toolsSet = cmd.Flags().Changed("tools")
			r.all, r.status, r.query, r.concurrency = all, status, query, concurrency
			return a.rerun(ctx, r, ids, "")
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&r.spec, "model", "", "the model to rerun on: scripted:FILE, openai:MODEL or anthropic:MODEL")
	fl.StringVar(&r.as, "as", "", "the rerun's thread id, for one thread (default THREAD-rr-KEY)")
	fl.BoolVar(&r.live, "live", false, "go on past the divergence, for real, in a scratch copy of the workspace with the original's file effects after that point undone (refused if a kept content is missing); one thread")
	fl.StringVar(&r.approve, "approve", "", "with --live: which confirmations of what the rerun runs are approved: ask (park), writes or all")
	fl.BoolVar(&all, "all", false, "rerun every thread that is no rerun (with --status, of that status)")
	fl.StringVar(&status, "status", "", "with --all: only the threads of this `STATUS` (done, parked, failed, stopped, resumable)")
	fl.StringVar(&query, "query", "", "rerun the threads a search `QUERY` finds (harness search's syntax)")
	fl.StringVar(&r.promptFile, "system-prompt-file", "", "offer the system prompt in `FILE` instead of the original's (an override: part of the key)")
	fl.StringVar(&r.instructionsFile, "instructions", "", "give the model the instructions in `FILE` instead of the instruction files (AGENTS.md) it would read (an override: part of the key)")
	fl.StringSliceVar(&r.tools, "tools", nil, "offer only these tools, each one the original was offered (an override: part of the key)")
	fl.StringArrayVar(&r.withoutTools, "without-tool", nil, "do not offer this tool, one the original was offered; repeat for more (an override: part of the key)")
	fl.IntVar(&concurrency, "concurrency", 2, "how many reruns of a suite run at once")
	return cmd
}

// rerunFlags are the flags of rerun.
type rerunFlags struct {
	spec, as, approve, promptFile, instructionsFile string
	tools, withoutTools                             []string
	toolsSet, live, all                             bool
	status, query                                   string
	concurrency                                     int
}

// request is the rerun the flags ask for (stock.Rerun), its files read.
func (r rerunFlags) request(ids []string, again string) (stock.Rerun, error) {
	req := stock.Rerun{Threads: ids, All: r.all, Status: harness.Status(r.status), Query: r.query, Again: again,
		As: r.as, Live: r.live, WithoutTools: r.withoutTools, Concurrency: r.concurrency}
	if r.toolsSet {
		req.Tools = append([]string{}, r.tools...)
	}
	var err error
	if r.promptFile != "" {
		if req.SystemPrompt, err = rerun.ReadOverrideFile(r.promptFile); err != nil {
			return req, asUsage(fmt.Errorf("--system-prompt-file: %w", err))
		}
	}
	if r.instructionsFile != "" {
		if req.Instructions, err = rerun.ReadOverrideFile(r.instructionsFile); err != nil {
			return req, asUsage(fmt.Errorf("--instructions: %w", err))
		}
	}
	approval, err := drive.NewApproval(cmp.Or(r.approve, "ask"), nil, nil)
	if err != nil {
		return req, asUsage(fmt.Errorf("--approve: %w", err))
	}
	req.Approval = &approval
	return req, nil
}

// rerun reruns ids (or the threads of --all or --query) as r says
// (stock.Session.Rerun); again, when set, is a rerun to go on with as it
// was begun (resume of a rerun): its recorded model spec, overrides and
// scratch copy.
func (a *app) rerun(ctx context.Context, r rerunFlags, ids []string, again string) error {
	req, err := r.request(ids, again)
	if err != nil {
		return err
	}
	p, err := a.place()
	if err != nil {
		return err
	}
	s, err := a.newSession(p, nil, req.SessionOptions(r.spec, cwdOrEmpty()))
	if err != nil {
		return err
	}
	defer s.Close()
	if req.Model, err = stock.LoadModel(s.Model, s.ModelOptions()...); err != nil {
		return asUsage(fmt.Errorf("--model: %w", err))
	}
	if err := a.openStore(ctx, s); err != nil {
		return err
	}
	req.SearchWait = a.wait
	req.OnScratch = tell.RerunScratch(a.stderr, a.paint)
	req.OnRow = func(r rerun.Row) {
		if !a.jsonOut() {
			fmt.Fprintf(a.stderr, "harness: reran %s\n", r.Thread)
		}
	}
	res, err := s.Rerun(ctx, req)
	switch {
	case errors.Is(err, rerun.ErrOverride) && again != "":
		return fmt.Errorf("%w (begin it again: harness rerun THREAD --as %s with the same overrides)", err, again)
	case errors.Is(err, rerun.ErrOverride), errors.Is(err, search.ErrQuery), errors.Is(err, search.ErrCursor):
		return asUsage(err)
	case errors.Is(err, harness.ErrUnknownThread):
		return fmt.Errorf("%w; `harness threads` lists the threads", err)
	case res.From != "":
		err = scratchHint(err, res.From)
	}
	if res.Report == nil {
		if err != nil || res.Rows == nil {
			return err
		}
		if a.jsonOut() {
			return a.printJSON(tell.RerunSuiteDoc{Model: res.Model, Key: res.Key, Rows: res.Rows})
		}
		tell.RerunSuite(a.stdout, res.Rows)
		return nil
	}
	rep := res.Report
	if a.jsonOut() {
		if perr := a.printJSON(rep); perr != nil {
			return perr
		}
	} else {
		tell.Rerun(a.stdout, rep)
	}
	if err == nil && rep.Outcome == harness.StatusParked {
		return &exitErr{code: exitParked, err: fmt.Errorf("the live rerun %s waits for a person (approve with --approve)", rep.Rerun)}
	}
	return err
}

// resumeRerun goes on with thread id, when it is a rerun, as harness
// rerun does (it needs the original's log to serve from, and runs on the
// model it records): it reports whether it was one. The session s is
// closed first: rerun opens its own.
func (a *app) resumeRerun(ctx context.Context, s *stock.Session, id string, f *driveFlags) (bool, error) {
	link, from, err := rerun.Link(ctx, s.Store, id)
	if err != nil || link == nil {
		return false, err
	}
	if f.changed("model") {
		return true, usageError("resume %s: a rerun of %s goes on on the model it records (%s); to rerun on another, run harness rerun %s --model SPEC", id, from, present.EscapeLine(link.Model), from)
	}
	r := rerunFlags{spec: link.Model, concurrency: 1}
	if link.Live {
		r.approve = f.approve
	}
	a.printf("%s %s is a rerun of %s: it goes on as harness rerun %s --as %s does\n", a.paint("bold", "harness:"), id, from, from, id)
	if err := s.Close(); err != nil {
		return true, err
	}
	return true, a.rerun(ctx, r, nil, id)
}

// scratchHint says, of a live rerun that cannot go on in its scratch
// copy, how to begin another.
func scratchHint(err error, from string) error {
	if !errors.Is(err, rerun.ErrScratch) {
		return err
	}
	return fmt.Errorf("%w (harness rerun %s --live --as NEWID begins another)", err, from)
}
