package scheduler

import (
	"errors"
	"strconv"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// Phase is where a coding thread is.
type Phase string

// The phases.
const (
	// PhaseInfer: a model turn is next.
	PhaseInfer Phase = "infer"
	// PhaseConfirm: a tool call waits for a person's confirmation.
	PhaseConfirm Phase = "confirm"
	// PhaseQuestion: the model asked a person a question.
	PhaseQuestion Phase = "question"
	// PhaseTool: a tool call is to be requested, run, or recovered.
	PhaseTool Phase = "tool"
	// PhaseReconcile: an effect nobody can vouch for waits for a person.
	PhaseReconcile Phase = "reconcile"
	// PhaseChildren: the turn waits on the child threads it delegated to.
	PhaseChildren Phase = "children"
	// PhaseCheck: the final answer is to be checked against the output
	// schema.
	PhaseCheck Phase = "check"
	// PhaseDone: the turn is complete; nothing is enabled or awaited.
	PhaseDone Phase = "done"
	// PhaseFailed: a step failed for good, or a budget ran out.
	PhaseFailed Phase = "failed"
	// PhaseBudget: a model turn is due, and the tree's budget in money or
	// tokens cannot cover it: it waits for a person (see Env.Hold).
	PhaseBudget Phase = "budget"
)

// Request is what a model turn is given: the turn number, the system
// configuration and the conversation derived from the log.
type Request struct {
	// Thread is the thread the turn belongs to.
	Thread   string
	Turn     int
	System   facts.SystemConfigured
	Messages []facts.Message
}

// Policy is what the scheduler needs to know of a tool before running it.
type Policy struct {
	// Confirm is true when a person must approve the call first.
	Confirm bool
	// Capability is what running the tool needs.
	Capability action.Capability
	// Repeats, when set, is how many times in a row the same call was
	// made, this one included: the loop guard made it need confirmation
	// (see Env.LoopGuard).
	Repeats int
}

// Env supplies the effects the scheduler enables. S is the services the
// effects need.
type Env[S any] struct {
	// Infer describes one model turn.
	Infer func(Request) effect.Effect[S, facts.ModelTurn]
	// Declare describes finding the check a call declares (it may read the
	// workspace, as edit_file's expected result does); nil declares none.
	Declare func(call facts.ToolCall) effect.Effect[S, *facts.CheckSpec]
	// Precheck, when set, describes finding the refusal a call would
	// surely get from its tool ("" for none) — a path outside the
	// workspace, a protected path — so that the call is refused without
	// asking a person (see facts.ActionRequested.Refused). Arguments that
	// are not one JSON object with each key once are refused whatever it
	// says.
	Precheck func(call facts.ToolCall) effect.Effect[S, string]
	// Sandbox, when set, returns where a call's command may reach (nil for
	// a call that runs none): it is recorded on the call's request, so the
	// person asked to approve it, and a replay, see it.
	Sandbox func(call facts.ToolCall) *facts.Sandbox
	// CheckSandbox, when set, returns where the command of a declared
	// check may reach (nil for a check that runs none): recorded on the
	// request of a call whose tool runs no command itself, so that the
	// check runs where the request says, and the person approving the
	// call sees it.
	CheckSandbox func(check facts.CheckSpec) *facts.Sandbox
	// MCP, when set, returns what the request of a call to a tool of an
	// MCP server records (nil for a call to any other tool): offered is
	// the tool's schema as the thread's system.configured offered it to
	// the model, nil when it was not offered.
	MCP func(call facts.ToolCall, offered *facts.ToolSchema) *facts.MCPCall
	// Act describes carrying out a request through the effect boundary:
	// it must record action.started through j immediately before invoking
	// the adapter, and return the action.completed (and check.recorded)
	// drafts. An action that may not start returns its completion without
	// recording anything. since is the thread's last observation of the
	// workspace (see action.ObservedIn; zero when there is none): when the
	// workspace differs from it, a workspace.changed record goes first,
	// in the same append as action.started (or the completion).
	Act func(req action.Request, since action.Observed, j fold.Journal) effect.Effect[S, []facts.Draft]
	// Refuse describes completing a request a person denied, without
	// invoking its adapter: the drafts of action.completed, after a
	// workspace.changed when the workspace differs from since (see Act).
	Refuse func(req action.Request, since action.Observed, why string) effect.Effect[S, []facts.Draft]
	// Recover describes observing an action found in doubt.
	Recover func(started facts.ActionStarted) effect.Effect[S, facts.ActionInterrupted]
	// Deliver, when set, describes delivering the answer to a server's
	// question asked during the call req, which started (started) in a
	// process that died, over the resumable session the question names
	// (facts.Elicit.Resume): the drafts of the action's completion — in
	// doubt, saying why, when the answer could not be delivered or the
	// result not read. Nil: such a call is recovered as any other.
	Deliver func(req action.Request, started facts.ActionStarted, asked facts.QuestionAsked, answer facts.QuestionAnswered) effect.Effect[S, []facts.Draft]
	// Policy says whether a call needs confirmation and what it needs.
	Policy func(call facts.ToolCall) Policy
	// Granted reports whether the thread was granted a capability; a call
	// needing one it was not is not put to a person: the boundary denies
	// it. Nil grants everything.
	Granted func(action.Capability) bool
	// Budget, when set, is asked before each model turn; a non-nil answer
	// stops the thread with that budget.exhausted fact instead of the turn.
	Budget func() *facts.BudgetExhausted
	// Hold, when set, is asked before each model turn that Budget lets
	// run; a non-empty answer says why the tree's budget cannot cover it:
	// the turn is not enabled, and the thread waits for a person (a wait
	// of kind fold.WaitBudget) until the budget covers it again.
	Hold func() string
	// Actor names the actor in action requests.
	Actor string
	// LoopGuard, when above 0, is the loop guard's bound: a call that is
	// the LoopGuard-th in a row of the same call (the tool and its
	// arguments, byte for byte, across turns) waits for a person's
	// confirmation, whatever Policy says, with a reason no approval
	// policy answers. The count is read from the log.
	LoopGuard int
	// Scope, when set, begins every request and action id this scheduler
	// makes ("<scope>-1-call_1"), so that a scheduler nested beside
	// another (see fold.Prefixed) is answered on its own requests.
	Scope string
	// Delegate, when set, says whether a call asks for a child thread (a
	// delegation; see delegate.go) rather than an action. It is asked
	// once, before anything is recorded for the call: what was recorded
	// (child.spawned, or action.requested) decides ever after.
	Delegate func(call facts.ToolCall) bool
	// Spawn describes deciding a delegation's child — its id, task, tools
	// and budget, or why it is refused — from the parent's log; it must
	// be set when Delegate is.
	Spawn func(req SpawnRequest) effect.Effect[S, facts.ChildSpawned]
	// Prepare, when set, describes readying a model turn's request before
	// the model is asked: the request as it is to be sent (a system prompt
	// with the project's instructions, say) and the facts to record
	// first, under the turn's key, before its model.turn. Nil sends the
	// request as the log gives it.
	Prepare func(req Request) effect.Effect[S, Prepared]
	// Hook describes running hook i of the thread's recorded hooks (h)
	// with in on its stdin, and deciding what it said (see hook.go); the
	// scheduler fills in which hook and call the record names. Nil runs
	// none: each hook due is recorded as failed.
	Hook func(i int, h facts.Hook, in HookInput) effect.Effect[S, facts.HookRan]
	// Rerun, when set, describes comparing a model turn of a rerun with
	// the original's same turn (see rerun.go): the rerun.turn to record
	// after the turn's model.turn, or nil to record none (a thread that is
	// no rerun, or a rerun gone on live past its divergence).
	Rerun func(thread string, turn int, mt facts.ModelTurn) effect.Effect[S, *facts.RerunTurn]
	// Serve describes serving a call the recorded result a rerun.turn
	// named for it: the drafts of its action.completed (a copy of the
	// original's, naming it) and of its check.recorded, when it had one.
	// Nothing runs. Nil fails such a call: nobody can serve it.
	Serve func(req action.Request, from facts.Served) effect.Effect[S, []facts.Draft]
	// Offer describes offering a rerun what came from outside after the
	// original's turn (a rerun.turn's Offers, see rerun.go): the draft of
	// a copy of the original's fact at from.Seq, of kind kind, naming it
	// — a question.answered answering requestID. Nil fails it: nobody
	// can offer it.
	Offer func(from facts.Served, kind facts.Kind, requestID string) effect.Effect[S, []facts.Draft]
}

// Prepared is a model turn's request readied (see Env.Prepare): the
// request to send, and the drafts recorded before the turn.
type Prepared struct {
	Request Request
	Record  []facts.Draft
}

// The keys of the transitions this component enables. ref is
// "<turn>-<call id>"; an attempt after the first adds ".<n>".
func inferKey(turn int) string     { return "infer/turn/" + strconv.Itoa(turn) }
func confirmKey(ref string) string { return "confirm/" + ref }
func requestKey(id string) string  { return "tool/request/" + id }
func startKey(id string) string    { return "tool/start/" + id }
func executeKey(id string) string  { return "tool/execute/" + id }
func recoverKey(id string) string  { return "tool/recover/" + id }
func askKey(turn int) string       { return "question/ask/" + strconv.Itoa(turn) }
func offerKey(turn, i int) string {
	return "rerun/offer/" + strconv.Itoa(turn) + "/" + strconv.Itoa(i+1)
}

var ownPrefixes = []string{"infer/turn/", "confirm/", "tool/", "question/ask/", "delegate/", "hook/", "output/check/"}

// Digest identifies a tool call exactly: the tool's name and its
// arguments, byte for byte (facts.CallDigest).
func Digest(tool, args string) string { return facts.CallDigest(tool, args) }

// Errors of Accept, wrapped with the request id.
var (
	// ErrUnknownRequest: an answer names no request of this thread.
	ErrUnknownRequest = errors.New("no such request")
	// ErrAnswered: an answer names a request already answered.
	ErrAnswered = errors.New("request already answered")
	// ErrNotAnOption: an answer to a question that allows no free text is
	// not one of its options.
	ErrNotAnOption = errors.New("answer is not one of the options")
	// ErrBadAnswer: an answer to an MCP server's question (elicitation)
	// that is not accept, decline or cancel, or whose input does not fit
	// the schema the server asked for.
	ErrBadAnswer = errors.New("the answer does not fit the server's question")
	// ErrDigest: an approval names a digest other than the request's.
	ErrDigest = errors.New("approval does not match the request's digest")
	// ErrOutputSchema: an output schema that is not a JSON Schema (see
	// CompileOutputSchema).
	ErrOutputSchema = errors.New("invalid output schema")
	// ErrSchemaShape: a document that is not a JSON Schema (a keyword
	// whose value the draft does not allow).
	ErrSchemaShape = errors.New("not a JSON Schema")
	// ErrSchemaDraft: a JSON Schema of a draft harness does not read
	// (only draft 2020-12 and draft-07; see CompileSchema).
	ErrSchemaDraft = errors.New("a JSON Schema draft harness does not read")
	// ErrInexactNumber: a number, in a schema or a document checked
	// against one, that float64 does not hold as written.
	ErrInexactNumber = errors.New("a number that cannot be checked exactly")
	// ErrSchemaOutside: a schema refers to a schema outside itself, which
	// harness never loads.
	ErrSchemaOutside = errors.New("a schema may not refer outside itself")
	// ErrLean: a lean scheduler's model turn (a verifier's fold, see
	// Scheduler.Lean) was run; it has no conversation to give the model.
	ErrLean = errors.New("a lean fold runs no model turn")
)

// View is what the scheduler's Output says of the thread now: cheap to
// make at every projection. The whole thread's requests and actions are
// its Reading.
type View struct {
	Phase Phase
	// Turns is the number of model turns so far.
	Turns int
	// Waits are the open requests when the phase is confirm, question or
	// reconcile.
	Waits []fold.Wait
	// AllowFreeText is the open question's, when the phase is question.
	AllowFreeText bool
	// Options are the open question's options.
	Options []string
	// Failure says why, when the phase is failed.
	Failure string
	// Output is the final answer checked valid against the thread's
	// output schema, when the phase is done and the thread has one.
	Output facts.RawJSON
}
