package drive

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// StatusRunning is the status of a thread that would be resumable but a
// runtime holds it — another process drives it (a run in another
// terminal, a server, a worker), or this one — and runs its actions
// (State.Running): a resume would wait for that runtime to let go, and
// stopping it goes through the log (a stop request). Every front end
// shows it so (the command line's list and documents, the HTTP API, the
// page, which offers no resume of it).
const StatusRunning harness.Status = "running"

// State is where a thread stands for a person or a front end: its view
// (harness.View), with each open request spelled out and every action
// that started and has no end told apart — running, or in doubt.
//
// State is the one document every front end gives of a thread: the
// command line's -o json, the HTTP API and the MCP server encode it as it
// is (encoding/json, with the tags below), so that a program reads one
// shape wherever it asks. A front end may put its own keys beside it (a
// command's hint, the facts it appended), never change its keys.
type State struct {
	Thread string `json:"thread"`
	// Status is done, parked, failed, stopped or resumable (a resume would
	// run something: an approved call nobody resumed, an action in doubt),
	// running (StatusRunning: resumable, and a runtime that holds it runs
	// its actions, Running), or step_limit when Drive stopped a thread
	// that is still resumable.
	Status harness.Status `json:"status"`
	// Title is the message that started the thread (a child's task).
	Title string `json:"title"`
	// Parent is the thread that spawned this one as a child (see
	// harness.Delegate), "" for a thread a person started; Root is the
	// root of its tree (the thread itself when it is no child; "" when its
	// spawn records lead to no root).
	Parent string `json:"parent,omitempty"`
	Root   string `json:"root"`
	// Waits are the open requests of the thread, with what a person needs
	// to answer them: all of a parked thread's, and those still open while
	// something else can run.
	Waits []Pending `json:"waits,omitempty"`
	// Reason says why a thread failed or stopped.
	Reason string `json:"reason,omitempty"`
	// Retry, on a failed thread, is the key of the failed transition a
	// resume runs once more (a model turn: its cause, a key or a service,
	// can be fixed); "" when the failure is for good.
	Retry string `json:"retry,omitempty"`
	// Next is the key of the transition a resume would run first.
	Next string `json:"next,omitempty"`
	// InDoubt are the actions that started and never completed nor were
	// recorded as interrupted, while nobody holds the thread: their
	// process died. A resume records them as interrupted and parks on
	// reconcile; it never runs them again.
	InDoubt []string `json:"in_doubt,omitempty"`
	// Running are the actions that started and have no end yet while a
	// runtime (in this process, or another holding the thread's lease)
	// holds the thread: they are in progress, not in doubt.
	Running []string `json:"running,omitempty"`
	// Head is the thread's last fact: its seq (the number of facts), hash,
	// kind and time (the thread's last activity).
	Head thread.Head `json:"head"`
	// Unreadable, set only in a list (see List), says why the thread's
	// state could not be read (a corrupt fact, a snapshot that disagrees
	// with the log); the other fields but Thread and Head are then empty.
	Unreadable string `json:"unreadable,omitempty"`
	// Model is the model recorded on system.configured, "" before one was.
	Model string `json:"model,omitempty"`
	// Workspace is the workspace recorded on system.configured (see
	// harness.Config.Workspace), "" before one was or where none was
	// recorded.
	Workspace string `json:"workspace,omitempty"`
	// Worktree is the thread's own git worktree, where it works instead
	// of the workspace: a child's, made when it was spawned, or a
	// worker's thread's, made when it was configured; nil for a thread
	// in the workspace. WorktreeError says why a thread given one works
	// in the workspace after all (it could not be made).
	Worktree      *facts.Worktree `json:"worktree,omitempty"`
	WorktreeError string          `json:"worktree_error,omitempty"`
	// Turns and Tokens are what the thread's budget counted: its model
	// turns and the tokens they used (0 when the actor counts none).
	Turns  int   `json:"turns"`
	Tokens int64 `json:"tokens"`
	// MaxTurns is the thread's bound in model turns: its configuration's,
	// grown by the raises in turns of its root (see RaiseBudget); 0 is
	// none. A root that ran it waits on the budget wait.
	MaxTurns int `json:"max_turns,omitempty"`
	// Cost is what the thread's model turns cost, its children's
	// included; nil when no turn was priced nor left unpriced.
	Cost *Cost `json:"cost,omitempty"`
	// Budget is the tree's budget in money and tokens, nil when it has
	// none (see RaiseBudget).
	Budget *Budget `json:"budget,omitempty"`
	// View is the whole view the state was read from.
	View harness.View `json:"-"`
	// Instructions are the instruction files (AGENTS.md) the thread's
	// latest turn was given, as recorded (instructions.read, at seq
	// InstructionsSeq): each file's scope, path, size and digest, or why
	// it was left out.
	Instructions    []facts.InstructionFile `json:"instructions,omitempty"`
	InstructionsSeq uint64                  `json:"instructions_seq,omitempty"`
	// Plan says whether the thread plans (plan mode) and its latest plan;
	// nil for a thread that never planned.
	Plan *Plan `json:"plan,omitempty"`
	// Output is the thread's final answer, checked valid against the
	// output schema it was started with (harness.WithOutputSchema), when
	// it is done; nil otherwise.
	Output facts.RawJSON `json:"output,omitempty"`
	// Children are the states of the children the thread waits on (see
	// harness.Delegate), in call order; their requests are among Waits,
	// each naming its thread (Pending.Thread).
	Children []State `json:"children,omitempty"`
}

// Plan is plan mode as a thread's state has it: whether the thread plans,
// the model turn of its latest plan and the plan (0 and "" for none), and
// whether it waits for a person to act on it.
type Plan struct {
	On      bool   `json:"on"`
	Turn    int    `json:"turn,omitempty"`
	Text    string `json:"text,omitempty"`
	Waiting bool   `json:"waiting,omitempty"`
}

// Pending is an open request with what the thread's view says about it.
type Pending struct {
	fold.Wait
	// Tool and Args are the call to confirm (a confirmation), or the tool
	// of the open action (a reconcile). Args are JSON as the model wrote
	// them; in a document they are that JSON when it parses, else a
	// string.
	Tool string `json:"tool,omitempty"`
	Args string `json:"-"`
	// Digest identifies the call to confirm exactly: an approval names it.
	Digest string `json:"digest,omitempty"`
	// Reason, when set, says why a person is asked though no rule asks
	// (the loop guard); no approval policy answers such a confirmation.
	Reason string `json:"reason,omitempty"`
	// Options and AllowFreeText are the question's.
	Options       []string `json:"options,omitempty"`
	AllowFreeText bool     `json:"allow_free_text,omitempty"`
	// Sandbox is where the call's command may reach, as its request
	// recorded it; MCP the server and tool of a call to an MCP server.
	Sandbox *facts.Sandbox `json:"sandbox,omitempty"`
	MCP     *facts.MCPCall `json:"mcp,omitempty"`
	// Hook is what a before_tool hook said of a confirmation: that it
	// asks a person ("hook NAME (scope) asks: reason"); HookApproved the
	// user-scope hook that approved the call.
	Hook         string `json:"hook,omitempty"`
	HookApproved string `json:"hook_approved,omitempty"`
	// Rewritten says that a before_tool hook rewrote the call's
	// arguments, and what the model had asked for.
	Rewritten string `json:"rewritten,omitempty"`
	// Completion is the open action's record, when it completed (a
	// reconcile of an unknown effect); Interrupted when it was found in
	// doubt.
	Completion  *facts.ActionCompleted   `json:"completion,omitempty"`
	Interrupted *facts.ActionInterrupted `json:"interrupted,omitempty"`
	// Raise, on a budget wait, are the bounds a raise answers it by
	// (BoundUSD, BoundTokens, BoundTurns): the one in turns when the
	// thread ran its turns, else those the tree's budget has.
	Raise []string `json:"raise,omitempty"`
	// Bounds, on a budget wait, are all the bounds a raise can grow
	// (BudgetBounds): a raise of another changes nothing.
	Bounds []string `json:"bounds,omitempty"`
	// Preview is the diff the call would make to the workspace as it is
	// now. The front end that shows the request fills it (see
	// State.Preview), when the thread works in its workspace; Inspect
	// leaves it empty.
	Preview string `json:"preview,omitempty"`
	// Elicit, on a question an MCP server asked during a call, is what it
	// asked: the server, the action, the schema of the input, the
	// properties that look like secrets. The question's text is the
	// server's message. All of it is the server's word.
	Elicit *facts.Elicit `json:"elicit,omitempty"`
	// Fields are the fields of Elicit's form as a front end shows them
	// (ElicitFields), with the default of each the server offers.
	Fields []ElicitField `json:"fields,omitempty"`
	// Offer, on a confirmation, is the end of a thread that worked in a
	// worktree of its own offering its work: the branch, base, head and
	// changed files of the merge asked (a merge_worktree call no model
	// made). Approved, the change is applied to the workspace; denied,
	// the branch keeps it.
	Offer *facts.WorktreeResult `json:"offer,omitempty"`
	// Action is the open action (a reconcile) or, for a confirmation, the
	// request recorded for the call; nil where there is none.
	Action *scheduler.Action `json:"-"`
}

// pendingDoc is Pending as a document: Args as JSON, and Ref.
type pendingDoc struct {
	plainPending
	Ref  string          `json:"ref"`
	Args json.RawMessage `json:"args,omitempty"`
}

type plainPending Pending

// MarshalJSON writes the request as the State document has it: its
// fields, Ref (how a person names it), and Args as JSON when they parse
// (a string otherwise).
func (p Pending) MarshalJSON() ([]byte, error) {
	d := pendingDoc{plainPending: plainPending(p), Ref: Ref(p)}
	switch {
	case p.Args == "":
	case json.Valid([]byte(p.Args)):
		d.Args = json.RawMessage(p.Args)
	default:
		b, err := json.Marshal(p.Args)
		if err != nil {
			return nil, err
		}
		d.Args = b
	}
	return json.Marshal(d)
}

// UnmarshalJSON reads what MarshalJSON wrote. Args written as a string
// (arguments that were no JSON) are read back as that string.
func (p *Pending) UnmarshalJSON(b []byte) error {
	var d pendingDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*p = Pending(d.plainPending)
	p.Args = string(d.Args)
	var s string
	if len(d.Args) > 0 && d.Args[0] == '"' && json.Unmarshal(d.Args, &s) == nil {
		p.Args = s
	}
	return nil
}

// Preview fills Pending.Preview of every confirmation the state waits on
// (its children's too) with preview(root, tool, args): the diff the call
// would make to the workspace at root as it is now (tools.Preview). A
// front end calls it for a thread that works in its own workspace.
//
// A thread that works in a worktree of its own (State.Worktree) is
// previewed against its worktree's files, not the workspace's; a merge of
// a worktree's branch (merge_worktree) against the workspace it merges
// into.
func (st *State) Preview(root string, preview func(root, tool, args string) string) {
	for i, w := range st.Waits {
		if w.Kind == fold.WaitConfirmation {
			st.Waits[i].Preview = preview(st.PreviewRoot(w, root), w.Tool, w.Args)
		}
	}
	for i := range st.Children {
		st.Children[i].Preview(root, preview)
	}
}

// PreviewRoot is where the call w of the state's tree is previewed, the
// workspace being workspace: the worktree of the thread it belongs to,
// when that thread works in one, else the workspace (and always the
// workspace for merge_worktree, which writes there).
func (st *State) PreviewRoot(w Pending, workspace string) string {
	if w.Tool == mergeTool {
		return workspace
	}
	roots := map[string]string{}
	st.worktreeRoots(roots)
	if r, ok := roots[cmp.Or(w.Thread, st.Thread)]; ok {
		return r
	}
	return workspace
}

// mergeTool is the tool that merges a worktree's branch into the
// workspace (tools.MergeWorktree).
const mergeTool = "merge_worktree"

// worktreeRoots adds the worktree root of st and of each of its children
// that works in one, by thread.
func (st *State) worktreeRoots(roots map[string]string) {
	if st.Worktree != nil {
		roots[st.Thread] = st.Worktree.Root
	}
	for i := range st.Children {
		st.Children[i].worktreeRoots(roots)
	}
}

// Inspect reads the thread (harness.Thread.View) and says where it
// stands: what a resume would do, or what it waits for. It runs nothing
// and appends nothing. A thread with no facts is harness.ErrUnknownThread.
//
// A thread that waits on children (harness.Thread.Tree) stands where its
// tree does: resumable when a resume would move a child on, parked when
// every child waits for a person, whose requests are then the thread's
// Waits, each naming the thread it belongs to.
func Inspect(ctx context.Context, th *harness.Thread) (State, error) {
	tr, err := th.Tree(ctx)
	if err != nil {
		return State{Thread: th.ID()}, err
	}
	return stateOfTree(ctx, th, tr)
}

// stateOf is the state of the view v of a thread of store.
func stateOf(ctx context.Context, store thread.Store, v harness.View) (State, error) {
	st := State{Thread: v.Thread, Root: v.Thread, Status: v.Status, Reason: v.Reason, Retry: v.Retry, Next: v.Next, Head: v.Head, View: v}
	if sys := v.Turn.System; sys != nil {
		st.Model, st.Workspace = sys.Model, sys.Workspace
		st.Worktree, st.WorktreeError = sys.Worktree, sys.WorktreeError
	}
	if sp := v.Lineage.Spawn; sp != nil && sp.Worktree != nil {
		st.Worktree = sp.Worktree
	}
	if b := v.Budget; b != nil {
		st.Turns, st.Tokens, st.MaxTurns = b.Turns, b.Tokens, b.MaxTurns
		st.Cost = costOf(b)
	}
	st.Budget = budgetState(v)
	if v.Status == harness.StatusDone {
		st.Output = v.Turn.Output
	}
	if p := v.Plan; p != nil && (p.On || p.Turn > 0) {
		st.Plan = &Plan{On: p.On, Turn: p.Turn, Text: p.Text, Waiting: p.Waiting}
	}
	if in := v.Instructions; in != nil && in.Seq > 0 {
		st.Instructions, st.InstructionsSeq = in.Latest.Files, in.Seq
	}
	title, err := v.Own.Title()
	if err != nil {
		return st, err
	}
	st.Title = title
	if sp := v.Lineage.Spawn; sp != nil {
		// A child: its root is up its spawn records (one first fact
		// each), through the one tree walk (harness.RootOf).
		// Spawn records that name each other (a log written by hand) have
		// no root: Root stays "", and the thread is still read.
		st.Parent = sp.Parent
		st.Root, err = harness.RootOf(ctx, store, v.Thread)
		switch {
		case errors.Is(err, harness.ErrNotInTree):
			st.Root = ""
		case err != nil:
			return st, fmt.Errorf("thread %s: %w", v.Thread, err)
		}
	}
	var started []string
	for _, a := range v.Turn.Actions() {
		if a.Stage() == scheduler.StageStarted {
			started = append(started, a.ID)
		}
	}
	if len(started) > 0 {
		// Started with no end: in doubt only if nobody holds the thread.
		free, err := harness.Free(ctx, store, v.Thread)
		if err != nil {
			return st, fmt.Errorf("thread %s: %w", v.Thread, err)
		}
		if free {
			// A call whose question reaches its server whoever holds it
			// is not in doubt: it waits for the answer.
			for _, id := range started {
				if !resumable(v.Turn, id) {
					st.InDoubt = append(st.InDoubt, id)
				}
			}
		} else {
			st.Running = started
		}
	}
	for _, w := range v.Waits {
		if e, asked := v.Turn.Elicitation(w.RequestID); asked && len(st.Running) == 0 && !e.Resumable {
			// An MCP server's question whose call nobody holds: no
			// answer can reach the server (the call is in doubt).
			continue
		}
		pd := pending(v.Turn, w)
		if w.Kind == fold.WaitBudget {
			pd.Raise, pd.Bounds = raiseOffer(v), BudgetBounds(State{Budget: budgetState(v), View: v})
		}
		st.Waits = append(st.Waits, pd)
	}
	return st, nil
}

// pending is the wait w with what the reading says of its request.
func pending(r scheduler.Reading, w fold.Wait) Pending {
	pd := Pending{Wait: w}
	switch w.Kind {
	case fold.WaitConfirmation:
		if c, ok := r.Call(w.RequestID); ok && c.Confirmation != nil {
			pd.Tool, pd.Args, pd.Digest, pd.Reason = c.Confirmation.Tool, c.Confirmation.Args, c.Confirmation.Digest, c.Confirmation.Reason
			pd.Hook, pd.HookApproved, pd.Rewritten = c.Confirmation.Hook, c.Confirmation.ApprovedBy, c.Confirmation.Rewritten
			pd.Offer = c.Offer
			if len(c.Actions) > 0 {
				a := c.Actions[len(c.Actions)-1]
				pd.Action = &a
				pd.Sandbox, pd.MCP = a.Requested.Sandbox, a.Requested.MCP
			}
		}
	case fold.WaitQuestion:
		if q, ok := r.Question(w.RequestID); ok {
			pd.Options, pd.AllowFreeText = q.Asked.Options, q.Asked.AllowFreeText
		}
		if e, ok := r.Elicitation(w.RequestID); ok {
			pd.Elicit = e.Asked.Elicit
			pd.Fields = ElicitFields(pd.Elicit)
			if a, ok := r.Action(e.Asked.Elicit.ActionID); ok {
				pd.Tool, pd.Args, pd.Action = a.Requested.Adapter, string(a.Requested.Payload), &a
				pd.Sandbox, pd.MCP = a.Requested.Sandbox, a.Requested.MCP
			}
		}
	case fold.WaitReconcile:
		if a, ok := r.Action(w.RequestID); ok {
			pd.Tool, pd.Args = a.Requested.Adapter, string(a.Requested.Payload)
			pd.Completion, pd.Interrupted, pd.Action = a.Completed, a.Interrupted, &a
			pd.Sandbox, pd.MCP = a.Requested.Sandbox, a.Requested.MCP
		}
	}
	return pd
}

// Cost is what a thread's model turns cost (see harness.Config.Prices).
type Cost struct {
	// USD is what the priced turns cost, in US dollars: the thread's own
	// and those its children reported.
	USD float64 `json:"usd"`
	// Tables are the versions of the price tables that priced them.
	Tables []string `json:"tables,omitempty"`
	// UnpricedTurns are the thread's own turns that record no cost: a
	// model the table does not price (they count tokens only), or a log
	// written before costs were recorded.
	UnpricedTurns int `json:"unpriced_turns,omitempty"`
}

// costOf is the cost a budget view counts, nil when it counts no turn.
func costOf(b *harness.BudgetView) *Cost {
	if b.USD == 0 && len(b.Tables) == 0 && b.Unpriced == 0 {
		return nil
	}
	return &Cost{USD: b.USD, Tables: b.Tables, UnpricedTurns: b.Unpriced}
}

// resumable reports whether the started action id waits on, or has an
// answer to, a server's question that reaches the server whoever holds
// the call (scheduler.Elicitation.Resumable): not in doubt, even when the
// process that made the call is gone.
func resumable(r scheduler.Reading, id string) bool {
	for _, e := range r.Elicitations {
		if e.Asked.Elicit.ActionID == id && e.Resumable {
			return true
		}
	}
	return false
}
