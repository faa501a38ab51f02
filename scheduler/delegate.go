package scheduler

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// A delegation is a call that asks for a child thread (Env.Delegate says
// which calls do). Its lifecycle, every arrow one fact:
//
//	model.turn                 names the call
//	→ child.spawned            the spawn transition (key "delegate/spawn/<ref>"):
//	                           the child's id, task, tools and budget — or
//	                           Refused, and the call ends there
//	  (the parent waits)       a wait of kind child, named by the child's id:
//	                           nothing is enabled for the call until…
//	→ child.reported           …the child's outcome is posted (an ingress fact)
//
// The child itself — its log, its first fact naming the parent's
// child.spawned, its end — is the runtime's (package harness): the
// scheduler reads only its own thread. A delegation waits for the actions
// before it in the turn, not for other delegations: the children of one
// turn run at once. The calls after it wait for its report, as they wait
// for an action. Reports are taken in call order: a child's outcome is
// refused while a delegation before it in its turn has not reported.

// SpawnRequest is what deciding a delegation's child is given: the
// parent's thread, the call and its ref, the spawning key, and the
// configuration the parent's log records (the tools it has).
type SpawnRequest struct {
	Thread string
	// Ref is the call's ref ("<turn>-<call id>").
	Ref string
	// Key is the spawn transition's key, unprefixed.
	Key    string
	Call   facts.ToolCall
	System facts.SystemConfigured
	// Parallel is true when another call of the same turn delegates too:
	// the children of one turn run at once.
	Parallel bool
}

// Child is a delegation's child thread as the parent's log records it:
// its spawn and, once it ended, its report. The seq fields say where each
// record is.
type Child struct {
	Spawned     facts.ChildSpawned
	SpawnedSeq  uint64
	Reported    *facts.ChildReported
	ReportedSeq uint64
}

// ID is the child thread's id ("" for a refused delegation).
func (c Child) ID() string { return c.Spawned.Child }

// Refused reports whether the delegation was refused: no child exists.
func (c Child) Refused() bool { return c.Spawned.Refused != "" }

// Waiting reports whether the parent waits on the child: spawned, and not
// reported.
func (c Child) Waiting() bool { return !c.Refused() && c.Reported == nil }

func (c *Child) settled() bool { return !c.Waiting() }

// ErrReportOrder: a child's outcome posted while a delegation before it in
// its turn has not reported.
var ErrReportOrder = errors.New("a child reports before the delegation before it")

// MergeTool is the name of the tool that brings a child's worktree branch
// into the workspace (see package tools).
const MergeTool = "merge_worktree"

func spawnKey(ref string) string { return "delegate/spawn/" + ref }
func budgetKey(turn int) string  { return "delegate/budget/" + strconv.Itoa(turn) }
func (s *state[S]) delegated(c *call) bool {
	if c.child != nil {
		return true
	}
	return len(c.attempts) == 0 && c.asked == nil && s.env.Delegate != nil && s.env.Spawn != nil && s.env.Delegate(c.call)
}

// childWaits counts what the delegations of a turn are at.
type childWaits struct {
	waiting  int // spawned, not reported
	reported int // reported or refused
}

// outputChild adds what a delegation enables or waits for.
func (s *state[S]) outputChild(c *call, v *View, out *fold.Output[S], earlierActionOpen bool, n *childWaits, hooks *beforeHooks) {
	switch ch := c.child; {
	case ch == nil && earlierActionOpen:
		// Waiting its turn: the actions before it take effect first.
	case ch == nil:
		// The before_tool hooks gate a delegation as they gate any call.
		// There is no confirmation of a delegation: a hook's ask refuses it.
		switch g := s.gate(c); {
		case g.pending >= 0:
			s.beforeHookDue(out, hooks, c, g.pending, c.turnSeq)
		case g.deny != "":
			out.Transitions = append(out.Transitions, s.refuseSpawnFor(c, g.deny))
		case c.rewriter() != nil:
			r := c.rewriter()
			out.Transitions = append(out.Transitions, s.refuseSpawnFor(c, fmt.Sprintf(
				"hook %s (%s) rewrote the arguments of a delegation, which a hook may not: the delegation is refused", r.Name, r.Scope)))
		case g.ask != "":
			out.Transitions = append(out.Transitions, s.refuseSpawnFor(c, g.ask+"; a delegation is not put to a person, so it is refused"))
		default:
			out.Transitions = append(out.Transitions, s.spawn(c))
		}
	case ch.Waiting():
		n.waiting++
		v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitChild, RequestID: ch.ID(),
			Summary: fmt.Sprintf("child %s: %s", ch.ID(), oneLine(ch.Spawned.Task, 80))})
	default:
		n.reported++
	}
}

// spawn enables the transition that records a delegation's child.
func (s *state[S]) spawn(c *call) fold.Transition[S] {
	key := spawnKey(c.ref)
	req := SpawnRequest{Thread: s.thread, Ref: c.ref, Key: key, Call: c.call, System: s.system}
	for _, o := range s.calls {
		if o != c && o.turn == c.turn && s.delegated(o) {
			req.Parallel = true
		}
	}
	return fold.Transition[S]{Key: key, Effect: effect.AndThen(s.env.Spawn(req), func(p facts.ChildSpawned) effect.Effect[S, []facts.Draft] {
		p.CallID = c.ref
		return drafts[S](facts.KindChildSpawned, p)
	})}
}

// refuseSpawnFor records that a delegation spawns no child, and why.
func (s *state[S]) refuseSpawnFor(c *call, why string) fold.Transition[S] {
	return fold.Transition[S]{Key: spawnKey(c.ref), Effect: drafts[S](facts.KindChildSpawned, facts.ChildSpawned{CallID: c.ref, Refused: why})}
}

// budgetSpentWhileWaiting enables the end of a budget that a child's
// report spent while other children still run: the thread stops, and the
// runtime stops the children it waited on.
func (s *state[S]) budgetSpentWhileWaiting(n childWaits) (fold.Transition[S], bool) {
	if n.waiting == 0 || n.reported == 0 || s.env.Budget == nil {
		return fold.Transition[S]{}, false
	}
	spent := s.env.Budget()
	if spent == nil {
		return fold.Transition[S]{}, false
	}
	return fold.Transition[S]{Key: budgetKey(s.turns), Effect: drafts[S](facts.KindBudgetExhausted, *spent)}, true
}

func (s *state[S]) childSpawned(f facts.Fact, p facts.ChildSpawned) {
	c := s.byRef[p.CallID]
	if c == nil {
		s.missedRef(p.CallID)
		s.missed = true
		return
	}
	if c.child != nil {
		return
	}
	c.child = &Child{Spawned: p, SpawnedSeq: f.Seq}
	if p.Refused != "" {
		s.say(facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Seq: f.Seq,
			Text: "The delegation was refused; no child thread ran: " + p.Refused})
		return
	}
	s.byChild[p.Child] = c
}

func (s *state[S]) childReported(f facts.Fact, p facts.ChildReported) {
	c := s.byChild[p.Child]
	if c == nil {
		s.missed = true
		return
	}
	if c.child.Reported != nil {
		return
	}
	c.child.Reported, c.child.ReportedSeq = &p, f.Seq
	s.say(facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Seq: f.Seq, Text: ChildResult(p)})
}

// ChildResult is the text a model is shown for a child's report: how the
// child ended, why, and its last word.
func ChildResult(p facts.ChildReported) string {
	var b strings.Builder
	fmt.Fprintf(&b, "child thread %s %s", p.Child, p.Status)
	if p.Reason != "" {
		b.WriteString(": " + p.Reason)
	}
	fmt.Fprintf(&b, " (%d turns, %d tokens)", p.Turns, p.Tokens)
	if p.Result != "" {
		b.WriteString("\n" + p.Result)
	}
	if w := p.Worktree; w != nil {
		fmt.Fprintf(&b, "\nIt worked in a worktree of its own: its changes are on branch %s (base %s, head %s)", w.Branch, w.Base, w.Head)
		if len(w.Changed) > 0 {
			fmt.Fprintf(&b, ", changing %s; they are not in the workspace until merged (the %s tool, with that branch, base and head; a person approves it)", strings.Join(w.Changed, ", "), MergeTool)
		} else {
			b.WriteString(", which changes nothing")
		}
		if w.Kept != "" {
			fmt.Fprintf(&b, "; its worktree is kept at %s", w.Kept)
		}
		if w.Error != "" {
			b.WriteString("; " + w.Error)
		}
		b.WriteString(".")
	}
	return b.String()
}

// acceptReport checks a child's report against the thread's delegations.
func (s *state[S]) acceptReport(p facts.ChildReported) error {
	c := s.byChild[p.Child]
	switch {
	case c == nil:
		return fmt.Errorf("child %q: %w%w", p.Child, ErrUnknownRequest, notAddressed)
	case c.child.Reported != nil:
		return fmt.Errorf("child %q: %w (at seq %d)", p.Child, ErrAnswered, c.child.ReportedSeq)
	case p.CallID != "" && p.CallID != c.ref:
		return fmt.Errorf("child %q was spawned by call %s, not %s: %w", p.Child, c.ref, p.CallID, ErrUnknownRequest)
	}
	for _, e := range s.all {
		if e == c {
			break
		}
		if e.turnSeq == c.turnSeq && e.child != nil && e.child.Waiting() {
			return fmt.Errorf("child %q: child %s of call %s has not reported: %w", p.Child, e.child.ID(), e.ref, ErrReportOrder)
		}
	}
	return nil
}

// checkChildSpawned is the verifier's question about a child.spawned.
func (s *state[S]) checkChildSpawned(p facts.ChildSpawned) error {
	c := s.byRef[p.CallID]
	switch {
	case c == nil:
		s.missedRef(p.CallID)
		return fmt.Errorf("child.spawned names call %s, which is no call of the thread", p.CallID)
	case c.child != nil:
		return fmt.Errorf("call %s spawned a child again (it did at seq %d)", p.CallID, c.child.SpawnedSeq)
	case len(c.attempts) > 0:
		return fmt.Errorf("call %s spawned a child, but it was requested as an action", p.CallID)
	case p.Refused == "" && s.byChild[p.Child] != nil:
		return fmt.Errorf("call %s spawned child %s, which another call spawned", p.CallID, p.Child)
	}
	return nil
}

// Child returns the delegation whose child thread is id.
func (r Reading) Child(id string) (Call, bool) {
	for _, c := range r.Calls {
		if c.Child != nil && !c.Child.Refused() && c.Child.ID() == id {
			return c, true
		}
	}
	return Call{}, false
}

// Children returns the delegations that spawned a child, in the order
// they were made.
func (r Reading) Children() []Call {
	var out []Call
	for _, c := range r.Calls {
		if c.Child != nil && !c.Child.Refused() {
			out = append(out, c)
		}
	}
	return out
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
