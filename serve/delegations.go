package serve

import (
	"bytes"
	"cmp"
	"context"
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Delegation is, on an Action that is a call of the delegate tool, the
// child thread it made: a delegation has no action of its own (the child
// does the work), so the thread's actions list it by its call, with a
// link to the child.
type Delegation struct {
	// Child is the child thread's id ("" when the delegation was
	// refused).
	Child string `json:"child,omitempty"`
	// Task is what the child was given to do.
	Task string `json:"task,omitempty"`
	// Refused says why no child was made.
	Refused string `json:"refused,omitempty"`
	// Status, Reason and Result are the child's outcome as reported to
	// the parent; Status is "" while the parent waits on the child.
	Status facts.EndStatus `json:"status,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Result string          `json:"result,omitempty"`
	// ReportedSeq is where the parent recorded the outcome.
	ReportedSeq uint64 `json:"reported_seq,omitempty"`
}

// delegationsOf is the delegations of the reading r as actions, each at
// its child.spawned: started while the parent waits on its child,
// completed once the child's outcome is reported (a refused one is
// completed at once).
func delegationsOf(r scheduler.Reading) []Action {
	var out []Action
	for _, c := range r.Calls {
		if c.Child != nil {
			out = append(out, delegationOf(c))
		}
	}
	return out
}

// delegationOf is the delegation of the call c, which made a child.
func delegationOf(c scheduler.Call) Action {
	ch := c.Child
	d := &Delegation{Child: ch.ID(), Task: ch.Spawned.Task, Refused: ch.Spawned.Refused}
	stage := scheduler.StageStarted
	if rep := ch.Reported; rep != nil {
		d.Status, d.Reason, d.Result, d.ReportedSeq = rep.Status, rep.Reason, rep.Result, ch.ReportedSeq
	}
	if !ch.Waiting() {
		stage = scheduler.StageCompleted
	}
	return Action{ID: c.Ref, Tool: c.Call.Name, Stage: stage, ArgsText: shortTask(d.Task), Seq: ch.SpawnedSeq, Delegation: d}
}

// delegationRow is the actions table's row of the delegation a fact f
// of it (child.spawned, child.reported) records, as the thread has it
// now (ok false for any other fact, or one of no call the thread knows).
func (s *Server) delegationRow(ctx context.Context, f facts.Fact) (id, html string, ok bool) {
	var ref string
	switch f.Kind {
	case facts.KindChildSpawned:
		ref, ok = actionID(f, func(p facts.ChildSpawned) string { return p.CallID })
	case facts.KindChildReported:
		ref, ok = actionID(f, func(p facts.ChildReported) string { return p.CallID })
	}
	if !ok {
		return "", "", false
	}
	c := s.cachedThread(ctx, f.Thread)
	c.mu.Lock()
	r, err := c.th.Reading(ctx)
	c.mu.Unlock()
	if err != nil {
		return "", "", false
	}
	call, found := r.Call(ref)
	if !found || call.Child == nil {
		return "", "", false
	}
	a := delegationOf(call)
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, "action", a); err != nil {
		s.opts.Logf("render delegation %s of %s: %v", ref, f.Thread, err)
		return "", "", false
	}
	return a.ID, b.String(), true
}

// withDelegations merges the delegations of r into actions, in the order
// they were requested.
func withDelegations(actions []Action, r scheduler.Reading) []Action {
	ds := delegationsOf(r)
	if len(ds) == 0 {
		return actions
	}
	actions = append(actions, ds...)
	slices.SortStableFunc(actions, func(a, b Action) int { return cmp.Compare(a.Seq, b.Seq) })
	return actions
}

// shortTask is a task on one line, for the call's column.
func shortTask(task string) string {
	out := make([]rune, 0, len(task))
	for _, r := range task {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}
