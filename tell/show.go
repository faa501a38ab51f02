package tell

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Fact writes one fact whole: its line, its cause and time, and its
// payload as indented JSON.
func Fact(w io.Writer, f facts.Fact) {
	fmt.Fprintln(w, FactLine(f))
	fmt.Fprintf(w, "  cause  %s\n  at     %s\n", present.EscapeLine(f.Cause), f.At.Local().Format(time.RFC3339))
	b, err := f.MarshalJSON()
	if err != nil {
		return
	}
	var v struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(b, &v) == nil && len(v.Data) > 0 {
		fmt.Fprintln(w, "  data")
		WriteBlock(w, "    ", PrettyJSON(v.Data))
	}
}

// Exchange is what the store kept of a model turn's exchange with its
// provider: the request and response bytes, or why each is not there.
type Exchange struct {
	Request, Response       []byte
	RequestErr, ResponseErr error
}

// TurnDoc is a model turn with the bytes kept of its exchange, as JSON.
type TurnDoc struct {
	Fact     facts.Fact      `json:"fact"`
	Turn     facts.ModelTurn `json:"turn"`
	Request  string          `json:"request,omitempty"`
	Response string          `json:"response,omitempty"`
}

// Turn writes model turn mt of thread id (recorded as f) whole: its text
// and calls, its tokens and cost, and the request and response kept.
func Turn(w io.Writer, id string, f facts.Fact, mt facts.ModelTurn, kept Exchange) {
	esc := present.EscapeLine
	fmt.Fprintf(w, "model turn %d of thread %s (seq %d, %s)\n", mt.Turn, id, f.Seq, f.At.Local().Format(time.RFC3339))
	if mt.Text != "" {
		fmt.Fprintln(w, "  text")
		WriteBlock(w, "    ", mt.Text)
	}
	for _, c := range mt.ToolCalls {
		fmt.Fprintf(w, "  call %s: %s\n", esc(c.ID), esc(c.Name))
		WriteBlock(w, "    ", PrettyJSON([]byte(c.Args)))
	}
	if q := mt.Question; q != nil {
		fmt.Fprintf(w, "  asks %s\n", esc(q.Text))
	}
	fmt.Fprintf(w, "  tokens  %d in, %d out", mt.Usage.InputTokens, mt.Usage.OutputTokens)
	if u := mt.Usage; u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		fmt.Fprintf(w, " (of the input, %d read from the cache, %d written to it)", u.CacheReadTokens, u.CacheWriteTokens)
	}
	fmt.Fprintln(w)
	if c := mt.Cost; c != nil {
		fmt.Fprintf(w, "  cost  %s (USD %g, price table %s)\n", present.USD(c.USD), c.USD, esc(c.Table))
	}
	x := mt.Exchange
	if x == nil {
		fmt.Fprintln(w, "  exchange  none kept (a scripted model, or a provider that exposes no bytes)")
		return
	}
	fmt.Fprintf(w, "  exchange  %s %s → %d, %d bytes\n", esc(x.Provider), esc(x.URL), x.Status, x.Size)
	for _, part := range []struct {
		name string
		b    []byte
		err  error
	}{{"request", kept.Request, kept.RequestErr}, {"response", kept.Response, kept.ResponseErr}} {
		if part.err != nil {
			fmt.Fprintf(w, "  %s  %s\n", part.name, esc(part.err.Error()))
			continue
		}
		fmt.Fprintf(w, "  %s (%d bytes)\n", part.name, len(part.b))
		WriteBlock(w, "    ", PrettyJSON(part.b))
	}
}

// InstructionDoc is an instruction file a turn was given, with the text
// kept under its digest, or a note that says why it is not there.
type InstructionDoc struct {
	facts.InstructionFile
	Text string `json:"text,omitempty"`
	Note string `json:"note,omitempty"`
}

// InstructionsDoc is what instructions a turn was given, as JSON.
type InstructionsDoc struct {
	Fact  facts.Fact       `json:"fact"`
	Turn  int              `json:"turn"`
	Files []InstructionDoc `json:"files"`
}

// Instructions writes the instruction files turn of thread id was given
// (recorded at seq), each with its text, and those left out with why.
func Instructions(w io.Writer, id string, seq uint64, turn int, files []InstructionDoc) {
	esc := present.EscapeLine
	fmt.Fprintf(w, "instructions of thread %s for turn %d (seq %d): the project's text, given to the model in its system prompt\n", id, turn, seq)
	if len(files) == 0 {
		fmt.Fprintln(w, "  none: the files read before are gone")
	}
	for _, fl := range files {
		if fl.Skipped != "" {
			fmt.Fprintf(w, "  %-7s %s: left out — %s\n", fl.Scope, esc(fl.Path), esc(fl.Skipped))
			continue
		}
		fmt.Fprintf(w, "  %-7s %s: %d bytes, sha256:%s\n", fl.Scope, esc(fl.Path), fl.Size, fl.Digest)
		if fl.Note != "" {
			fmt.Fprintf(w, "    %s\n", esc(fl.Note))
			continue
		}
		WriteBlock(w, "    │ ", fl.Text)
	}
}

// InterruptedFact wraps an interruption's record as a fact, to describe it.
func InterruptedFact(p *facts.ActionInterrupted) facts.Fact {
	d, err := facts.NewDraft(facts.KindActionInterrupted, "", *p)
	if err != nil {
		return facts.Fact{Kind: facts.KindActionInterrupted}
	}
	return facts.Fact{Kind: d.Kind, Data: d.Data}
}

// Action writes action act of thread id whole, from its document
// (drive.DescribeAction) and its call: the request, the command or the
// arguments, the sandbox, the confirmation and its answer, the report
// with the whole output, the observation, the diffs, the check, the hooks
// and the reconciliation. commandTimeout is the default timeout of a
// command.
func Action(w io.Writer, id string, act scheduler.Action, call scheduler.Call, doc drive.ActionDoc, commandTimeout time.Duration) {
	esc := present.EscapeLine
	req := act.Requested
	fmt.Fprintf(w, "action %s of thread %s: %s (%s), requested by %s at seq %d\n", esc(act.ID), id, esc(req.Adapter), esc(string(req.Capability)), esc(req.RequestedBy), act.RequestedSeq)
	if call.Ref != "" {
		fmt.Fprintf(w, "  call         %s of model turn %d (seq %d)\n", esc(call.Call.ID), call.Turn, call.TurnSeq)
	}
	if c, ok := present.CommandOf(req.Adapter, doc.Args, commandTimeout); ok {
		fmt.Fprintf(w, "  command      %s\n", c.Timeout())
		for _, line := range c.Lines() {
			fmt.Fprintf(w, "    │ %s\n", line)
		}
	} else {
		fmt.Fprintln(w, "  arguments")
		WriteBlock(w, "    ", PrettyJSON([]byte(doc.Args)))
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
		fmt.Fprintf(w, "  hook         %s\n", esc(present.DescribeHook(h)))
	}
	if call.Confirmation != nil {
		confirmation(w, call)
	}
	for _, c := range doc.ChangedBefore {
		fmt.Fprintf(w, "  before it    the workspace changed (seq %d), by %s, not this action: %s\n", c.Seq, esc(c.By), esc(present.DescribeChanges(c.Changed)))
	}
	if st := act.Started; st != nil {
		fmt.Fprintf(w, "  started      seq %d · observed before %s\n", act.StartedSeq, esc(st.ObservedBefore))
	}
	if c := act.Completed; c != nil {
		completed(w, act.CompletedSeq, c)
	}
	if in := act.Interrupted; in != nil {
		label := "in doubt   "
		if in.Cancelled {
			label = "interrupted"
		}
		fmt.Fprintf(w, "  %s  seq %d: %s\n", label, act.InterruptedSeq, present.Describe(InterruptedFact(in)))
	}
	if doc.Proposed != "" {
		fmt.Fprintln(w, "  proposed     not run: the change it would make to the workspace as it is now")
		WriteBlock(w, "    ", doc.Proposed)
	}
	for _, d := range doc.Diffs {
		fmt.Fprintf(w, "  changed      %s (%s)\n", esc(d.Path), d.Kind)
		if d.Note != "" {
			fmt.Fprintf(w, "    %s\n", d.Note)
		}
		if d.Diff != "" {
			WriteBlock(w, "    ", d.Diff)
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
		fmt.Fprintf(w, "  hook after   %s\n", esc(present.DescribeHook(h)))
	}
	if rc := act.Reconciled; rc != nil {
		fmt.Fprintf(w, "  reconciled   %s by %s at seq %d", rc.Decision, esc(rc.By), act.ReconciledSeq)
		if rc.Note != "" {
			fmt.Fprintf(w, ": %s", esc(rc.Note))
		}
		fmt.Fprintln(w)
	}
}

// confirmation writes when a call's confirmation was asked, and how it
// was answered.
func confirmation(w io.Writer, call scheduler.Call) {
	esc := present.EscapeLine
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

// completed writes an action's report, its whole output, the runtime's
// observation and the effect state.
func completed(w io.Writer, seq uint64, c *facts.ActionCompleted) {
	esc := present.EscapeLine
	rep := c.Report
	fmt.Fprintf(w, "  report       %s, seq %d", rep.Status, seq)
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
		fmt.Fprintf(w, " · before %s, after %s", ShortDigest(o.Before), ShortDigest(o.After))
	}
	fmt.Fprintln(w)
	for _, r := range o.Removed {
		fmt.Fprintf(w, "  removed      %s (%s", esc(r.Path), esc(r.Kind))
		if r.Names != "" {
			fmt.Fprintf(w, " naming %s", esc(strconv.Quote(r.Names)))
		}
		if r.Digest != "" {
			fmt.Fprintf(w, ", sha256 %s", ShortDigest(r.Digest))
		}
		fmt.Fprintf(w, ") by harness: %s\n", esc(r.Why))
		if r.Error != "" {
			fmt.Fprintf(w, "    NOT removed: %s\n", esc(r.Error))
		}
	}
	fmt.Fprintf(w, "  effect       %s\n", c.EffectState)
}
