package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/present/tell"
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
	tell.Fact(sh.a.stdout, f)
	return nil
}

// turn shows a model turn with the request and response bytes kept.
func (sh shower) turn(ctx context.Context, f facts.Fact) error {
	mt, err := facts.Decode[facts.ModelTurn](f)
	if err != nil {
		return fmt.Errorf("thread %s at seq %d: %w", sh.id, f.Seq, err)
	}
	var kept tell.Exchange
	if x := mt.Exchange; x != nil {
		kept.Request, kept.RequestErr = sh.blob(ctx, x.Request)
		kept.Response, kept.ResponseErr = sh.blob(ctx, x.Response)
	}
	if sh.a.jsonOut() {
		return sh.a.printJSON(tell.TurnDoc{Fact: f, Turn: mt, Request: string(kept.Request), Response: string(kept.Response)})
	}
	tell.Turn(sh.a.stdout, sh.id, f, mt, kept)
	return nil
}

// instructions shows the instruction files a turn was given, each with
// the text kept under its digest, and those left out with why.
func (sh shower) instructions(ctx context.Context, f facts.Fact) error {
	p, err := facts.Decode[facts.InstructionsRead](f)
	if err != nil {
		return fmt.Errorf("thread %s at seq %d: %w", sh.id, f.Seq, err)
	}
	files := make([]tell.InstructionDoc, len(p.Files))
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
		return sh.a.printJSON(tell.InstructionsDoc{Fact: f, Turn: p.Turn, Files: files})
	}
	tell.Instructions(sh.a.stdout, sh.id, f.Seq, p.Turn, files)
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
	tell.Action(sh.a.stdout, sh.id, act, call, doc, sh.s.Stock.Tools.Limits().CommandTimeout)
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
var prettyJSON = tell.PrettyJSON

// writeBlock writes text line by line under indent, escaped.
var writeBlock = tell.WriteBlock
