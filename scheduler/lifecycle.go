package scheduler

import (
	"cmp"
	"slices"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
)

// The lifecycle of a tool call, and of each action (attempt) it makes.
// Every arrow is one fact; the scheduler enables the runtime's and waits
// for the person's:
//
//	model.turn                    names the call (ref "<turn>-<call id>")
//	→ action.requested            attempt 1 (action id = ref): the policy is
//	                              decided and recorded (confirm?, capability)
//	→ confirmation.requested      when the policy asks a person
//	→ confirmation.answered       a person (or a policy on their behalf)
//	     denied → action.completed (denied: the adapter is not invoked)
//	  [workspace.changed]         in the same append, before it, when the
//	                              workspace changed since the thread last
//	                              observed it (by nobody it knows)
//	→ action.started              the claim, just before the adapter runs
//	→ action.completed            the report, the observation, the effect
//	  [+ check.recorded]          in the same append, when a check was declared
//	| action.interrupted          found in doubt: its process died; or the
//	                              run was cancelled and the adapter stopped
//	→ effect.reconciled           a person, when the effect is open (an
//	                              unknown effect, or an interrupted action
//	                              whose effect the runtime cannot rule out)
//	     retry → action.requested attempt n+1 (id "<ref>.<n+1>") …
//
// A completion may also come without a start, when nothing ran: a request
// the boundary refused (a capability not granted, a precondition that
// does not hold), arguments that are not JSON, an idempotency key an
// earlier attempt completed (its completion is returned; the adapter is
// not invoked again), or a rerun's call served the original's recorded
// result (see rerun.go: its request names the result, and asks nobody). The calls of a turn take effect in the order the
// model wrote them: a call starts only when every call before it is
// settled.

// Stage is where an action is in its lifecycle.
type Stage string

// The stages of an action.
const (
	// StageRequested: recorded; not started — waiting for its
	// confirmation, or for the calls before it.
	StageRequested Stage = "requested"
	// StageStarted: action.started is recorded and nothing after it. The
	// action is running, or — when nobody holds the thread — in doubt:
	// its process died.
	StageStarted Stage = "started"
	// StageCompleted: action.completed is recorded.
	StageCompleted Stage = "completed"
	// StageInterrupted: recorded as interrupted — found in doubt after a
	// crash, or stopped by a cancelled run. Open until a person reconciles
	// it, unless the run was cancelled and the runtime saw that nothing
	// changed (see Open).
	StageInterrupted Stage = "interrupted"
	// StageReconciled: a person settled its open effect.
	StageReconciled Stage = "reconciled"
)

// Action is one attempt to carry out a call, as the log records it. The
// seq fields say where each record is (0 where there is none).
type Action struct {
	// ID is the action id: the call's ref, then "<ref>.2", "<ref>.3", …
	ID string
	// Call is the ref of the call it carries out.
	Call string
	// Requested is the request, recorded before anything ran.
	Requested   facts.ActionRequested
	Started     *facts.ActionStarted
	Completed   *facts.ActionCompleted
	Check       *facts.CheckRecorded
	Interrupted *facts.ActionInterrupted
	Reconciled  *facts.EffectReconciled
	// Hooks are the after_tool hooks' runs for it, in order.
	Hooks []facts.HookRan

	RequestedSeq, StartedSeq, CompletedSeq, CheckSeq, InterruptedSeq, ReconciledSeq uint64
	// At is when the latest record was appended.
	At time.Time
}

// Stage is where the action is.
func (a Action) Stage() Stage {
	switch {
	case a.Reconciled != nil:
		return StageReconciled
	case a.Interrupted != nil:
		return StageInterrupted
	case a.Completed != nil:
		return StageCompleted
	case a.Started != nil:
		return StageStarted
	}
	return StageRequested
}

// Open reports whether a person must settle the action: its effect is
// unknown (a success reported, nothing observed changed), or it was
// interrupted — found in doubt, or stopped by a cancelled run — and the
// runtime cannot rule out an effect; and nobody reconciled it yet. An
// action stopped by a cancelled run while the runtime saw nothing change
// is not open: the model is told it was interrupted.
func (a Action) Open() bool {
	if a.Reconciled != nil {
		return false
	}
	if in := a.Interrupted; in != nil {
		return !in.Cancelled || !in.Unchanged()
	}
	return a.Completed != nil && a.Completed.EffectState == facts.EffectUnknown
}

// Ended reports whether the action has an end: completed, or interrupted.
func (a Action) Ended() bool { return a.Completed != nil || a.Interrupted != nil }

// Seq is the seq of the action's latest record.
func (a Action) Seq() uint64 {
	return max(a.RequestedSeq, a.StartedSeq, a.CompletedSeq, a.CheckSeq, a.InterruptedSeq, a.ReconciledSeq)
}

// Call is one tool call of a model turn and what became of it.
type Call struct {
	// Ref identifies the call in the thread: "<turn>-<call id>", with the
	// scheduler's scope before it when it has one. It is the id of the
	// confirmation request and of the call's first action.
	Ref string
	// Turn is the model turn that made the call, at TurnSeq.
	Turn    int
	TurnSeq uint64
	// Call is the call as the model made it (its id made safe).
	Call facts.ToolCall
	// Policy is the one recorded on the call's first request.
	Policy Policy
	// Confirmation and Answer are the request put to a person and the
	// answer, when the policy asks.
	Confirmation               *facts.ConfirmationRequested
	Answer                     *facts.ConfirmationAnswered
	ConfirmationSeq, AnswerSeq uint64
	// Actions are its attempts, in order.
	Actions []Action
	// Child is the child thread of a delegation (a call that asked for
	// one), once spawned; a delegation has no actions.
	Child *Child
	// Hooks are the runs of its before_tool hooks, in order (see hook.go).
	Hooks []facts.HookRan
	// Offer, when set, is the worktree.finished whose offered merge the
	// call is (a call of MergeTool no model made; see offer.go); Turn is
	// then the latest model turn before it, and TurnSeq its seq.
	Offer *facts.WorktreeResult
}

// Denied reports whether a person (or a policy) denied the call.
func (c Call) Denied() bool {
	return (c.Policy.Confirm || c.Confirmation != nil && c.Confirmation.Hook != "") && c.Answer != nil && !c.Answer.Approved
}

// Question is a question the model asked a person.
type Question struct {
	// Turn is the model turn that asked it.
	Turn int
	// Question is what the model asked.
	Question facts.Question
	// Asked and Answer are the request put to a person and the answer.
	Asked               *facts.QuestionAsked
	Answer              *facts.QuestionAnswered
	AskedSeq, AnswerSeq uint64
}

// Restored is an undo recorded in the thread: at Seq, the paths put back
// as they were at an earlier seq.
type Restored struct {
	Seq uint64
	facts.WorkspaceRestored
}

// Reading is the scheduler's reading of a whole thread: its configuration,
// every call with its actions, every question, every undo. It is what a
// person, a front end, the verifier and undo read of a thread's requests
// and actions — the same fold that decides what the thread does next.
type Reading struct {
	Thread string
	// System is the thread's configuration, nil before one is recorded.
	System *facts.SystemConfigured
	// Turns is the number of model turns.
	Turns int
	// Calls are every call of the thread, in the order they were made.
	Calls []Call
	// Questions are every question asked, in order.
	Questions []Question
	// Elicitations are the questions MCP servers asked during the
	// thread's actions, in order (in a Current reading, those of the
	// latest turn's actions).
	Elicitations []Elicitation
	// Restored are the undos of the thread's workspace changes, in order.
	Restored []Restored
	// Changed are the changes of the workspace found between two actions
	// of the thread, made by nobody the record knows, in order.
	Changed []Changed
	// Output is the latest model turn's final answer when it was checked
	// valid against the thread's output schema (output.checked), nil
	// otherwise.
	Output facts.RawJSON
}

// Changed is a change of the workspace recorded in the thread at Seq:
// found before an action, and not the action's.
type Changed struct {
	Seq uint64 `json:"seq"`
	facts.WorkspaceChanged
}

// Action returns the action with the id.
func (r Reading) Action(id string) (Action, bool) {
	ref := refOf(id)
	for _, c := range r.Calls {
		if c.Ref != ref {
			continue
		}
		for _, a := range c.Actions {
			if a.ID == id {
				return a, true
			}
		}
	}
	return Action{}, false
}

// Call returns the call whose confirmation request (or ref) is id.
func (r Reading) Call(id string) (Call, bool) {
	for _, c := range r.Calls {
		if c.Ref == id || (c.Confirmation != nil && c.Confirmation.RequestID == id) {
			return c, true
		}
	}
	return Call{}, false
}

// Question returns the question whose request id is id.
func (r Reading) Question(id string) (Question, bool) {
	for _, q := range r.Questions {
		if q.Asked != nil && q.Asked.RequestID == id {
			return q, true
		}
	}
	return Question{}, false
}

// Actions returns every action of the thread, in the order they were
// requested.
func (r Reading) Actions() []Action {
	var out []Action
	for _, c := range r.Calls {
		out = append(out, c.Actions...)
	}
	slices.SortStableFunc(out, func(a, b Action) int { return cmp.Compare(a.RequestedSeq, b.RequestedSeq) })
	return out
}
