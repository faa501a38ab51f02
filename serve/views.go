package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/tools"
)

// ThreadSummary is a thread as the list shows it: its status and what it
// waits for, from its view.
type ThreadSummary struct {
	Thread string `json:"thread"`
	// Parent is the thread that delegated this one to a child (see the
	// delegate tool), "" for a thread a person started.
	Parent       string         `json:"parent,omitempty"`
	Status       harness.Status `json:"status"`
	Waits        []WaitSummary  `json:"waits,omitempty"`
	InDoubt      []string       `json:"in_doubt,omitempty"`
	Running      []string       `json:"running,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	Facts        uint64         `json:"facts"`
	LastActivity time.Time      `json:"last_activity"`
	// Workspace is the workspace the thread works in (host:root), as it
	// recorded it.
	Workspace string `json:"workspace,omitempty"`
	// Here is true for a thread of the server's own workspace: one the
	// server resumes.
	Here bool `json:"here"`
	// Resuming is true while the server resumes the thread.
	Resuming bool `json:"resuming,omitempty"`
}

// WaitSummary is one request a thread waits on.
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

// ThreadDetail is one thread: where it stands, each open request with
// what a person needs to answer it, and every action with its report,
// observation, effect state, check and sandbox side by side.
type ThreadDetail struct {
	ThreadSummary
	Model string `json:"model,omitempty"`
	// Head is the thread's last fact: its seq and hash.
	HeadHash string `json:"head_hash"`
	Next     string `json:"next,omitempty"`
	Retry    string `json:"retry,omitempty"`
	// Pending are the open requests.
	Pending []Pending `json:"pending,omitempty"`
	// Actions are every action, in the order they were requested.
	Actions []Action `json:"actions"`
	// LastResume says how the server's last resume of the thread failed,
	// if it did.
	LastResume string `json:"last_resume,omitempty"`
}

// Pending is an open request and what answering it needs.
type Pending struct {
	Kind      fold.WaitKind `json:"kind"`
	RequestID string        `json:"request_id"`
	// Thread is the child thread whose request it is, when it is one of a
	// child's; Ref names it for an answer posted to this thread: the
	// request's id, or "<child>/<id>".
	Thread  string `json:"thread,omitempty"`
	Ref     string `json:"ref"`
	Summary string `json:"summary,omitempty"`
	// Tool and Args are the call to confirm (or the open action's).
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	// ArgsText is Args as text, for a person.
	ArgsText string `json:"-"`
	// Digest identifies the call exactly: an approval must name it.
	Digest string `json:"digest,omitempty"`
	// Preview is the diff a write would make to the workspace as it is
	// now (threads of the server's workspace only).
	Preview string         `json:"preview,omitempty"`
	Sandbox *facts.Sandbox `json:"sandbox,omitempty"`
	// SandboxText says where a command may reach, for a person.
	SandboxText string `json:"sandbox_text,omitempty"`
	// MCP is the MCP server and tool of a call to one, with the digest of
	// its description.
	MCP           *facts.MCPCall           `json:"mcp,omitempty"`
	Options       []string                 `json:"options,omitempty"`
	AllowFreeText bool                     `json:"allow_free_text,omitempty"`
	Completion    *facts.ActionCompleted   `json:"completion,omitempty"`
	Interrupted   *facts.ActionInterrupted `json:"interrupted,omitempty"`
	// Said is the open action's record, for a person.
	Said string `json:"said,omitempty"`
}

// Action is one action of a thread, as its view records it.
type Action struct {
	ID         string          `json:"id"`
	Tool       string          `json:"tool"`
	Stage      scheduler.Stage `json:"stage"`
	Capability string          `json:"capability,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	ArgsText   string          `json:"-"`
	// Seq is where it was requested.
	Seq         uint64                   `json:"seq"`
	Sandbox     *facts.Sandbox           `json:"sandbox,omitempty"`
	SandboxText string                   `json:"sandbox_text,omitempty"`
	Report      *facts.Report            `json:"report,omitempty"`
	Observation *facts.Observation       `json:"observation,omitempty"`
	Observed    string                   `json:"observed,omitempty"`
	Effect      facts.EffectState        `json:"effect,omitempty"`
	Check       *facts.CheckRecorded     `json:"check,omitempty"`
	CheckSpec   *facts.CheckSpec         `json:"check_spec,omitempty"`
	Interrupted *facts.ActionInterrupted `json:"interrupted,omitempty"`
	Reconciled  *facts.EffectReconciled  `json:"reconciled,omitempty"`
	// Open is true while a person must settle its effect.
	Open bool `json:"open,omitempty"`
	// Changes are the files the runtime observed it change, with their
	// diffs where the store kept both contents.
	Changes []FileChange `json:"changes,omitempty"`
}

// FileChange is one path an action changed.
type FileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	// Diff is the unified diff of the kept contents ("" when they were
	// not kept, or are not text).
	Diff string `json:"diff,omitempty"`
	// Note says why there is no diff.
	Note string `json:"note,omitempty"`
}

// summaryOf is the list's row of a state.
func (s *Server) summaryOf(st drive.State) ThreadSummary {
	ts := ThreadSummary{Thread: st.Thread, Status: st.Status, InDoubt: st.InDoubt, Running: st.Running, Reason: st.Reason,
		Facts: st.Head.Seq, LastActivity: st.Head.At, Workspace: st.Workspace, Here: s.here(st.Workspace), Resuming: s.resuming(st.Thread)}
	if sp := st.View.Lineage.Spawn; sp != nil {
		ts.Parent = sp.Parent
	}
	for _, w := range st.Waits {
		ts.Waits = append(ts.Waits, WaitSummary{Kind: w.Kind, RequestID: w.RequestID, Thread: w.Thread, Ref: drive.Ref(w), Summary: w.Summary})
	}
	return ts
}

// threads lists the store's threads, each from its view.
func (s *Server) threads(ctx context.Context, after string, limit int) ([]ThreadSummary, string, error) {
	out := []ThreadSummary{}
	page := thread.ThreadsPage{After: after, Limit: min(limit, thread.DefaultPageLimit)}
	for len(out) < limit {
		heads, err := s.store.Threads(ctx, page)
		if err != nil {
			return nil, "", err
		}
		if len(heads) == 0 {
			return out, "", nil
		}
		for _, h := range heads {
			st, err := s.inspect(ctx, h.Thread)
			if err != nil {
				return nil, "", err
			}
			out = append(out, s.summaryOf(st))
			if len(out) == limit {
				return out, h.Thread, nil
			}
		}
		page.After = heads[len(heads)-1].Thread
	}
	return out, page.After, nil
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
	d := ThreadDetail{ThreadSummary: s.summaryOf(st), Model: st.Model, HeadHash: st.Head.Hash.String(), Next: st.Next, Retry: st.Retry,
		LastResume: s.lastResume(id), Actions: []Action{}}
	for _, p := range st.Waits {
		d.Pending = append(d.Pending, s.pendingOf(p, d.Here))
	}
	for _, a := range r.Actions() {
		d.Actions = append(d.Actions, s.actionOf(ctx, a))
	}
	return d, nil
}

func (s *Server) pendingOf(p drive.Pending, here bool) Pending {
	out := Pending{Kind: p.Kind, RequestID: p.RequestID, Thread: p.Thread, Ref: drive.Ref(p), Summary: p.Summary, Tool: p.Tool, ArgsText: p.Args, Digest: p.Digest,
		Options: p.Options, AllowFreeText: p.AllowFreeText, Completion: p.Completion, Interrupted: p.Interrupted}
	if json.Valid([]byte(p.Args)) {
		out.Args = json.RawMessage(p.Args)
	}
	if p.Action != nil && p.Action.Requested.Sandbox != nil {
		out.Sandbox = p.Action.Requested.Sandbox
		out.SandboxText = present.SandboxDetail(*out.Sandbox)
	}
	if p.Action != nil {
		out.MCP = p.Action.Requested.MCP
	}
	if p.Kind == fold.WaitConfirmation && here {
		out.Preview = tools.Preview(s.opts.Stock.Place.Root, p.Tool, p.Args)
	}
	switch {
	case p.Interrupted != nil:
		out.Said = present.Describe(draftFact(facts.KindActionInterrupted, *p.Interrupted))
	case p.Completion != nil:
		out.Said = "report " + string(p.Completion.Report.Status) + "; " + present.DescribeObservation(p.Completion.Observation)
	}
	return out
}

// draftFact wraps a payload in a fact, to describe it.
func draftFact(kind facts.Kind, payload any) facts.Fact {
	d, err := facts.NewDraft(kind, "", payload)
	if err != nil {
		return facts.Fact{Kind: kind}
	}
	return facts.Fact{Kind: d.Kind, Data: d.Data}
}

// Bounds of the diffs a detail shows.
const (
	maxDiffFiles = 20
	maxDiffBytes = 256 << 10
)

func (s *Server) actionOf(ctx context.Context, a scheduler.Action) Action {
	req := a.Requested
	out := Action{ID: a.ID, Tool: req.Adapter, Stage: a.Stage(), Capability: req.Capability, ArgsText: string(req.Payload), Seq: a.RequestedSeq,
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
		out.Changes = append(out.Changes, s.changeOf(ctx, pc))
	}
	return out
}

// changeOf is one changed path with the diff of its kept contents.
func (s *Server) changeOf(ctx context.Context, pc facts.PathChange) FileChange {
	fc := FileChange{Path: pc.Path, Change: present.ChangeKind(pc)}
	if s.blobs == nil {
		fc.Note = "the store keeps no contents"
		return fc
	}
	get := func(digest string) (string, bool) {
		if digest == "" {
			return "", true
		}
		b, err := s.blobs.GetBlob(ctx, digest)
		if err != nil || len(b) > maxDiffBytes || bytes.IndexByte(b, 0) >= 0 {
			return "", false
		}
		return string(b), true
	}
	before, ok1 := get(pc.Before)
	after, ok2 := get(pc.After)
	if !ok1 || !ok2 {
		fc.Note = "contents not kept (too large, not text, or not read)"
		return fc
	}
	from, to := "a/"+pc.Path, "b/"+pc.Path
	if pc.Before == "" {
		from = "/dev/null"
	}
	if pc.After == "" {
		to = "/dev/null"
	}
	fc.Diff = present.EscapeText(tools.UnifiedDiff(from, to, before, after))
	if fc.Diff == "" && pc.ModeChanged() {
		fc.Note = "mode changed only"
	}
	return fc
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
