package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread"
)

// verifyGCPercent is the Go collector's GOGC while `replay --verify`
// runs, unless the person set GOGC. What the verifier keeps grows with
// the log (each cause once, and a hash every 64 facts: about 80 bytes a
// fact) while it allocates and drops every fact it reads, so at the
// default of 100 the heap peaks at twice what is kept: at 100,000 facts
// 30 MB for 15 MB live (when it kept every fact's hash). At 50 the peak
// was 6 MiB lower (42 -> 36 MiB anonymous) for a collection about twice
// as often, a few percent of the CPU (the collector took 4% at 100). A
// soft memory limit sized from the log cut more (to 29 MiB) but sat a
// few MiB above the live heap: a log whose fold keeps more a fact would
// have the collector run without end.
const verifyGCPercent = 50

func (a *app) logCmd() *cobra.Command {
	var from uint64
	var follow bool
	cmd := &cobra.Command{
		Use:   "log THREAD [--from N] [-f] [-o text|json|jsonl]",
		Short: "Print a thread's facts: one line each, or losslessly as JSON Lines (-o jsonl); -f follows them",
		Long: `Print a thread's facts from seq N (default 1). -o jsonl writes them as JSON
Lines, losslessly: every field, the payload as JSON and each fact's hash, so an
export parsed back has the same hashes (replay --verify --file checks one).

--follow (-f) goes on printing facts as they are appended, by whatever process
drives the thread, until the thread ends: done, parked, failed or stopped. It
then says so (in text) and exits as run would: 0 done, 3 parked, 1 failed or
stopped; Ctrl-C leaves it (130). With -o jsonl it writes the lines of run's
-o stream-json: each fact as soon as it is appended ({"type":"fact","fact":…},
the fact as -o jsonl writes it), then a result line. A store in a directory is read only when it changed, and let go
of at once, so that the process driving the thread can open it.`,
		Args:              args(1, 1, "THREAD"),
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := args[0]
			if follow && a.output == "json" {
				return usageError("log --follow prints facts as they come: use -o jsonl (a JSON line each, as run -o stream-json writes them), not -o json")
			}
			s, err := a.openThreadRead(ctx, id)
			if err != nil {
				return err
			}
			defer s.Close()
			if follow {
				return a.follow(ctx, s, id, from)
			}
			// The log as its own links have it: a fact changed in place
			// is not printed; the break is the error (replay --verify
			// says more).
			head, err := s.Store.Head(ctx, id)
			if err != nil {
				return err
			}
			log := thread.Chained(id, s.Store.Read(ctx, id, from), head)
			switch a.output {
			case "jsonl":
				return facts.WriteJSONSeq(a.stdout, log)
			case "json":
				all, err := facts.Collect(log)
				if err != nil {
					return err
				}
				return a.printJSON(all)
			}
			for f, err := range log {
				if err != nil {
					return err
				}
				if err := a.printFact(f); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	cmd.Flags().Uint64Var(&from, "from", 1, "the first seq to print")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "go on printing facts as they are appended, until the thread ends (exit code as run's)")
	return cmd
}

// printFact prints a fact as log does: a line, or with -o jsonl the fact
// as one line of JSON.
func (a *app) printFact(f facts.Fact) error {
	if a.output == "jsonl" {
		line, err := f.MarshalJSON()
		if err != nil {
			return err
		}
		_, err = a.stdout.Write(append(line, '\n'))
		return err
	}
	_, err := fmt.Fprintf(a.stdout, "%s  %s  %s\n", tell.FactLine(f), a.paint("dim", f.At.Local().Format("15:04:05")), a.paint("dim", f.Cause))
	return err
}

func (a *app) replayCmd() *cobra.Command {
	var verify bool
	var file string
	var sf sealFlags
	cmd := &cobra.Command{
		Use:   "replay THREAD [--verify] | replay --verify --file LOG.jsonl",
		Short: "Tell a thread's record in order; --verify checks the hash chain and that the fold enabled every step",
		Long: `Re-fold a thread's log and tell its decisions in order: what was asked, what the
model decided (with usage), who confirmed or denied what, and for every action
its report, observation, effect state and check side by side, flagging a
success reported with nothing changed.

--verify also checks the record: the hash chain, that every caused fact was
enabled by the fold at its position (and every posted one accepted there), and
that action records are consistent — a worker's report cannot stand in for the
runtime's observation. The first failure is named and the exit is 1. It then
checks the thread's seals (see below) in your witness log and in those named
with --witness: a seal the log fails is named and the exit is 1; a log with no
seal verifies as ever, and is said to be unsealed. Your own key's seals are
trusted; --key KEY (or a file of keys, one a line) trusts someone else's, and
at least one of their seals must hold. A seal by a key not named is reported
and proves nothing; one whose signature does not verify fails.

` + sealHelp + `

--file verifies a JSON Lines export (harness log -o jsonl) instead of the store.`,
		Args:              args(0, 1, "THREAD"),
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if !verify && (len(sf.keys) > 0 || len(sf.witnesses) > 0) {
				return usageError("--key and --witness check seals: pass --verify too")
			}
			check, err := sf.check()
			if err != nil {
				return err
			}
			if file != "" {
				if !verify {
					return usageError("--file verifies an export: pass --verify too")
				}
				if len(sf.keys) > 0 || len(sf.witnesses) > 0 {
					return usageError("--file verifies an export's chain; seals are checked against a store")
				}
				id := ""
				if len(args) == 1 {
					id = args[0]
				}
				return a.verifyFile(id, file)
			}
			if len(args) != 1 {
				return usageError("replay: name a THREAD (or verify an export with --verify --file LOG.jsonl)")
			}
			id := args[0]
			s, err := a.openThreadRead(ctx, id)
			if err != nil {
				return err
			}
			defer s.Close()
			var replay stock.Replayer
			if !a.jsonOut() {
				replay = tell.ReplayTold(a.stdout, a.paint) // the record is told as it is replayed
			}
			if verify && a.getenv("GOGC") == "" {
				defer debug.SetGCPercent(debug.SetGCPercent(verifyGCPercent))
			}
			var r stock.Replayed
			if verify && !a.jsonOut() {
				r = s.ReplayVerified(ctx, id, check, tell.ReplayVerifiedTold(a.stdout, a.paint)) // one reading of the log
			} else {
				r = s.Replay(ctx, id, verify, check, replay)
			}
			if r.Err != nil && r.Verify == nil {
				return r.Err
			}
			if a.jsonOut() {
				var sj *seal.Summary
				if verify {
					sum := seal.SummaryOf(r.Seals, r.SealsErr)
					sj = &sum
				}
				return a.printAuditJSON(r.Tree.Audit, verify, r.Verify, sj)
			}
			if !tell.Replayed(a.stdout, r, verify, "--key", a.paint) {
				return &exitErr{code: exitError} // said on stdout
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&verify, "verify", false, "check the hash chain and that every caused fact was enabled by the fold at its position")
	cmd.Flags().StringVar(&file, "file", "", "verify this JSON Lines export instead of the store (with --verify)")
	cmd.Flags().StringArrayVar(&sf.keys, "key", nil, "trust seals by this public key (ed25519:…), or by the keys in this file; repeatable (with --verify)")
	cmd.Flags().StringArrayVar(&sf.witnesses, "witness", nil, "read seals from this witness log too (someone else's witness.jsonl); repeatable (with --verify)")
	return cmd
}

// printVerified says whether the record verified; a failure is exit 1.
func (a *app) printVerified(record audit.Audit, verr error) error {
	if !tell.Verified(a.stdout, record, verr, a.paint) {
		return &exitErr{code: exitError} // said on stdout
	}
	return nil
}

// verifyFile verifies a JSON Lines export (stock.Place.VerifyExport).
func (a *app) verifyFile(id, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return asUsage(fmt.Errorf("--file: %w", err))
	}
	defer f.Close()
	p, err := a.place()
	if err != nil {
		return err
	}
	id, n, err := p.VerifyExport(f, id)
	if errors.Is(err, stock.ErrEmptyExport) {
		err = fmt.Errorf("%s %w", file, err)
	}
	if a.jsonOut() {
		return a.printAuditJSON(audit.Audit{Thread: id}, true, err, nil)
	}
	if err := a.printVerified(audit.Audit{Thread: id, Entries: make([]audit.AuditEntry, n)}, err); err != nil {
		return err
	}
	// A file's chain can end anywhere: only seals say where the log
	// really ended, and they are checked against a store.
	fmt.Fprintf(a.stdout, "note: no seal was checked: a file is checked by its hash chain and folds alone, which hold for any cut of it; `harness replay --verify %s` checks the thread's seals in its store\n", present.EscapeLine(id))
	return nil
}

// printAuditJSON writes the audit and the verification as JSON.
func (a *app) printAuditJSON(record audit.Audit, verify bool, verr error, seals *seal.Summary) error {
	if err := a.printJSON(tell.AuditDocOf(record, verify, verr, seals)); err != nil {
		return err
	}
	if verr != nil {
		return &exitErr{code: exitError, err: verr}
	}
	if seals != nil && !seals.OK {
		return &exitErr{code: exitError, err: errors.New(seals.Error)}
	}
	return nil
}

func (a *app) effectsCmd() *cobra.Command {
	var open bool
	cmd := &cobra.Command{
		Use:   "effects [--open]",
		Short: "List the actions of every thread with their effect state, open ones first",
		Long: `List every action of every thread: its tool, what it reported, its effect state
(observed, reported, unknown, none; or running, or in doubt when it started and
its process died), the check's verdict and the paths the runtime saw change.
Open effects — unknown, or found in doubt, and not yet reconciled by a person —
come first; --open lists only those. A change of the workspace that no action
made (found between two actions: a person's edit, another process) is listed
before the action it was found before, by unknown.`,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := a.openRead(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			es, err := s.Effects(ctx, open)
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(tell.EffectDocs(es))
			}
			return tell.Effects(a.stdout, es, a.paint)
		}),
	}
	cmd.Flags().BoolVar(&open, "open", false, "only open effects: unknown or in doubt, not yet reconciled")
	return cmd
}

func (a *app) forkCmd() *cobra.Command {
	var at uint64
	var as string
	cmd := &cobra.Command{
		Use:   "fork THREAD --at SEQ [--as NEWID]",
		Short: "Start a new thread from a prefix of another: what if it had gone otherwise from there",
		Long: `Start a new thread whose log is THREAD's facts 1 to SEQ, followed by a
thread.forked fact naming the origin. The original is not changed. Post a
different answer to the fork and resume it to see what would have happened.
The workspace is not forked: what the fork runs acts on the files as they are.`,
		Example: `  harness fork t1 --at 5          # t1-at5: t1 as it was when it asked to confirm
  harness deny t1-at5 --resume     # ... and what happens when that is denied`,
		Args:              args(1, 1, "THREAD"),
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := args[0]
			if err := checkID(id); err != nil {
				return err
			}
			if !cmd.Flags().Changed("at") {
				return usageError("fork: --at SEQ is required (the last fact to keep; `harness log %s` shows the seqs)", id)
			}
			if as == "" {
				as = rewind.ForkID(id, at)
			}
			if err := checkID(as); err != nil {
				return err
			}
			s, err := a.openThread(ctx, id)
			if err != nil {
				return err
			}
			defer s.Close()
			h, st, err := s.Fork(ctx, id, at, as)
			var seq *rewind.SeqError
			switch {
			case errors.As(err, &seq):
				return fmt.Errorf("fork %s: --at %d is not a seq of the thread (it has facts 1 to %d)", id, at, seq.Last)
			case errors.Is(err, harness.ErrThreadExists):
				return fmt.Errorf("%w; name another with --as", err)
			case err != nil:
				return err
			}
			if a.jsonOut() {
				return a.printJSON(tell.ForkDoc{Thread: as, From: id, At: at, Seq: h.Seq, Status: st.Status})
			}
			fmt.Fprintf(a.stdout, "forked %s at seq %d into %s (%s)\n", id, at, as, present.Plural(h.Seq, "fact", "facts"))
			a.printState(st, s.Place.Root)
			return nil
		}),
	}
	cmd.Flags().Uint64Var(&at, "at", 0, "the last seq of THREAD the fork keeps")
	cmd.Flags().StringVar(&as, "as", "", "the new thread's id (default THREAD-atSEQ)")
	return cmd
}

func (a *app) undoCmd() *cobra.Command {
	var to uint64
	var dryRun bool
	var by string
	cmd := &cobra.Command{
		Use:   "undo THREAD [--to SEQ] [--dry-run]",
		Short: "Restore the files a thread's actions changed (after SEQ) from the bytes the runtime kept",
		Long: `Restore the workspace files that THREAD's actions changed after seq SEQ (default
0: all of them) to what they held before, from the contents the runtime's
observer kept — changes made by shell commands included — and record the undo
as a workspace.restored fact. Where the log recorded modes, a file gets its
earlier mode back too, and a change of mode alone (chmod +x) is undone
("chmod"); like git, only the owner-execute bit of a mode is compared, and
permission bits changed since by someone else are kept. It refuses, naming
the paths and changing nothing, when a file no longer holds what the thread
left there.`,
		Args:              args(1, 1, "THREAD"),
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := args[0]
			if err := a.checkBy(by); err != nil {
				return err
			}
			s, err := a.openThread(ctx, id)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := a.enter(ctx, s, id); err != nil {
				return err
			}
			if head, err := s.Store.Head(ctx, id); err == nil && to > head.Seq {
				return fmt.Errorf("undo %s: --to %d is past the thread's last fact (seq %d)", id, to, head.Seq)
			}
			plan, err := s.Undo(ctx, id, to, dryRun, a.whoami())
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(tell.UndoDocOf(id, to, dryRun, plan))
			}
			tell.Undo(a.stdout, id, to, dryRun, plan)
			return nil
		}),
	}
	cmd.Flags().Uint64Var(&to, "to", 0, "undo the changes after this seq (default 0: every change of the thread)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be restored, and change nothing")
	cmd.Flags().StringVar(&by, "by", "", "who undoes, for the record: your login name, and only it (the default)")
	return cmd
}
