package serve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/tools"
)

// ThreadSummary is a thread as the list shows it: its state (the one
// document every front end gives, drive.State), and where the server
// stands with it.
type ThreadSummary struct {
	drive.State
	// Here is true for a thread of the server's own workspace: one the
	// server resumes.
	Here bool `json:"here"`
	// Resuming is true while the server resumes the thread.
	Resuming bool `json:"resuming,omitempty"`
}

// WaitSummary is one request a fork would wait on (see ForkPreview).
type WaitSummary struct {
	Kind      fold.WaitKind `json:"kind"`
	RequestID string        `json:"request_id"`
	// Thread is the child thread whose request it is, when it is one of a
	// child's (the tree waits on it); Ref names it for an answer: the
	// request's id, or "<child>/<id>".
	Thread  string `json:"thread,omitempty"`
	Ref     string `json:"ref"`
	Summary string `json:"summary,omitempty"`
}

// ThreadDetail is one thread: where it stands (its state, whose Waits are
// each open request with what a person needs to answer it, the preview of
// a write to this server's workspace among it), and every action with its
// report, observation, effect state, check and sandbox side by side.
type ThreadDetail struct {
	ThreadSummary
	// Actions are every action, in the order they were requested.
	Actions []Action `json:"actions"`
	// LastResume says how the server's last resume of the thread failed,
	// if it did.
	LastResume string `json:"last_resume,omitempty"`
}

// Action is one action of a thread, as its view records it.
type Action struct {
	ID         string           `json:"id"`
	Tool       string           `json:"tool"`
	Stage      scheduler.Stage  `json:"stage"`
	Capability facts.Capability `json:"capability,omitempty"`
	Args       json.RawMessage  `json:"args,omitempty"`
	ArgsText   string           `json:"-"`
	// Seq is where it was requested.
	Seq         uint64                   `json:"seq"`
	Sandbox     *facts.Sandbox           `json:"sandbox,omitempty"`
	SandboxText string                   `json:"sandbox_text,omitempty"`
	Report      *facts.Report            `json:"report,omitempty"`
	Observation *facts.Observation       `json:"observation,omitempty"`
	Observed    string                   `json:"observed,omitempty"`
	Effect      facts.EffectState        `json:"effect_state,omitempty"`
	Check       *facts.CheckRecorded     `json:"check,omitempty"`
	CheckSpec   *facts.CheckSpec         `json:"check_spec,omitempty"`
	Interrupted *facts.ActionInterrupted `json:"interrupted,omitempty"`
	Reconciled  *facts.EffectReconciled  `json:"reconciled,omitempty"`
	// Denied is true for an action whose call was denied: it never ran.
	Denied bool `json:"denied,omitempty"`
	// Open is true while a person must settle its effect.
	Open bool `json:"open,omitempty"`
	// Changes are the files the runtime observed it change, with their
	// diffs where the store kept both contents.
	Changes []FileChange `json:"changes,omitempty"`
	// Delegation, for a call of the delegate tool, is the child it made
	// (a delegation has no action of its own; its ID is the call's).
	Delegation *Delegation `json:"delegation,omitempty"`
}

// FileChange is one path an action changed, rendered as the terminal
// renders it (present.DiffOf); the page escapes it for HTML.
type FileChange = present.FileDiff

// contents is where the store keeps contents, for a diff; nil when it keeps
// none.
func (s *Server) contents() present.Kept {
	if s.blobs == nil {
		return nil
	}
	return s.blobs
}

// summaryOf is the list's row of a state.
func (s *Server) summaryOf(st drive.State) ThreadSummary {
	return ThreadSummary{State: st, Here: s.here(st.Workspace), Resuming: s.resuming(st.Thread)}
}

// threads lists the store's threads the options keep, each from its kept
// view (drive.List); a thread that records no workspace is the server's.
func (s *Server) threads(ctx context.Context, o drive.ListOptions) ([]ThreadSummary, string, error) {
	o.Inspect, o.Default = s.inspect, s.opts.Stock.Config.Workspace
	sts, next, err := drive.List(ctx, s.reader, s.opts.Stock.Actor, o)
	if err != nil {
		return nil, "", err
	}
	out := make([]ThreadSummary, len(sts))
	for i, st := range sts {
		out[i] = s.summaryOf(st)
	}
	return out, next, nil
}

// state is the thread's state as the API gives it: with the preview of
// each confirmation's call, for a thread of the server's workspace.
func (s *Server) state(ctx context.Context, id string) (drive.State, error) {
	st, err := s.inspect(ctx, id)
	if err != nil {
		return st, err
	}
	if s.here(st.Workspace) {
		st.Preview(s.opts.Stock.Place.Root, tools.Preview)
	}
	return st, nil
}

// detail is the thread's detail, from its view and its whole reading.
func (s *Server) detail(ctx context.Context, id string) (ThreadDetail, error) {
	return s.detailOf(ctx, id, true)
}

// detailOf is detail with its actions when actions is set; without them
// it reads the thread's view only, and costs what the view does, not
// what the log holds (the page's panel).
func (s *Server) detailOf(ctx context.Context, id string, actions bool) (ThreadDetail, error) {
	c := s.cachedThread(ctx, id)
	c.mu.Lock()
	st, err := drive.Inspect(ctx, c.th)
	var r scheduler.Reading
	if err == nil && actions {
		r, err = c.th.Reading(ctx)
	}
	c.mu.Unlock()
	if errors.Is(err, harness.ErrUnknownThread) {
		s.forget(id)
	}
	if err != nil {
		return ThreadDetail{}, err
	}
	if s.here(st.Workspace) {
		st.Preview(s.opts.Stock.Place.Root, tools.Preview)
	}
	d := ThreadDetail{ThreadSummary: s.summaryOf(st), LastResume: s.lastResume(id), Actions: []Action{}}
	for _, a := range r.Actions() {
		d.Actions = append(d.Actions, s.actionOf(ctx, a, deniedIn(r, a)))
	}
	d.Actions = withDelegations(d.Actions, r)
	return d, nil
}

// said is what an open action's record says, for a person.
func said(p drive.Pending) string {
	switch {
	case p.Interrupted != nil:
		return present.Describe(draftFact(facts.KindActionInterrupted, *p.Interrupted))
	case p.Completion != nil:
		return "report " + string(p.Completion.Report.Status) + "; " + present.DescribeObservation(p.Completion.Observation)
	}
	return ""
}

// draftFact wraps a payload in a fact, to describe it.
func draftFact(kind facts.Kind, payload any) facts.Fact {
	d, err := facts.NewDraft(kind, "", payload)
	if err != nil {
		return facts.Fact{Kind: kind}
	}
	return facts.Fact{Kind: d.Kind, Data: d.Data}
}

// maxDiffFiles bounds the diffs a detail shows.
const maxDiffFiles = 20

// deniedIn reports whether the reading r records the call of action a as
// denied, a never having run.
func deniedIn(r scheduler.Reading, a scheduler.Action) bool {
	c, ok := r.Call(a.Call)
	return ok && c.Denied() && a.Started == nil && !a.Ended()
}

func (s *Server) actionOf(ctx context.Context, a scheduler.Action, denied bool) Action {
	req := a.Requested
	out := Action{Denied: denied, ID: a.ID, Tool: req.Adapter, Stage: a.Stage(), Capability: req.Capability, ArgsText: argsText(req.Adapter, req.Payload), Seq: a.RequestedSeq,
		Sandbox: req.Sandbox, CheckSpec: req.Check, Check: a.Check, Interrupted: a.Interrupted, Reconciled: a.Reconciled, Open: a.Open()}
	if json.Valid(req.Payload) {
		out.Args = json.RawMessage(req.Payload)
	}
	if req.Sandbox != nil {
		out.SandboxText = present.Sandbox(*req.Sandbox)
	}
	var changed []facts.PathChange
	if c := a.Completed; c != nil {
		rep, obs := c.Report, c.Observation
		out.Report, out.Observation, out.Effect = &rep, &obs, c.EffectState
		out.Observed = present.DescribeObservation(obs)
		changed = obs.Changed
	} else if a.Interrupted != nil {
		changed = a.Interrupted.Changed
	}
	for i, pc := range changed {
		if i == maxDiffFiles {
			out.Changes = append(out.Changes, FileChange{Path: "…", Note: "more files changed than are shown"})
			break
		}
		out.Changes = append(out.Changes, present.DiffOf(ctx, pc, s.contents()))
	}
	return out
}

// diffLine is one line of a diff with how to show it.
type diffLine struct {
	Text  string
	Class string // add, del, hunk, head or ""
}

// diffLines splits a unified diff for the page.
func diffLines(diff string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		c := ""
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			c = "head"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		}
		out = append(out, diffLine{Text: l, Class: c})
	}
	return out
}
