package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/tools"
)

func (a *app) showCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show THREAD [CHILD/]SEQ|ACTION",
		Short: "Show one action whole (request, sandbox, report, output, observation, diffs, check), or one model turn with its kept request and response",
		Long: `Show one step of a thread whole. SEQ is a fact's seq; ACTION an action id
(1-call_1, as the log names it). CHILD/ACTION (t1.1-d1/1-w, as the parent's
prompt and threads name a child's request) is a step of a thread of the tree.

An action: the call and its arguments (a command as the shell reads it, with
its timeout), the sandbox it ran in, the confirmation and who answered it, the
report (status, exit code, time, error), the whole stdout and stderr, the
runtime's own observation with each changed path and its diff (from the
contents the store kept), the effect state and the check.

A model turn: its text and calls, its tokens, and the exact request and
response bytes the provider exchanged, as kept in the store.

Any other fact: its payload.`,
		Args:              args(2, 2, "THREAD and a SEQ or ACTION"),
		ValidArgsFunction: a.completeShow,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, what := args[0], args[1]
			if child, step, ok := strings.Cut(what, "/"); ok {
				if !strings.HasPrefix(child, id+".") {
					return fmt.Errorf("%s is not a thread of %s's tree (a child of %s is named %s.<turn>-<call>)", present.EscapeLine(child), id, id, id)
				}
				id, what = child, step
			}
			s, err := a.openThreadRead(ctx, id)
			if err != nil {
				return err
			}
			defer s.Close()
			rt, err := s.runtime()
			if err != nil {
				return err
			}
			r, err := rt.Thread(s.Stock.Actor, id).Reading(ctx)
			if err != nil {
				return err
			}
			sh := shower{a: a, s: s, id: id, r: r}
			if seq, err := strconv.ParseUint(what, 10, 64); err == nil {
				return sh.seq(ctx, seq)
			}
			act, ok := drive.FindAction(r, what)
			if !ok {
				return fmt.Errorf("thread %s has no action %q nor seq; `harness effects` lists its actions, `harness log %s` its seqs", id, present.EscapeLine(what), id)
			}
			return sh.action(ctx, act)
		}),
	}
	return cmd
}

// completeShow completes THREAD, then the thread's action ids.
func (a *app) completeShow(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return a.threadIDs(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	if len(args) > 1 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := completionContext(cmd)
	defer cancel()
	s, err := a.quietSession(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer s.Close()
	rt, err := s.runtime()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	r, err := rt.Thread(s.Stock.Actor, args[0]).Reading(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, act := range r.Actions() {
		if strings.HasPrefix(act.ID, toComplete) {
			out = append(out, cobra.CompletionWithDesc(act.ID, act.Requested.Adapter+" at seq "+strconv.FormatUint(act.RequestedSeq, 10)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// shower shows steps of one thread.
type shower struct {
	a  *app
	s  *session
	id string
	r  scheduler.Reading
}

// seq shows the fact at seq: its action whole, its model turn, or itself.
func (sh shower) seq(ctx context.Context, seq uint64) error {
	f, err := thread.ReadAt(ctx, sh.s.Store, sh.id, seq)
	if errors.Is(err, thread.ErrNoSeq) {
		head, _ := sh.s.Store.Head(ctx, sh.id)
		return fmt.Errorf("thread %s has no seq %d (it has facts 1 to %d)", sh.id, seq, head.Seq)
	} else if err != nil {
		return errors.Unwrap(err) // the store's error names thread and seq
	}
	if act, ok := drive.ActionAt(sh.r, seq); ok {
		return sh.action(ctx, act)
	}
	switch f.Kind {
	case facts.KindModelTurn:
		return sh.turn(ctx, f)
	case facts.KindInstructionsRead:
		return sh.instructions(ctx, f)
	}
	if sh.a.jsonOut() {
		return sh.a.printJSON(struct {
			Fact facts.Fact `json:"fact"`
		}{f})
	}
	w := sh.a.stdout
	fmt.Fprintln(w, sh.a.factLine(f))
	fmt.Fprintf(w, "  cause  %s\n  at     %s\n", present.EscapeLine(f.Cause), f.At.Local().Format(time.RFC3339))
	b, err := f.MarshalJSON()
	if err == nil {
		var v struct {
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(b, &v) == nil && len(v.Data) > 0 {
			fmt.Fprintln(w, "  data")
			writeBlock(w, "    ", prettyJSON(v.Data))
		}
	}
	return nil
}

// turn shows a model turn with the request and response bytes kept.
func (sh shower) turn(ctx context.Context, f facts.Fact) error {
	mt, err := facts.Decode[facts.ModelTurn](f)
	if err != nil {
		return fmt.Errorf("thread %s at seq %d: %w", sh.id, f.Seq, err)
	}
	var req, resp []byte
	var reqErr, respErr error
	if x := mt.Exchange; x != nil {
		req, reqErr = sh.blob(ctx, x.Request)
		resp, respErr = sh.blob(ctx, x.Response)
	}
	if sh.a.jsonOut() {
		out := struct {
			Fact     facts.Fact      `json:"fact"`
			Turn     facts.ModelTurn `json:"turn"`
			Request  string          `json:"request,omitempty"`
			Response string          `json:"response,omitempty"`
		}{Fact: f, Turn: mt, Request: string(req), Response: string(resp)}
		return sh.a.printJSON(out)
	}
	w := sh.a.stdout
	fmt.Fprintf(w, "model turn %d of thread %s (seq %d, %s)\n", mt.Turn, sh.id, f.Seq, f.At.Local().Format(time.RFC3339))
	if mt.Text != "" {
		fmt.Fprintln(w, "  text")
		writeBlock(w, "    ", mt.Text)
	}
	for _, c := range mt.ToolCalls {
		fmt.Fprintf(w, "  call %s: %s\n", present.EscapeLine(c.ID), present.EscapeLine(c.Name))
		writeBlock(w, "    ", prettyJSON([]byte(c.Args)))
	}
	if q := mt.Question; q != nil {
		fmt.Fprintf(w, "  asks %s\n", present.EscapeLine(q.Text))
	}
	fmt.Fprintf(w, "  tokens  %d in, %d out", mt.Usage.InputTokens, mt.Usage.OutputTokens)
	if u := mt.Usage; u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		fmt.Fprintf(w, " (of the input, %d read from the cache, %d written to it)", u.CacheReadTokens, u.CacheWriteTokens)
	}
	fmt.Fprintln(w)
	if c := mt.Cost; c != nil {
		fmt.Fprintf(w, "  cost  %s (USD %g, price table %s)\n", present.USD(c.USD), c.USD, present.EscapeLine(c.Table))
	}
	x := mt.Exchange
	if x == nil {
		fmt.Fprintln(w, "  exchange  none kept (a scripted model, or a provider that exposes no bytes)")
		return nil
	}
	fmt.Fprintf(w, "  exchange  %s %s → %d, %d bytes\n", present.EscapeLine(x.Provider), present.EscapeLine(x.URL), x.Status, x.Size)
	for _, part := range []struct {
		name string
		b    []byte
		err  error
	}{{"request", req, reqErr}, {"response", resp, respErr}} {
		if part.err != nil {
			fmt.Fprintf(w, "  %s  %s\n", part.name, present.EscapeLine(part.err.Error()))
			continue
		}
		fmt.Fprintf(w, "  %s (%d bytes)\n", part.name, len(part.b))
		writeBlock(w, "    ", prettyJSON(part.b))
	}
	return nil
}

// instructions shows the instruction files a turn was given, each with
// the text kept under its digest, and those left out with why.
func (sh shower) instructions(ctx context.Context, f facts.Fact) error {
	p, err := facts.Decode[facts.InstructionsRead](f)
	if err != nil {
		return fmt.Errorf("thread %s at seq %d: %w", sh.id, f.Seq, err)
	}
	type file struct {
		facts.InstructionFile
		Text string `json:"text,omitempty"`
		Note string `json:"note,omitempty"`
	}
	files := make([]file, len(p.Files))
	for i, fl := range p.Files {
		files[i].InstructionFile = fl
		if fl.Skipped != "" {
			continue
		}
		if b, err := sh.blob(ctx, fl.Digest); err != nil {
			files[i].Note = err.Error()
		} else {
			files[i].Text = string(b)
		}
	}
	if sh.a.jsonOut() {
		return sh.a.printJSON(struct {
			Fact  facts.Fact `json:"fact"`
			Turn  int        `json:"turn"`
			Files []file     `json:"files"`
		}{f, p.Turn, files})
	}
	w := sh.a.stdout
	fmt.Fprintf(w, "instructions of thread %s for turn %d (seq %d): the project's text, given to the model in its system prompt\n", sh.id, p.Turn, f.Seq)
	if len(files) == 0 {
		fmt.Fprintln(w, "  none: the files read before are gone")
	}
	for _, fl := range files {
		if fl.Skipped != "" {
			fmt.Fprintf(w, "  %-7s %s: left out — %s\n", fl.Scope, present.EscapeLine(fl.Path), present.EscapeLine(fl.Skipped))
			continue
		}
		fmt.Fprintf(w, "  %-7s %s: %d bytes, sha256:%s\n", fl.Scope, present.EscapeLine(fl.Path), fl.Size, fl.Digest)
		if fl.Note != "" {
			fmt.Fprintf(w, "    %s\n", present.EscapeLine(fl.Note))
			continue
		}
		writeBlock(w, "    │ ", fl.Text)
	}
	return nil
}

// action shows one action whole (drive.DescribeAction).
func (sh shower) action(ctx context.Context, act scheduler.Action) error {
	call, _ := sh.r.Call(act.Call)
	var kept present.Kept
	if blobs := stock.BlobsOf(sh.s.Store); blobs != nil {
		kept = blobs
	}
	doc := drive.DescribeAction(ctx, sh.id, sh.r, act, kept, sh.s.Place.Root, tools.Preview)
	if sh.a.jsonOut() {
		return sh.a.printJSON(doc)
	}
	args, proposed, diffs := doc.Args, doc.Proposed, doc.Diffs
	w := sh.a.stdout
	esc := present.EscapeLine
	req := act.Requested
	fmt.Fprintf(w, "action %s of thread %s: %s (%s), requested by %s at seq %d\n", esc(act.ID), sh.id, esc(req.Adapter), esc(string(req.Capability)), esc(req.RequestedBy), act.RequestedSeq)
	if call.Ref != "" {
		fmt.Fprintf(w, "  call         %s of model turn %d (seq %d)\n", esc(call.Call.ID), call.Turn, call.TurnSeq)
	}
	if c, ok := sh.a.commandOf(req.Adapter, args, sh.s.Stock.Tools.Limits().CommandTimeout); ok {
		fmt.Fprintf(w, "  command      %s\n", c.timeout())
		for _, line := range c.lines() {
			fmt.Fprintf(w, "    │ %s\n", line)
		}
	} else {
		fmt.Fprintln(w, "  arguments")
		writeBlock(w, "    ", prettyJSON([]byte(args)))
	}
	if req.Sandbox != nil {
		fmt.Fprintf(w, "  sandbox      %s\n", present.SandboxDetail(*req.Sandbox))
	}
	if req.Check != nil {
		fmt.Fprintf(w, "  declares     %s %s\n", esc(req.Check.Name), esc(req.Check.Target))
	}
	if req.Refused != "" {
		fmt.Fprintf(w, "  refused      %s (nobody was asked)\n", esc(req.Refused))
	}
	for _, h := range call.Hooks {
		fmt.Fprintf(w, "  hook         %s\n", present.EscapeLine(present.DescribeHook(h)))
	}
	if call.Confirmation != nil {
		fmt.Fprintf(w, "  confirmation asked at seq %d", call.ConfirmationSeq)
		if a := call.Answer; a != nil {
			verb := "denied"
			if a.Approved {
				verb = "approved"
			}
			fmt.Fprintf(w, "; %s by %s at seq %d", verb, esc(a.By), call.AnswerSeq)
			if a.Reason != "" {
				fmt.Fprintf(w, ": %s", esc(a.Reason))
			}
			if a.Then != "" {
				fmt.Fprintf(w, " (then %s)", a.Then)
			}
		} else {
			fmt.Fprint(w, "; not answered")
		}
		fmt.Fprintln(w)
	}
	for _, c := range doc.ChangedBefore {
		fmt.Fprintf(w, "  before it    the workspace changed (seq %d), by %s, not this action: %s\n", c.Seq, esc(c.By), esc(present.DescribeChanges(c.Changed)))
	}
	if st := act.Started; st != nil {
		fmt.Fprintf(w, "  started      seq %d · observed before %s\n", act.StartedSeq, esc(st.ObservedBefore))
	}
	if c := act.Completed; c != nil {
		rep := c.Report
		fmt.Fprintf(w, "  report       %s, seq %d", rep.Status, act.CompletedSeq)
		switch {
		case strings.HasPrefix(rep.Transcript, "$ "):
			fmt.Fprintf(w, " · %s", present.ExitLine(rep))
		case present.Took(rep) != "":
			fmt.Fprintf(w, " · took %s", present.Took(rep))
		}
		fmt.Fprintln(w)
		if rep.Error != "" {
			fmt.Fprintf(w, "    error      %s\n", esc(rep.Error))
		}
		if rep.ClaimedState != "" {
			fmt.Fprintf(w, "    claims     %s\n", esc(rep.ClaimedState))
		}
		for _, part := range []struct{ name, text string }{{"stdout", rep.Stdout}, {"stderr", rep.Stderr}, {"transcript", rep.Transcript}} {
			if part.text == "" {
				continue
			}
			fmt.Fprintf(w, "  %-12s %d bytes\n", part.name, len(part.text))
			for _, line := range strings.Split(strings.TrimSuffix(part.text, "\n"), "\n") {
				fmt.Fprintf(w, "    │ %s\n", esc(line))
			}
		}
		o := c.Observation
		fmt.Fprintf(w, "  observation  %s", present.DescribeObservation(o))
		if o.Available {
			fmt.Fprintf(w, " · before %s, after %s", shortDigest(o.Before), shortDigest(o.After))
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  effect       %s\n", c.EffectState)
	}
	if in := act.Interrupted; in != nil {
		label := "in doubt   "
		if in.Cancelled {
			label = "interrupted"
		}
		fmt.Fprintf(w, "  %s  seq %d: %s\n", label, act.InterruptedSeq, present.Describe(interruptedFact(in)))
	}
	if proposed != "" {
		fmt.Fprintln(w, "  proposed     not run: the change it would make to the workspace as it is now")
		writeBlock(w, "    ", proposed)
	}
	for _, d := range diffs {
		fmt.Fprintf(w, "  changed      %s (%s)\n", esc(d.Path), d.Kind)
		if d.Note != "" {
			fmt.Fprintf(w, "    %s\n", d.Note)
		}
		if d.Diff != "" {
			writeBlock(w, "    ", d.Diff)
		}
	}
	if ch := act.Check; ch != nil {
		fmt.Fprintf(w, "  check        %s %s: %s, seq %d", esc(ch.Check.Name), esc(ch.Check.Target), ch.Verdict, act.CheckSeq)
		if ch.Reason != "" {
			fmt.Fprintf(w, " — %s", esc(ch.Reason))
		}
		fmt.Fprintln(w)
	}
	for _, h := range act.Hooks {
		fmt.Fprintf(w, "  hook after   %s\n", present.EscapeLine(present.DescribeHook(h)))
	}
	if rc := act.Reconciled; rc != nil {
		fmt.Fprintf(w, "  reconciled   %s by %s at seq %d", rc.Decision, esc(rc.By), act.ReconciledSeq)
		if rc.Note != "" {
			fmt.Fprintf(w, ": %s", esc(rc.Note))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// blob reads kept bytes.
func (sh shower) blob(ctx context.Context, digest string) ([]byte, error) {
	blobs := stock.BlobsOf(sh.s.Store)
	if blobs == nil {
		return nil, errors.New("this store keeps no contents")
	}
	b, err := blobs.GetBlob(ctx, digest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the content %s was not kept (larger than %d bytes, or never read)", shortDigest(digest), action.DefaultBlobCap)
	}
	return b, err
}

// prettyJSON indents JSON; anything else is returned as it is.
func prettyJSON(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") == nil {
		return out.String()
	}
	return string(b)
}

// writeBlock writes text line by line under indent, escaped.
func writeBlock(w io.Writer, indent, text string) {
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fmt.Fprintf(w, "%s%s\n", indent, present.EscapeLine(line))
	}
}
