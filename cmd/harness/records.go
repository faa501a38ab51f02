package main

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/stock"
)

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
			log := s.Store.Read(ctx, id, from)
			switch a.output {
			case "jsonl":
				return facts.WriteJSONSeq(a.stdout, log)
			case "json":
				all := []facts.Fact{}
				for f, err := range log {
					if err != nil {
						return err
					}
					all = append(all, f)
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
	_, err := fmt.Fprintf(a.stdout, "%s  %s  %s\n", a.factLine(f), a.paint("dim", f.At.Local().Format("15:04:05")), a.paint("dim", f.Cause))
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
			var verr, serr error
			var seals seal.Report
			if verify {
				verr = audit.VerifyLog(ctx, s.Store, s.Stock.Actor, id)
				seals, serr = s.Place.VerifySeals(ctx, a.getenv, s.Store, id, check)
			}
			tree, err := audit.ReplayTree(ctx, s.Store, s.Stock.Actor, id)
			record := tree.Audit
			if err != nil && verr == nil {
				return err
			}
			if a.jsonOut() {
				var sj *seal.Summary
				if verify {
					sum := seal.SummaryOf(seals, serr)
					sj = &sum
				}
				return a.printAuditJSON(record, verify, verr, sj)
			}
			if err == nil {
				a.printAudit(record)
				a.printTree(tree.Children, "")
			}
			if verify {
				verified := a.printVerified(id, record, verr)
				if err := a.printSeals(seals, serr); err != nil || verified != nil {
					return cmp.Or(verified, err)
				}
				if len(tree.Children) == 0 {
					return nil
				}
				n, verbs := treeSize(tree.Children), "threads verify"
				if n == 1 {
					verbs = "thread verifies"
				}
				fmt.Fprintf(a.stdout, "%s the tree: %d child %s, each spawn has its child, and each report names its child's final head\n",
					a.paint("green", "verified:"), n, verbs)
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

// printAudit tells the audit, one line per fact, with each action's
// report, observation, effect state and check side by side.
func (a *app) printAudit(record audit.Audit) {
	w := a.stdout
	fmt.Fprintf(w, "replay of thread %s\n", record.Thread)
	for _, e := range record.Entries {
		fmt.Fprintln(w, a.factLine(e.Fact))
		if e.Action == nil {
			continue
		}
		act := e.Action
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		report := string(act.Report.Status)
		if act.Report.ClaimedState != "" {
			report += "; claims " + oneLine(act.Report.ClaimedState)
		}
		if act.Report.Error != "" {
			report += "; " + oneLine(act.Report.Error)
		}
		fmt.Fprintf(tw, "      \treport\t%s\n", report)
		fmt.Fprintf(tw, "      \tobservation\t%s\n", present.DescribeObservation(act.Observation))
		fmt.Fprintf(tw, "      \teffect\t%s\n", act.EffectState)
		check := "none declared"
		if act.Check != nil {
			check = fmt.Sprintf("%s %s: %s", oneLine(string(act.Check.Check.Name)), oneLine(act.Check.Check.Target), act.Check.Verdict)
			if act.Check.Reason != "" {
				check += " — " + oneLine(act.Check.Reason)
			}
		}
		fmt.Fprintf(tw, "      \tcheck\t%s\n", check)
		if out := commandSummary(act.Report, liveLines); len(out) > 0 {
			fmt.Fprintf(tw, "      \tcommand\t%s\n", out[len(out)-1])
			for _, line := range out[:len(out)-1] {
				fmt.Fprintf(tw, "      \t\t%s\n", line)
			}
		}
		if act.Flag != "" {
			fmt.Fprintf(tw, "      \t%s\t%s\n", a.paint("yellow", "⚑ flag"), present.EscapeLine(act.Flag))
		}
		tw.Flush()
	}
	line := fmt.Sprintf("status: %s", record.Status)
	if record.Reason != "" {
		line += " (" + oneLine(record.Reason) + ")"
	}
	for _, wt := range record.Waits {
		line += fmt.Sprintf("; waits for %s %s", wt.Kind, oneLine(wt.RequestID))
	}
	fmt.Fprintln(w, line)
}

// printVerified says whether the record verified; a failure is exit 1.
func (a *app) printVerified(id string, record audit.Audit, verr error) error {
	if verr != nil {
		var ve *audit.VerifyError
		if errors.As(verr, &ve) {
			fmt.Fprintf(a.stdout, "%s thread %s at seq %d (%s, cause %s): %s\n", a.paint("red", "verification failed:"), ve.Thread, ve.Seq, oneLine(string(ve.Kind)), oneLine(ve.Cause), oneLine(ve.Reason))
		} else {
			fmt.Fprintf(a.stdout, "%s %s\n", a.paint("red", "verification failed:"), oneLine(verr.Error()))
		}
		return &exitErr{code: exitError} // said on stdout
	}
	fmt.Fprintf(a.stdout, "%s %d facts: the hash chain is intact, every caused fact was enabled by the fold at its position, every action record is consistent\n",
		a.paint("green", "verified:"), len(record.Entries))
	return nil
}

// verifyFile verifies a JSON Lines export.
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
	cfg, err := harness.NewConfig()
	if err != nil {
		return err
	}
	st, err := stock.NewStock(p, cfg)
	if err != nil {
		return err
	}
	fs, err := facts.ParseJSON(f)
	if err == nil && len(fs) == 0 {
		err = fmt.Errorf("%s holds no facts", file)
	}
	if err == nil {
		if id == "" {
			id = fs[0].Thread
		}
		err = audit.VerifyFacts(st.Actor, id, sliceSeq(fs))
	}
	if a.jsonOut() {
		return a.printAuditJSON(audit.Audit{Thread: id}, true, err, nil)
	}
	return a.printVerified(id, audit.Audit{Thread: id, Entries: make([]audit.AuditEntry, len(fs))}, err)
}

func sliceSeq(fs []facts.Fact) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		for _, f := range fs {
			if !yield(f, nil) {
				return
			}
		}
	}
}

// printAuditJSON writes the audit and the verification as JSON.
func (a *app) printAuditJSON(record audit.Audit, verify bool, verr error, seals *seal.Summary) error {
	type actionJSON struct {
		ActionID    string               `json:"action_id"`
		Tool        string               `json:"tool,omitempty"`
		Report      facts.Report         `json:"report"`
		Observation facts.Observation    `json:"observation"`
		EffectState facts.EffectState    `json:"effect_state"`
		Check       *facts.CheckRecorded `json:"check,omitempty"`
		Flag        string               `json:"flag,omitempty"`
	}
	type entryJSON struct {
		Seq     uint64      `json:"seq"`
		Kind    facts.Kind  `json:"kind"`
		Cause   string      `json:"cause"`
		At      time.Time   `json:"at"`
		Summary string      `json:"summary"`
		Action  *actionJSON `json:"action,omitempty"`
	}
	type verifyJSON struct {
		OK     bool       `json:"ok"`
		Error  string     `json:"error,omitempty"`
		Seq    uint64     `json:"seq,omitempty"`
		Kind   facts.Kind `json:"kind,omitempty"`
		Cause  string     `json:"cause,omitempty"`
		Reason string     `json:"reason,omitempty"`
		// Seals are the verdicts on the thread's seals (not of an export).
		Seals *seal.Summary `json:"seals,omitempty"`
	}
	out := struct {
		Thread  string         `json:"thread"`
		Status  harness.Status `json:"status,omitempty"`
		Reason  string         `json:"reason,omitempty"`
		Entries []entryJSON    `json:"entries"`
		Verify  *verifyJSON    `json:"verify,omitempty"`
	}{Thread: record.Thread, Status: record.Status, Reason: record.Reason, Entries: []entryJSON{}}
	for _, e := range record.Entries {
		f := e.Fact
		ej := entryJSON{Seq: f.Seq, Kind: f.Kind, Cause: f.Cause, At: f.At, Summary: present.Describe(f)}
		if e.Action != nil {
			ej.Action = &actionJSON{e.Action.ActionID, e.Action.Tool, e.Action.Report, e.Action.Observation, e.Action.EffectState, e.Action.Check, e.Action.Flag}
		}
		out.Entries = append(out.Entries, ej)
	}
	if verify {
		v := &verifyJSON{OK: verr == nil}
		if verr != nil {
			v.Error = verr.Error()
			var ve *audit.VerifyError
			if errors.As(verr, &ve) {
				v.Seq, v.Kind, v.Cause, v.Reason = ve.Seq, ve.Kind, ve.Cause, ve.Reason
			}
		}
		v.Seals = seals
		out.Verify = v
	}
	if err := a.printJSON(out); err != nil {
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
			rt, err := s.runtime()
			if err != nil {
				return err
			}
			es, err := audit.Effects(ctx, rt, s.Stock.Actor)
			if err != nil {
				return err
			}
			if open {
				es = slices.DeleteFunc(es, func(e audit.Effect) bool { return !e.Open })
			}
			if a.jsonOut() {
				type effectJSON struct {
					Thread   string             `json:"thread"`
					ActionID string             `json:"action_id"`
					Tool     string             `json:"tool"`
					Seq      uint64             `json:"seq"`
					At       time.Time          `json:"at"`
					Stage    scheduler.Stage    `json:"stage"`
					State    facts.EffectState  `json:"effect_state,omitempty"`
					InDoubt  bool               `json:"in_doubt,omitempty"`
					Report   facts.ReportStatus `json:"report,omitempty"`
					Check    facts.Verdict      `json:"check,omitempty"`
					Changed  []string           `json:"changed,omitempty"`
					Open     bool               `json:"open"`
					Decision facts.Decision     `json:"decision,omitempty"`
					By       string             `json:"by,omitempty"`
				}
				out := []effectJSON{}
				for _, e := range es {
					out = append(out, effectJSON{e.Thread, e.ActionID, e.Tool, e.Seq, e.At, e.Stage, e.State, e.InDoubt, e.Report, e.Check, e.Changed, e.Open, e.Decision, e.By})
				}
				return a.printJSON(out)
			}
			if len(es) == 0 {
				fmt.Fprintln(a.stdout, "no actions")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "THREAD\tACTION\tTOOL\tREPORT\tEFFECT\tCHECK\tCHANGED\tOPEN")
			for _, e := range es {
				state := string(e.State)
				switch {
				case e.InDoubt:
					state = "in doubt"
				case e.Stage == scheduler.StageStarted:
					state = "running"
				case state == "":
					state = string(e.Stage)
				}
				if e.By != "" {
					// A change no action made, found before action e.ActionID.
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Thread, "before "+oneLine(e.ActionID), "by "+oneLine(e.By), "-", state,
						"-", dash(oneLine(strings.Join(e.Changed, ", "))), "-")
					continue
				}
				openCol := "-"
				switch {
				case e.Open:
					openCol = a.paint("yellow", "open")
				case e.Decision != "":
					openCol = "settled: " + string(e.Decision)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Thread, oneLine(e.ActionID), oneLine(e.Tool), dash(string(e.Report)), state,
					dash(string(e.Check)), dash(oneLine(strings.Join(e.Changed, ", "))), openCol)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&open, "open", false, "only open effects: unknown or in doubt, not yet reconciled")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
			s, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.threadExists(ctx, id); err != nil {
				return err
			}
			if head, err := s.Store.Head(ctx, id); err == nil && (at < 1 || at > head.Seq) {
				return fmt.Errorf("fork %s: --at %d is not a seq of the thread (it has facts 1 to %d)", id, at, head.Seq)
			}
			h, err := rewind.Fork(ctx, s.Store, id, at, as)
			if errors.Is(err, harness.ErrThreadExists) {
				return fmt.Errorf("%w; name another with --as", err)
			}
			if err != nil {
				return err
			}
			st, err := s.Inspect(ctx, as)
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(struct {
					Thread string         `json:"thread"`
					From   string         `json:"from"`
					At     uint64         `json:"at"`
					Seq    uint64         `json:"seq"`
					Status harness.Status `json:"status"`
				}{as, id, at, h.Seq, st.Status})
			}
			fmt.Fprintf(a.stdout, "forked %s at seq %d into %s (%d facts)\n", id, at, as, h.Seq)
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
			rt, err := s.runtime()
			if err != nil {
				return err
			}
			var plan rewind.UndoPlan
			if dryRun {
				plan, err = rewind.PlanUndo(ctx, rt, s.Stock.Actor, id, to)
			} else {
				plan, err = rewind.Undo(ctx, rt, s.Stock.Actor, id, to, a.whoami())
			}
			if err != nil {
				return err
			}
			if a.jsonOut() {
				type stepJSON struct {
					Path        string   `json:"path"`
					Action      string   `json:"action"`
					Left        string   `json:"left,omitempty"`
					Restore     string   `json:"restore,omitempty"`
					LeftMode    uint32   `json:"left_mode,omitempty"`
					RestoreMode uint32   `json:"restore_mode,omitempty"`
					Seqs        []uint64 `json:"seqs"`
				}
				out := struct {
					Thread string     `json:"thread"`
					To     uint64     `json:"to"`
					DryRun bool       `json:"dry_run"`
					Steps  []stepJSON `json:"steps"`
				}{id, to, dryRun, []stepJSON{}}
				for _, st := range plan.Steps {
					out.Steps = append(out.Steps, stepJSON{st.Path, undoVerb(st), st.Left, st.Restore, st.LeftMode, st.RestoreMode, st.Seqs})
				}
				return a.printJSON(out)
			}
			if len(plan.Steps) == 0 {
				fmt.Fprintf(a.stdout, "nothing to undo: the files %s changed after seq %d hold what they held then\n", id, to)
				return nil
			}
			verb := "restored"
			if dryRun {
				verb = "would restore"
			}
			fmt.Fprintf(a.stdout, "%s %d path(s) to how they were at seq %d of %s:\n", verb, len(plan.Steps), to, id)
			for _, st := range plan.Steps {
				seqs := make([]string, len(st.Seqs))
				for i, q := range st.Seqs {
					seqs[i] = strconv.FormatUint(q, 10)
				}
				fmt.Fprintf(a.stdout, "  %-8s %s (%schanged at seq %s)\n", undoVerb(st), present.EscapeLine(st.Path), undoModeNote(st), strings.Join(seqs, ", "))
			}
			if dryRun {
				fmt.Fprintln(a.stdout, "dry run: nothing was changed")
			}
			return nil
		}),
	}
	cmd.Flags().Uint64Var(&to, "to", 0, "undo the changes after this seq (default 0: every change of the thread)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be restored, and change nothing")
	cmd.Flags().StringVar(&by, "by", "", "who undoes, for the record: your login name, and only it (the default)")
	return cmd
}

func undoVerb(s rewind.UndoStep) string {
	switch {
	case s.Restore == "":
		return "remove"
	case s.Left == "":
		return "recreate"
	case s.ModeOnly():
		return "chmod"
	}
	return "restore"
}

// undoModeNote says how a step changes a file's mode ("mode 0755 → 0644, "),
// or "" where it does not, or the log did not record it.
func undoModeNote(s rewind.UndoStep) string {
	switch {
	case s.Restore == "" || s.RestoreMode == 0:
		return ""
	case s.LeftMode == 0 && s.Left == "":
		return fmt.Sprintf("mode %04o, ", s.RestoreMode)
	case s.LeftMode != 0 && s.LeftMode != s.RestoreMode:
		return fmt.Sprintf("mode %04o → %04o, ", s.LeftMode, s.RestoreMode)
	}
	return ""
}
