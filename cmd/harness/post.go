package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/thread"
)

// answerFlags are the flags every way of posting shares.
type answerFlags struct {
	by     string
	resume bool
	drive  driveFlags
	stops  bool // a deny --stop: the thread stops at its next resume
}

func (f *answerFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.by, "by", "", "who answers, for the record: your login name, and only it (the default)")
	cmd.Flags().BoolVar(&f.resume, "resume", false, "resume the thread at once after posting")
	f.drive.add(cmd)
}

func (a *app) postCmd() *cobra.Command {
	var f answerFlags
	var data, key string
	cmd := &cobra.Command{
		Use:   "post THREAD KIND [--data JSON|@FILE|-] [--key K]",
		Short: "Append a fact from outside: a message, an answer, a reconciliation",
		Long: `Append an ingress fact to a thread: one of ` + drive.IngressKindList() + `.
The payload is JSON (--data '{...}', --data @file.json, or --data - for stdin)
and must fit the kind exactly; an answer must name an open request of the
thread. Nothing is appended otherwise.

--key is the idempotency key: posting again with the same key appends nothing.
Answers have a key by default (confirm-<request>, answer-<request>,
reconcile-<action>), shared with approve, deny, answer and the prompt, so an
answer given twice is appended once.`,
		Example: `  harness post t1 confirmation.answered --data '{"request_id": "1-call_1", "approved": true}'
  harness post t1 effect.reconciled --data '{"action_id": "1-call_1", "decision": "accept", "note": "checked"}' --resume
  harness post t1 user.message --data '{"text": "Also update the docs"}' --key docs-1 --resume`,
		Args: args(2, 2, "THREAD and KIND"),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return a.threadIDs(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
			}
			if len(args) == 1 {
				return strings.Split(drive.IngressKindList(), ", "), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			id, kind := args[0], facts.Kind(args[1])
			if err := checkID(id); err != nil {
				return err
			}
			if !slices.Contains(facts.IngressKinds, kind) {
				return usageError("kind %q cannot be posted; post one of %s", kind, drive.IngressKindList())
			}
			if data == "" {
				return usageError("post %s: --data is required (the payload, JSON); e.g. %s", kind, drive.Example(kind))
			}
			raw, err := drive.ReadPayload(data, a.stdin)
			if err != nil {
				return usageError("--data %s: %v", data, err)
			}
			if err := a.checkBy(f.by); err != nil {
				return err
			}
			d, req, err := drive.DraftOf(kind, raw, a.whoami())
			if err != nil {
				return asUsage(fmt.Errorf("--data for %w", err))
			}
			if key == "" {
				key = drive.PostKey(kind, req)
			}
			if err := facts.ValidateCause(facts.IngressCause(key)); err != nil {
				return usageError("--key %q: %v", key, err)
			}
			return a.post(cmd.Context(), id, d, key, &f)
		}),
	}
	cmd.Flags().StringVar(&data, "data", "", "the payload: JSON, @FILE, or - to read stdin")
	cmd.Flags().StringVar(&key, "key", "", "the idempotency key: a post with a key already used appends nothing")
	f.add(cmd)
	return cmd
}

func (a *app) approveCmd(approve bool) *cobra.Command {
	var f answerFlags
	var reason string
	var all, stop bool
	use, short := "approve THREAD [REQUEST] [--all]", "Approve a tool call the thread waits on (the only open one, if REQUEST is left out; every one with --all)"
	long := `Approve a tool call the thread waits on: it runs when the thread is resumed
(--resume resumes it at once). Approving what was approved already appends
nothing and says so; a request denied already is not approved.`
	if !approve {
		use, short = "deny THREAD [REQUEST] [--all] [--reason TEXT] [--stop]", "Deny a tool call the thread waits on: it does not run, the model is told, and the thread goes on (--stop: it stops)"
		long = `Deny a tool call the thread waits on: it does not run. The model is told (with
the reason) and the thread goes on with its next model turn; with --stop, no
other call of the turn runs and no model turn follows, until a person writes to
the thread again (harness continue). Denying what was denied already appends
nothing and says so; a request approved already is not denied.`
	}
	cmd := &cobra.Command{
		Use:               use,
		Short:             short,
		Long:              long,
		Args:              args(1, 2, "THREAD and optionally REQUEST"),
		ValidArgsFunction: a.completeRequests(fold.WaitConfirmation),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := args[0]
			if err := checkID(id); err != nil {
				return err
			}
			if err := a.checkBy(f.by); err != nil {
				return err
			}
			var request string
			if len(args) == 2 {
				request = args[1]
			}
			if all && request != "" {
				return usageError("name a REQUEST or pass --all, not both")
			}
			r := drive.Reply{Kind: fold.WaitConfirmation, Request: request, Approved: approve, By: a.whoami(), Reason: reason}
			if !approve {
				r.Then = facts.DenyContinue
				if stop {
					r.Then, f.stops = facts.DenyStop, true
				}
			}
			if all {
				return a.answerAll(ctx, id, &f, r)
			}
			return a.answerRequest(ctx, id, r, &f)
		}),
	}
	cmd.Flags().BoolVar(&all, "all", false, "answer every confirmation the thread waits on")
	if !approve {
		cmd.Flags().StringVar(&reason, "reason", "", "why, for the record and the model")
		cmd.Flags().BoolVar(&stop, "stop", false, "deny and stop: no other call of the turn runs and no model turn follows")
	}
	f.add(cmd)
	return cmd
}

func (a *app) answerCmd() *cobra.Command {
	var f answerFlags
	var request, elicit, content string
	var fields []string
	cmd := &cobra.Command{
		Use:   "answer THREAD TEXT|N",
		Short: "Answer the question the thread waits on (N: its Nth option)",
		Long: `Answer the question the thread waits on with TEXT, or with its Nth option (as
the prompt numbers them) when TEXT is a number and not an option itself.

A question an MCP server asked during a call (elicitation) is answered with
--elicit accept (the input as --field NAME=VALUE, typed by the server's
schema, or --content JSON), --elicit decline or --elicit cancel, and no TEXT.
A secret is best not given on the command line, where others on the machine
can read it: --field NAME=- reads that one field's value as a line of
standard input, --content - the JSON object.`,
		Example: `  harness answer t1 cache.toml
  harness answer t1 --request 1-c1-e1 --elicit accept --field name=Ana
  harness answer t1 --request 1-c1-e1 --elicit accept --field name=Ana --field password=- < secret.txt
  harness answer t1 --request 1-c1-e1 --elicit decline`,
		Args:              args(1, 2, "THREAD and TEXT"),
		ValidArgsFunction: a.completeThreads,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := checkID(id); err != nil {
				return err
			}
			if err := a.checkBy(f.by); err != nil {
				return err
			}
			if elicit != "" || content != "" || len(fields) > 0 {
				if len(args) > 1 {
					return usageError("an MCP server's question is answered with --elicit (and --field or --content), not TEXT")
				}
				r, err := elicitReply(request, elicit, content, fields, a.stdin)
				if err != nil {
					return err
				}
				r.By = a.whoami()
				return a.answerRequest(cmd.Context(), id, r, &f)
			}
			if len(args) < 2 {
				return usageError("want THREAD and TEXT (or --elicit for an MCP server's question)")
			}
			text := args[1]
			r := drive.Reply{Kind: fold.WaitQuestion, Request: request, Text: text, By: a.whoami()}
			if n, err := strconv.Atoi(strings.TrimSpace(text)); err == nil {
				r.Option = n // the Nth option, unless TEXT is an option itself
			}
			return a.answerRequest(cmd.Context(), id, r, &f)
		}),
	}
	cmd.Flags().StringVar(&request, "request", "", "the question's request id (default: the open one)")
	cmd.Flags().StringVar(&elicit, "elicit", "", "answer an MCP server's question: accept, decline or cancel")
	cmd.Flags().StringArrayVar(&fields, "field", nil, "with --elicit accept: one input NAME=VALUE of the server's form (repeat); NAME=- reads VALUE from stdin")
	cmd.Flags().StringVar(&content, "content", "", "with --elicit accept: the input as one JSON object (- reads it from stdin)")
	f.add(cmd)
	return cmd
}

// answering opens the store to answer the thread id, in the workspace
// the thread records when the answer resumes it (an answer alone may be
// given from anywhere), and gives fn the thread's driver: the policy its
// flags change recorded first (when policy is set), the thread's tree
// opened, and a failed model turn run once more should it resume (an
// answer is a person's word to go on).
func (a *app) answering(ctx context.Context, id string, f *answerFlags, policy bool, fn func(dr *driver) error) error {
	s, approval, err := a.openDrive(ctx, &f.drive)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := a.threadExists(ctx, s, id); err != nil {
		return err
	}
	if err := a.enter(ctx, s, id); err != nil && f.resume {
		return err
	}
	dr, err := a.newDriver(s, id, approval, &f.drive)
	if err != nil {
		return err
	}
	if policy {
		if err := dr.setPolicy(ctx, &f.drive); err != nil {
			return err
		}
	}
	dr.Retry = true
	if dr.Thread, err = dr.OpenTree(ctx, id); err != nil {
		return err
	}
	return fn(dr)
}

// answerRequest gives the reply to an open request of its kind: the one
// it names, or the only open one.
func (a *app) answerRequest(ctx context.Context, id string, r drive.Reply, f *answerFlags) error {
	return a.answering(ctx, id, f, true, func(dr *driver) error {
		ans, err := drive.Answer(ctx, dr.Thread, r)
		var rerr *drive.RequestError
		switch {
		case errors.Is(err, drive.ErrBadReply):
			return asUsage(err)
		case errors.As(err, &rerr) && errors.Is(err, drive.ErrWhichRequest):
			if r.Kind == fold.WaitConfirmation {
				return usageError("%v (or pass --all)", err)
			}
			return usageError("%v", err)
		case errors.As(err, &rerr) && rerr.Named == "":
			if last, ok, lerr := drive.LastAnswer(ctx, dr.Thread, drive.AnswerKind(r.Kind)); lerr == nil && ok {
				return fmt.Errorf("%w: the last answer was %s (seq %d); nothing appended", err, present.Describe(last), last.Seq)
			}
			return fmt.Errorf("%w; `harness log %s` shows its record", err, id)
		case err != nil:
			return err
		}
		return dr.posted(ctx, ans.Posted, f)
	})
}

// answerAll gives the reply to every open request of its kind
// (drive.AnswerAll), then resumes the thread if asked.
func (a *app) answerAll(ctx context.Context, id string, f *answerFlags, r drive.Reply) error {
	return a.answering(ctx, id, f, true, func(dr *driver) error {
		answered, err := drive.AnswerAll(ctx, dr.Thread, r)
		var rerr *drive.RequestError
		switch {
		case errors.Is(err, drive.ErrBadReply):
			return asUsage(err)
		case errors.As(err, &rerr):
			return fmt.Errorf("thread %s waits for no %s (it is %s); `harness log %s` shows its record", id, r.Kind, rerr.Status, id)
		}
		for _, ans := range answered {
			if ans.Posted.Duplicate {
				dr.sayGiven(ctx, ans.Posted.Seq)
			}
		}
		if err != nil {
			return err
		}
		last, err := drive.PostedOf(ctx, dr.Thread, answered) // nothing appended: the head
		if err != nil {
			return err
		}
		return dr.posted(ctx, last, f)
	})
}

// post posts d to the thread under key, and resumes it if asked: a
// person's word to go on, so a failed model turn is run once more. The
// flags, --model's model included, are checked before anything is
// posted.
func (a *app) post(ctx context.Context, id string, d facts.Draft, key string, f *answerFlags) error {
	return a.answering(ctx, id, f, true, func(dr *driver) error {
		p, err := drive.PostAnswer(ctx, dr.Thread, d, key)
		if err != nil {
			return drive.Refused(err, id, d.Kind)
		}
		return dr.posted(ctx, p, f)
	})
}

// posted says what a post did — appended, or already there (nothing
// appended) — and resumes the thread if asked.
func (dr *driver) posted(ctx context.Context, p harness.Posted, f *answerFlags) error {
	a, id := dr.a, dr.ID
	if p.Duplicate && p.Seq != 0 {
		dr.sayGiven(ctx, p.Seq)
	}
	if f.resume {
		return dr.finish(ctx)
	}
	if a.jsonOut() {
		return a.printJSON(tell.PostedDoc{Thread: id, Seq: p.Seq, Duplicate: p.Duplicate, Facts: append([]facts.Fact{}, dr.Appended...)})
	}
	switch {
	case p.Duplicate:
	case dr.s.Place.Remote != "":
		// A shared store: a worker takes an answered thread up, and a
		// resume here would race it.
		a.printf("posted to %s; a worker on the store takes it up (harness worker); follow it with: harness log -f %s\n", id, tell.ShellWord(id))
	case dr.s.DriverOf().By != "":
		// A server that drives answered threads holds the store.
		a.printf("posted to %s; %s\n", id, submittedHint(tell.ShellWord(id), dr.s.DriverOf()))
	case drivenElsewhere(ctx, dr.s.Store, id):
		// A run in another terminal, a server or a worker holds it: it
		// takes the answer up itself, and a resume here would wait.
		a.printf("posted to %s; the process that drives it takes it up itself; follow it with: harness log -f %s\n", id, tell.ShellWord(id))
	case f.stops:
		a.printf("posted to %s; it stops at its next resume (which records the denial): harness resume %s\n", id, tell.ShellWord(id))
	default:
		a.printf("posted to %s; continue with: harness resume %s\n", id, tell.ShellWord(id))
	}
	return nil
}

// drivenElsewhere reports whether another runtime holds the thread id,
// or the root of its tree, now (harness.Free): a process that drives it.
// A look that fails says no.
func drivenElsewhere(ctx context.Context, store thread.Store, id string) bool {
	ids := []string{id}
	if root, err := harness.RootOf(ctx, store, id); err == nil && root != id {
		ids = append(ids, root)
	}
	for _, t := range ids {
		if free, err := harness.Free(ctx, store, t); err == nil && !free {
			return true
		}
	}
	return false
}

// sayGiven says that what a post would append is in the log already, at
// seq (tell.Given).
func (dr *driver) sayGiven(ctx context.Context, seq uint64) {
	dr.a.printf("%s\n", tell.Given(ctx, dr.s.Store, dr.ID, seq))
}

// personAnswers is the command with which a person answers the request p
// of the thread id at a terminal, for the MCP server to name when it
// leaves the answer to a person: the answer alone, as the client resumes.
func personAnswers(id string, p drive.Pending) string {
	if p.Kind == fold.WaitConfirmation {
		return fmt.Sprintf("harness approve %s %s", tell.ShellWord(id), tell.ShellWord(drive.Ref(p)))
	}
	// "settle: COMMAND   (accept, retry or abandon)": the command alone.
	_, cmd, _ := strings.Cut(hintFor(id, p, false), ": ")
	cmd, _, _ = strings.Cut(cmd, "   (")
	return cmd
}

// elicitReply is the reply of harness answer --elicit: accept (with the
// fields or the JSON content), decline or cancel (drive.ElicitInput:
// NAME=- or --content - reads stdin).
func elicitReply(request, elicit, content string, fields []string, stdin io.Reader) (drive.Reply, error) {
	r, err := drive.ElicitInput{Request: request, Action: elicit, Content: content, Fields: fields, Stdin: stdin}.Reply()
	if errors.Is(err, drive.ErrBadReply) {
		return r, asUsage(fmt.Errorf("--elicit: %w", err))
	}
	return r, err
}
