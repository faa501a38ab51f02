package drive

import (
	"context"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// ActionDoc is one action of a thread whole, as a front end shows it:
// its call, request, confirmation and answer, its run, report,
// observation and check, the diffs of what it changed, and, for a call
// that never ran, the diff it would make now.
type ActionDoc struct {
	Thread       string                       `json:"thread"`
	ActionID     string                       `json:"action_id"`
	Call         facts.ToolCall               `json:"call"`
	Turn         int                          `json:"turn"`
	Requested    facts.ActionRequested        `json:"requested"`
	RequestedSeq uint64                       `json:"requested_seq"`
	Confirmation *facts.ConfirmationRequested `json:"confirmation,omitempty"`
	Answer       *facts.ConfirmationAnswered  `json:"answer,omitempty"`
	AnswerSeq    uint64                       `json:"answer_seq,omitempty"`
	Started      *facts.ActionStarted         `json:"started,omitempty"`
	Completed    *facts.ActionCompleted       `json:"completed,omitempty"`
	CompletedSeq uint64                       `json:"completed_seq,omitempty"`
	Check        *facts.CheckRecorded         `json:"check,omitempty"`
	Interrupted  *facts.ActionInterrupted     `json:"interrupted,omitempty"`
	Reconciled   *facts.EffectReconciled      `json:"reconciled,omitempty"`
	Diffs        []ActionDiff                 `json:"diffs"`
	// Proposed, for a call that never ran, is the diff it would make to
	// the workspace as it is now (escaped, bounded).
	Proposed string `json:"proposed_diff,omitempty"`
	// ChangedBefore are the changes of the workspace no action made,
	// found just before this one (workspace.changed).
	ChangedBefore []scheduler.Changed `json:"changed_before,omitempty"`
	// Args are the call's arguments as the action was requested with
	// them (else as the model gave them).
	Args string `json:"-"`
}

// ActionDiff is one changed path with its diff (present.DiffOf).
type ActionDiff struct {
	facts.PathChange
	Kind string `json:"change"`
	// Diff and Note are present.DiffOf's: escaped, bounded.
	Diff string `json:"diff,omitempty"`
	// Note says why there is no diff: contents not kept, or not text.
	Note string `json:"note,omitempty"`
}

// DescribeAction is the action act of thread id, read in r, whole: the
// diffs of what it changed from the contents kept (nil: the store keeps
// none) and, for a call that never ran (it waits for a confirmation, or
// was denied or refused, so it changed nothing), the diff preview says it
// would make to the workspace at root as it is now (tools.Preview).
func DescribeAction(ctx context.Context, id string, r scheduler.Reading, act scheduler.Action, kept present.Kept, root string, preview func(root, tool, args string) string) ActionDoc {
	call, _ := r.Call(act.Call)
	var changed []facts.PathChange
	switch {
	case act.Completed != nil:
		changed = act.Completed.Observation.Changed
	case act.Interrupted != nil:
		changed = act.Interrupted.Changed
	}
	diffs := make([]ActionDiff, 0, len(changed))
	for _, c := range changed {
		d := present.DiffOf(ctx, c, kept)
		diffs = append(diffs, ActionDiff{PathChange: c, Kind: d.Change, Diff: d.Diff, Note: d.Note})
	}
	args := string(act.Requested.Payload)
	if args == "" {
		args = call.Call.Args
	}
	var proposed string
	if act.Started == nil && preview != nil {
		proposed = preview(root, act.Requested.Adapter, args)
	}
	var before []scheduler.Changed
	for _, c := range r.Changed {
		if c.ActionID == act.ID {
			before = append(before, c)
		}
	}
	return ActionDoc{Thread: id, ActionID: act.ID, Call: call.Call, Turn: call.Turn, Requested: act.Requested, RequestedSeq: act.RequestedSeq,
		Confirmation: call.Confirmation, Answer: call.Answer, AnswerSeq: call.AnswerSeq, Started: act.Started, Completed: act.Completed,
		CompletedSeq: act.CompletedSeq, Check: act.Check, Interrupted: act.Interrupted, Reconciled: act.Reconciled, Diffs: diffs,
		Proposed: proposed, ChangedBefore: before, Args: args}
}

// FindAction is the action a person names: by its id (1-call_1), or by
// its call's id (the call's last action).
func FindAction(r scheduler.Reading, name string) (scheduler.Action, bool) {
	if act, ok := r.Action(name); ok {
		return act, true
	}
	if c, found := r.Call(name); found && len(c.Actions) > 0 {
		return c.Actions[len(c.Actions)-1], true
	}
	return scheduler.Action{}, false
}

// ActionAt is the action a fact at seq is part of: its request, start,
// completion, check, interruption or reconciliation, or the confirmation
// of its call and the answer (the call's last action).
func ActionAt(r scheduler.Reading, seq uint64) (scheduler.Action, bool) {
	for _, act := range r.Actions() {
		if seq == act.RequestedSeq || seq == act.StartedSeq || seq == act.CompletedSeq || seq == act.CheckSeq || seq == act.InterruptedSeq || seq == act.ReconciledSeq {
			return act, true
		}
	}
	for _, c := range r.Calls {
		if c.Confirmation != nil && (seq == c.ConfirmationSeq || seq == c.AnswerSeq) && len(c.Actions) > 0 {
			return c.Actions[len(c.Actions)-1], true
		}
	}
	return scheduler.Action{}, false
}
