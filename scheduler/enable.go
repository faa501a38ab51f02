package scheduler

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// output reports the phase and the transitions it enables.
func (s *state[S]) output() fold.Output[S] {
	var out fold.Output[S]
	v := View{Turns: s.turns}
	switch {
	case s.failure != "":
		v.Phase, v.Failure = PhaseFailed, s.failure
		out.Stop = &fold.Stop{Status: fold.StatusFailed, Reason: s.failure, Retry: s.retry}
		if s.retry != "" {
			out.Transitions = append(out.Transitions, s.infer())
		}
	case s.halted != "":
		// A rerun stopped where it diverged (see rerun.go).
		v.Phase = PhaseDone
		out.Stop = &fold.Stop{Status: fold.StatusStopped, Reason: s.halted}
	case s.exhausted != nil:
		v.Phase = PhaseFailed
		v.Failure = fmt.Sprintf("%s budget exhausted: %d used of %d", s.exhausted.Resource, s.exhausted.Used, s.exhausted.Limit)
		out.Stop = &fold.Stop{Status: fold.StatusStopped, Reason: v.Failure}
	case len(s.calls) > 0:
		s.outputCalls(&v, &out)
	case s.question != nil:
		s.outputQuestion(&v, &out)
	case s.answerTurn > 0 && s.checked == nil:
		v.Phase = PhaseCheck
		out.Transitions = append(out.Transitions, s.checkOutput())
	case s.userAfterTurn:
		v.Phase = PhaseInfer
		out.Transitions = append(out.Transitions, s.infer())
	default:
		v.Phase = PhaseDone
		v.Output = s.finalOutput()
	}
	s.offer(&v, &out)
	s.hold(&v, &out)
	s.elicitWaits(&v)
	out.View = v
	out.Waits = v.Waits
	s.threadHooks(&out, v)
	return out
}

// BudgetRequest is the request id of a wait for the tree's budget.
const BudgetRequest = "budget"

// hold replaces the next model turn, when one is enabled and the tree's
// budget cannot cover it (Env.Hold), with a wait for a person.
func (s *state[S]) hold(v *View, out *fold.Output[S]) {
	if s.env.Hold == nil || out.Stop != nil {
		return
	}
	key := inferKey(s.turns + 1)
	i := slices.IndexFunc(out.Transitions, func(t fold.Transition[S]) bool { return t.Key == key })
	if i < 0 || (s.env.Budget != nil && s.env.Budget() != nil) {
		return // no turn due, or a budget.exhausted ends the thread
	}
	why := s.env.Hold()
	if why == "" {
		return
	}
	out.Transitions = slices.Delete(slices.Clone(out.Transitions), i, i+1)
	v.Phase = PhaseBudget
	v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitBudget, RequestID: BudgetRequest, Summary: why})
}

func (s *state[S]) outputCalls(v *View, out *fold.Output[S]) {
	ran := false
	reconcile := false
	// The calls of a turn take effect in the order the model wrote them: a
	// call runs only when every call before it is settled. Requests,
	// confirmations and the recovery of an action in doubt are records,
	// not effects, and are made for all calls at once.
	earlierOpen := false
	// A denial that stopped the thread: no other call of the turn starts;
	// each is completed as denied, unrun, and no model turn follows.
	stop := s.stopped()
	// A delegation waits only for the actions before it: the children of
	// one turn run at once, each its own thread.
	earlierActionOpen := false
	children := childWaits{}
	hooks := beforeHooks{}
	for _, c := range s.calls {
		if s.delegated(c) {
			if stop != nil && c.child == nil {
				// A stop refuses a delegation not yet spawned: no child runs.
				out.Transitions = append(out.Transitions, s.refuseSpawn(c, stop))
				continue
			}
			s.outputChild(c, v, out, earlierActionOpen, &children, &hooks)
			earlierOpen = earlierOpen || !c.settled()
			continue
		}
		a := c.last()
		switch {
		case a == nil:
			out.Transitions = append(out.Transitions, s.request(c, c.ref))
			hooks.requesting = true
		case stop != nil && c != stop && a.Started == nil && a.Completed == nil:
			out.Transitions = append(out.Transitions, s.halt(c, a, stop))
		case stop != nil && c != stop && a.Started == nil:
			// Completed unrun by the stop.
		case len(c.attempts) == 1 && a.Requested.Refused == "" && a.Requested.Served == nil && a.Started == nil && a.Completed == nil && c.asked == nil &&
			s.gate(c).pending >= 0:
			// The before_tool hooks run first, one at a time for a call
			// (the calls side by side, see hooktogether.go): a call is
			// put to a person, or run, only once they all said.
			s.beforeHookDue(out, &hooks, c, s.gate(c).pending, a.RequestedSeq)
		case c.hookDenied() && a.Started == nil && a.Completed == nil:
			out.Transitions = append(out.Transitions, fold.Transition[S]{Key: executeKey(a.ID), Effect: s.refused(a, s.gate(c).deny)})
		case c.hookDenied():
			// Completed unrun, denied by a hook: the model is told why.
			ran = true
		case c.needsRewrite(a):
			// A hook rewrote the arguments: the call is requested anew
			// with them, and that request is the one that counts.
			out.Transitions = append(out.Transitions, s.requestRewritten(c))
		case c.needsConfirmation() && c.asked == nil:
			out.Transitions = append(out.Transitions, s.confirm(c))
		case c.needsConfirmation() && c.answer == nil:
			summary := fmt.Sprintf("run %s %s", c.asked.Tool, c.asked.Args)
			if c.offer != nil {
				summary = offerSummary(c)
			}
			v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitConfirmation, RequestID: c.asked.RequestID, Summary: summary})
		case c.denied() && a.Completed == nil:
			out.Transitions = append(out.Transitions, s.refuse(c, a))
		case c.denied():
		case a.Reconciled != nil && a.Reconciled.Decision == facts.DecisionRetry:
			out.Transitions = append(out.Transitions, s.request(c, c.ref+"."+strconv.Itoa(len(c.attempts)+1)))
		case a.Completed == nil && a.Started == nil && earlierOpen:
			// Approved, and waiting its turn.
		case a.Completed == nil && a.Started == nil:
			out.Transitions = append(out.Transitions, s.execute(c, a))
		case a.Completed == nil && a.Interrupted == nil && s.deliverable(a):
			// Started, its process died while the server's question
			// waited, and the call goes on at the server: the answer is
			// delivered there once a person gives it (see deliver.go);
			// until then the question is the thread's wait.
			if e, n := s.resumable(a); e.Answer != nil {
				out.Transitions = append(out.Transitions, s.deliver(a, e, n))
			}
		case a.Completed == nil && a.Interrupted == nil:
			// Started, never completed, and no runtime holds it: the
			// process died while the adapter ran. Never run it again
			// blindly: look, record, and ask a person.
			out.Transitions = append(out.Transitions, s.recover(a))
		case a.Open():
			reconcile = true
			v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitReconcile, RequestID: a.ID, Summary: openSummary(c, a)})
		default:
			if a.Started != nil && a.Completed != nil {
				if t, ok := s.afterHooks(c, a); ok {
					out.Transitions = append(out.Transitions, t)
				}
			}
			// An offered merge ends the thread's work: no model turn
			// follows it (see offer.go).
			ran = ran || c.offer == nil
		}
		earlierOpen = earlierOpen || !c.settled()
		earlierActionOpen = earlierActionOpen || !c.settled()
	}
	s.addBeforeHooks(out, &hooks)
	ran = ran || children.reported > 0
	if t, ok := s.budgetSpentWhileWaiting(children); ok {
		out.Transitions = append(out.Transitions, t)
	}
	switch {
	case len(out.Transitions) > 0:
		v.Phase = PhaseTool
	case reconcile:
		v.Phase = PhaseReconcile
	case len(v.Waits) > 0 && len(v.Waits) == children.waiting:
		v.Phase = PhaseChildren
	case len(v.Waits) > 0:
		v.Phase = PhaseConfirm
	case stop != nil && !s.userAfterTurn:
		// A person denied a call and stopped: the thread stops here, until
		// someone writes to the thread again. Its status is stopped, as
		// for any other stop, not done: nothing finished.
		v.Phase = PhaseDone
		out.Stop = &fold.Stop{Status: fold.StatusStopped, Reason: stopReason(stop)}
	case ran || s.goesOn() || s.userAfterTurn:
		// Every call is settled and at least one ran, or a person denied
		// one and told the model: the model sees the results (and the
		// denials) in its next turn.
		v.Phase = PhaseInfer
		out.Transitions = append(out.Transitions, s.infer())
	default:
		// Every call was denied, as denials were recorded before they
		// said what follows them: the turn is complete without a tool.
		v.Phase = PhaseDone
	}
}

// stopReason says why a denial stopped the thread: who denied which call,
// and the reason they gave.
func stopReason(stop *call) string {
	by := stop.answer.By
	if by == "" {
		by = "a person"
	}
	why := fmt.Sprintf("%s denied %s and stopped the thread", by, stop.ref)
	if stop.answer.Reason != "" {
		why += ": " + stop.answer.Reason
	}
	return why
}

func openSummary(c *call, a *Action) string {
	if in := a.Interrupted; in != nil && in.Cancelled {
		what := "the workspace could not be observed"
		if in.ObservedNow != "" {
			what = "the workspace changed"
		}
		return fmt.Sprintf("%s %s was stopped when its run was cancelled, and %s: did it happen?", c.call.Name, a.ID, what)
	}
	if a.Interrupted != nil {
		return fmt.Sprintf("%s %s was in progress when the process died: did it happen?", c.call.Name, a.ID)
	}
	if done := a.Completed; done != nil && done.Report.InDoubt {
		why := done.Report.Error
		if len(why) > 200 {
			why = why[:200] + "…"
		}
		return fmt.Sprintf("%s %s is in doubt: %s; did it happen? accept, retry or abandon?", c.call.Name, a.ID, why)
	}
	return fmt.Sprintf("%s %s reported success but nothing observed changed: accept, retry or abandon?", c.call.Name, a.ID)
}

func (s *state[S]) outputQuestion(v *View, out *fold.Output[S]) {
	q := s.question
	switch {
	case q.Asked == nil:
		v.Phase = PhaseQuestion
		out.Transitions = append(out.Transitions, s.ask(q))
	case q.Answer == nil:
		v.Phase = PhaseQuestion
		v.AllowFreeText, v.Options = q.Asked.AllowFreeText, q.Asked.Options
		v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitQuestion, RequestID: q.Asked.RequestID, Summary: q.Asked.Text})
	default:
		v.Phase = PhaseInfer
		out.Transitions = append(out.Transitions, s.infer())
	}
}

// infer enables the next model turn, or the end of a spent budget.
func (s *state[S]) infer() fold.Transition[S] {
	turn := s.turns + 1
	key := inferKey(turn)
	if s.env.Budget != nil {
		if spent := s.env.Budget(); spent != nil {
			return fold.Transition[S]{Key: key, Effect: drafts[S](facts.KindBudgetExhausted, *spent)}
		}
	}
	// The conversation is lent (see lend): projecting costs no copy of
	// it, and a turn that runs gives the model its own, said when it runs.
	lent := s.lend()
	if s.leanNow != nil && s.leanNow() {
		// A lean scheduler's (a verifier's, see lean.go): it has no
		// conversation to give the model.
		return fold.Transition[S]{Key: key, Effect: effect.Die[S, []facts.Draft](ErrLean)}
	}
	req := Request{Thread: s.thread, Turn: turn, System: s.system}
	if o := s.system.Output; o != nil {
		req.System.Prompt = strings.TrimSpace(req.System.Prompt + "\n\n" + outputInstruction(o))
	}
	ask := effect.AndThen(effect.Succeed[S](struct{}{}), func(struct{}) effect.Effect[S, asked] {
		own := req
		own.Messages = said(lent)
		prepare := effect.Succeed[S](Prepared{Request: own})
		if s.env.Prepare != nil {
			prepare = s.env.Prepare(own)
		}
		return effect.AndThen(prepare, func(p Prepared) effect.Effect[S, asked] {
			return effect.Map(s.env.Infer(p.Request), func(mt facts.ModelTurn) asked { return asked{turn: mt, record: p.Record} })
		})
	})
	return fold.Transition[S]{Key: key, Effect: effect.AndThen(ask, func(a asked) effect.Effect[S, []facts.Draft] {
		mt := a.turn
		mt.Turn = turn
		if mt.Cut != nil {
			c := *mt.Cut
			c.InARow = s.cutInARow + 1
			mt.Cut = &c
		}
		mt.ToolCalls = uniqueIDs(mt.ToolCalls)
		if mt.Question != nil && mt.Question.ID == "" {
			q := *mt.Question
			q.ID = "q-" + strconv.Itoa(turn)
			mt.Question = &q
		}
		// Each call of the turn that failed before this one answered is a
		// fact of its own, before the turn.
		out := make([]facts.Draft, 0, len(a.record)+len(mt.Attempts)+1)
		out = append(out, a.record...)
		for _, a := range mt.Attempts {
			a.Turn = turn
			d, err := facts.NewDraft(facts.KindModelCallFailed, "", a)
			if err != nil {
				return effect.Die[S, []facts.Draft](err)
			}
			out = append(out, d)
		}
		mt.Attempts = nil
		d, err := facts.NewDraft(facts.KindModelTurn, "", mt)
		if err != nil {
			return effect.Die[S, []facts.Draft](err)
		}
		return s.compared(turn, mt, append(out, d))
	})}
}

// asked is a model turn's answer and the drafts its request's
// preparation records before it (see Env.Prepare).
type asked struct {
	turn   facts.ModelTurn
	record []facts.Draft
}

// uniqueIDs gives every call of a turn an id that is unique within the
// turn and safe inside a transition key: a model may omit ids, repeat them,
// or write ones with characters a key cannot hold. An id of up to 64
// letters, digits, '_' and '-' is kept; another gets its unsafe characters
// replaced (and a long one a digest); an empty or repeated one becomes
// call-N. The recorded model.turn carries the ids as given here, so the
// model sees the same ids on its calls and on their results.
func uniqueIDs(calls []facts.ToolCall) []facts.ToolCall {
	seen := map[string]bool{}
	out := slices.Clone(calls)
	for i := range out {
		id := safeID(out[i].ID)
		if id == "" || seen[id] {
			id = "call-" + strconv.Itoa(i+1)
			for seen[id] {
				id += "_"
			}
		}
		out[i].ID = id
		seen[id] = true
	}
	return out
}

func safeID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		sum := sha256.Sum256([]byte(id))
		return string(b[:40]) + "-" + hex.EncodeToString(sum[:8])
	}
	return string(b)
}

// request records the action a call asks for, before anything runs. id is
// the action id of the attempt.
func (s *state[S]) request(c *call, id string) fold.Transition[S] {
	if c.served != nil && len(c.attempts) == 0 {
		return s.serveRequest(c, id)
	}
	tc := c.effective()
	if c.asked != nil {
		// The approved call is the one in the confirmation request: the
		// tool runs with exactly the arguments a person saw.
		tc.Name, tc.Args = c.asked.Tool, c.asked.Args
	}
	return s.requestWith(c, id, tc, len(c.attempts) > 0, "")
}

// requestWith records the request of call c as tc: a retry carries what
// was decided for the call's first request; another is decided now, and
// a refusal of its arguments is said after whose (when given).
func (s *state[S]) requestWith(c *call, id string, tc facts.ToolCall, retry bool, whose string) fold.Transition[S] {
	// The policy is decided now and recorded: a capability not granted is
	// never put to a person (the boundary denies it), and a call already
	// confirmed is not asked again on a retry.
	policy := Policy{Confirm: true, Capability: action.Execute}
	switch {
	case c.offer != nil:
		policy = offerPolicy
	case s.env.Policy != nil:
		policy = s.env.Policy(tc)
	}
	if s.env.Granted != nil && !s.env.Granted(policy.Capability) {
		policy.Confirm = false
	}
	if retry {
		policy = c.policy
	} else if s.env.LoopGuard > 0 && c.offer == nil {
		if n := s.repeats(c); n >= s.env.LoopGuard {
			policy.Confirm, policy.Repeats = true, n
		}
	}
	req := action.Request{
		ActionID:       id,
		CallID:         tc.ID,
		Capability:     policy.Capability,
		Instruction:    fmt.Sprintf("%s %s", tc.Name, tc.Args),
		IdempotencyKey: executeKey(id),
		// A request is recorded before anyone is asked to confirm it, so it
		// is the actor's; who approved is on confirmation.answered.
		RequestedBy: s.env.Actor,
		ActorID:     s.env.Actor,
		Adapter:     tc.Name,
	}
	if json.Valid([]byte(tc.Args)) {
		req.Payload = json.RawMessage(tc.Args)
	}
	if retry {
		// A retry of a call that was asked and approved: what was
		// approved runs, and is not checked again — in the sandbox it
		// was approved in (plan mode may have ended since: a command the
		// person let run read-only is not run again writable).
		req.Sandbox = c.attempts[0].Requested.Sandbox
		return fold.Transition[S]{Key: requestKey(id), Effect: s.requested(tc, req, policy, "")}
	}
	if err := facts.CheckJSON([]byte(tc.Args)); err != nil {
		// Malformed, or a key named twice (a person would see one value
		// and the tool run the other): refused before anyone is asked.
		return fold.Transition[S]{Key: requestKey(id), Effect: s.requested(tc, req, policy,
			fmt.Sprintf("the arguments of %s are refused: %v", tc.Name, err))}
	}
	precheck := effect.Succeed[S]("")
	if s.env.Precheck != nil {
		precheck = s.env.Precheck(tc)
	}
	return fold.Transition[S]{Key: requestKey(id), Effect: effect.AndThen(precheck, func(refusal string) effect.Effect[S, []facts.Draft] {
		if refusal != "" && whose != "" {
			refusal = whose + ": " + refusal
		}
		return s.requested(tc, req, policy, refusal)
	})}
}

// requested describes recording the request of a call: with the check its
// tool declares, or — refused — with the refusal and no confirmation. A
// declared check whose name no check is registered under refuses the
// call, as a refusal of its arguments does.
func (s *state[S]) requested(tc facts.ToolCall, req action.Request, policy Policy, refusal string) effect.Effect[S, []facts.Draft] {
	if req.Sandbox == nil && s.env.Sandbox != nil {
		// (A retry carries the sandbox its call was approved in.)
		req.Sandbox = s.env.Sandbox(tc)
	}
	if s.env.MCP != nil {
		req.MCP = s.env.MCP(tc, s.offered(tc.Name))
	}
	if refusal != "" {
		f := req.Fact()
		f.Refused = refusal
		return drafts[S](facts.KindActionRequested, f)
	}
	declare := effect.Succeed[S]((*facts.CheckSpec)(nil))
	if s.env.Declare != nil && req.Payload != nil {
		declare = s.env.Declare(tc)
	}
	return effect.AndThen(declare, func(check *facts.CheckSpec) effect.Effect[S, []facts.Draft] {
		if check != nil {
			if err := action.ValidateCheck(*check); err != nil {
				// A check nobody can decide would be found unknown only
				// after the effect, which a person approved for it:
				// refused now, before anyone is asked.
				f := req.Fact()
				f.Refused = fmt.Sprintf("%s declares a check that cannot be decided: %v", tc.Name, err)
				return drafts[S](facts.KindActionRequested, f)
			}
		}
		req.Check = check
		if check != nil && req.Sandbox == nil && s.env.CheckSandbox != nil {
			req.Sandbox = s.env.CheckSandbox(*check)
		}
		f := req.Fact()
		f.Confirm, f.Repeats = policy.Confirm, policy.Repeats
		return drafts[S](facts.KindActionRequested, f)
	})
}

// offered is the schema of the tool named name as the thread's
// configuration offered it to the model, or nil.
func (s *state[S]) offered(name string) *facts.ToolSchema {
	for i := range s.system.Tools {
		if s.system.Tools[i].Name == name {
			t := s.system.Tools[i]
			return &t
		}
	}
	return nil
}

func (s *state[S]) confirm(c *call) fold.Transition[S] {
	g := s.gate(c)
	reason := ""
	if n := c.policy.Repeats; n > 0 {
		reason = fmt.Sprintf("the model made this same call %d times in a row (is it looping?): a person decides whether it runs again", n)
	}
	tc := c.effective()
	return fold.Transition[S]{Key: confirmKey(c.ref), Effect: drafts[S](facts.KindConfirmationRequested, facts.ConfirmationRequested{
		RequestID:  c.ref,
		CallID:     c.ref,
		Tool:       tc.Name,
		Args:       tc.Args,
		Digest:     Digest(tc.Name, tc.Args),
		Reason:     reason,
		Hook:       g.ask,
		ApprovedBy: g.approvedBy,
		Rewritten:  rewriteNote(c),
	})}
}

// repeats is how many times in a row, up to and including c, the thread's
// model made c's call (the same tool and arguments), across its turns, as
// the log says. The latest turn's calls answer when an other call comes
// before c among them; else the whole log is read.
func (s *state[S]) repeats(c *call) int {
	n, reached := repeatsIn(s.all, c)
	if reached && s.whole != nil {
		w := s.whole()
		n, reached = repeatsIn(w.all, c)
		if reached && n > 0 && w.lean != nil {
			// The run goes back past the calls a lean fold keeps: on
			// into those it let go of (see lean.go).
			n += w.lean.tailRepeats(c)
		}
	}
	return n
}

// repeatsIn is repeats among calls; reached reports that the run of the
// same call goes back to the first of them.
func repeatsIn(calls []*call, c *call) (n int, reached bool) {
	at := slices.IndexFunc(calls, func(o *call) bool { return o.ref == c.ref })
	if at < 0 {
		return 0, true
	}
	n = 1
	i := at - 1
	args := c.canonical()
	for ; i >= 0 && calls[i].call.Name == c.call.Name && calls[i].canonical() == args; i-- {
		n++
	}
	return n, i < 0
}

// canonicalArgs is a call's arguments as the loop guard compares them:
// the same JSON value spelled another way (spaces, key order, escapes)
// is the same call, so a looping model cannot step round the guard by
// respelling it. Arguments that are not JSON are compared as written.
func canonicalArgs(args string) string {
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return args
	}
	b, err := json.Marshal(v) // object keys sorted
	if err != nil {
		return args
	}
	return string(b)
}

// execute carries out an attempt: through the boundary, or — when its
// idempotency key was completed before — by returning that completion.
func (s *state[S]) execute(c *call, a *Action) fold.Transition[S] {
	req := action.FromFact(a.Requested)
	var prior *Action
	switch {
	case s.prior != nil:
		prior = s.prior(req.IdempotencyKey, a.ID)
	case s.whole != nil:
		prior = s.whole().done[req.IdempotencyKey]
	default:
		prior = s.done[req.IdempotencyKey]
	}
	if prior != nil && prior.ID != a.ID {
		return fold.Transition[S]{Key: executeKey(a.ID), Effect: drafts[S](facts.KindActionCompleted, action.Replay(req, *prior.Completed))}
	}
	if a.Requested.Served != nil {
		return s.serve(a)
	}
	if refused := a.Requested.Refused; refused != "" || req.Payload == nil {
		// The call was refused before anyone was asked, or the model's
		// arguments are not JSON: nothing can run. The model is shown why.
		if refused == "" {
			refused = fmt.Sprintf("the arguments of %s are not valid JSON: %q", c.call.Name, c.call.Args)
		}
		// Never started, it had no effect: none, as for a call a person
		// denied (not "reported": there is no report of an effect).
		return fold.Transition[S]{Key: executeKey(a.ID), Effect: drafts[S](facts.KindActionCompleted, facts.ActionCompleted{
			ActionID: a.ID, EffectState: facts.EffectNone,
			Report: facts.Report{Status: facts.StatusFailed, Error: refused},
		})}
	}
	id := a.ID
	return fold.Transition[S]{Key: executeKey(id), ClaimKey: startKey(id), Staged: func(j fold.Journal) effect.Effect[S, []facts.Draft] {
		// The thread's last observation is looked up only when the
		// transition runs, not at every projection.
		since, err := s.sinceFor(c)
		if err != nil {
			return effect.Die[S, []facts.Draft](err)
		}
		return s.env.Act(req, since, j)
	}}
}

// since is the thread's last observation of the workspace, as the whole
// log records it (see action.ObservedIn).
func (s *state[S]) since() (action.Observed, error) {
	if s.observed != nil {
		return s.observed()
	}
	return s.lastObs, nil
}

// refused describes completing, unrun, a request that was denied, with
// the thread's last observation looked up when it runs.
func (s *state[S]) refused(a *Action, why string) effect.Effect[S, []facts.Draft] {
	return effect.AndThen(effect.Succeed[S](struct{}{}), func(struct{}) effect.Effect[S, []facts.Draft] {
		c, _ := s.attemptOf(a.ID)
		since, err := s.sinceFor(c)
		if err != nil {
			return effect.Die[S, []facts.Draft](err)
		}
		return s.env.Refuse(action.FromFact(a.Requested), since, why)
	})
}

// sinceFor is since for an action of call c: none for an offered merge,
// which acts in the workspace while the thread observed only its own
// worktree, a directory the workspace's readings are not to be compared
// with.
func (s *state[S]) sinceFor(c *call) (action.Observed, error) {
	if c != nil && c.offer != nil {
		return action.Observed{}, nil
	}
	return s.since()
}

// refuse completes the request of a call a person denied.
func (s *state[S]) refuse(c *call, a *Action) fold.Transition[S] {
	why := "a person denied the call"
	if c.answer.By != "" {
		why = c.answer.By + " denied the call"
	}
	if c.answer.Reason != "" {
		why += ": " + c.answer.Reason
	}
	if c.offer != nil {
		why = offerDenied(c)
	}
	return fold.Transition[S]{Key: executeKey(a.ID), Effect: s.refused(a, why)}
}

// halt completes, unrun, an attempt of a call that had not started when
// a person denied another call of the turn and stopped the thread.
func (s *state[S]) halt(c *call, a *Action, stop *call) fold.Transition[S] {
	by := stop.answer.By
	if by == "" {
		by = "a person"
	}
	why := fmt.Sprintf("not run: %s stopped the thread when denying %s", by, stop.ref)
	return fold.Transition[S]{Key: executeKey(a.ID), Effect: s.refused(a, why)}
}

// refuseSpawn records that a delegation after a stopping denial spawns no
// child: the call ends with the stop as its reason.
func (s *state[S]) refuseSpawn(c *call, stop *call) fold.Transition[S] {
	by := stop.answer.By
	if by == "" {
		by = "a person"
	}
	return fold.Transition[S]{Key: spawnKey(c.ref), Effect: drafts[S](facts.KindChildSpawned, facts.ChildSpawned{
		CallID:  c.ref,
		Refused: fmt.Sprintf("not run: %s stopped the thread when denying %s", by, stop.ref),
	})}
}

func (s *state[S]) recover(a *Action) fold.Transition[S] {
	return fold.Transition[S]{Key: recoverKey(a.ID), Effect: effect.AndThen(s.env.Recover(*a.Started),
		func(rec facts.ActionInterrupted) effect.Effect[S, []facts.Draft] {
			return drafts[S](facts.KindActionInterrupted, rec)
		})}
}

func (s *state[S]) ask(q *Question) fold.Transition[S] {
	return fold.Transition[S]{Key: askKey(q.Turn), Effect: drafts[S](facts.KindQuestionAsked, facts.QuestionAsked{
		RequestID:     s.scope() + "q-" + strconv.Itoa(q.Turn),
		Text:          q.Question.Text,
		Options:       q.Question.Options,
		AllowFreeText: q.Question.AllowFreeText,
	})}
}

// drafts describes a transition that appends one fact and does nothing else.
func drafts[S any](kind facts.Kind, payload any) effect.Effect[S, []facts.Draft] {
	d, err := facts.NewDraft(kind, "", payload)
	if err != nil {
		return effect.Die[S, []facts.Draft](err)
	}
	return effect.Succeed[S]([]facts.Draft{d})
}

// ToolResult is the text a model is shown for a tool's completion: the
// report, what the runtime observed, and the check — the report is not
// taken as the observation.
func ToolResult(p facts.ActionCompleted, check *facts.CheckRecorded) string {
	r := p.Report
	var b strings.Builder
	fmt.Fprintf(&b, "report: %s", r.Status)
	if r.Error != "" {
		b.WriteString(": " + r.Error)
	}
	for _, part := range []string{r.Transcript, r.Stdout} {
		if part != "" {
			b.WriteString("\n" + part)
		}
	}
	if r.Stderr != "" {
		b.WriteString("\nstderr:\n" + r.Stderr)
	}
	if r.ExitCode != 0 {
		fmt.Fprintf(&b, "\nexit code %d", r.ExitCode)
	}
	fmt.Fprintf(&b, "\nobserved by the runtime: effect %s", p.EffectState)
	if len(p.Observation.Changed) > 0 {
		paths := make([]string, len(p.Observation.Changed))
		for i, c := range p.Observation.Changed {
			paths[i] = c.Path
		}
		fmt.Fprintf(&b, "; changed: %s", strings.Join(paths, ", "))
	}
	if check != nil {
		fmt.Fprintf(&b, "\ncheck %s %s: %s — %s", check.Check.Name, check.Check.Target, check.Verdict, check.Reason)
	}
	return b.String()
}

// InterruptedResult is the text a model is shown for a call whose run
// was cancelled while it ran, stopped before it finished, when the
// runtime saw that nothing changed: an interruption, not a failure of the
// call, with what it said before it stopped.
func InterruptedResult(p facts.ActionInterrupted) string {
	var b strings.Builder
	b.WriteString("interrupted: the run was cancelled while this call ran, and the call was stopped before it finished (a command gets SIGTERM, then SIGKILL); it did not fail")
	if r := p.Report; r != nil {
		if r.Stdout != "" {
			b.WriteString("\noutput before it stopped:\n" + r.Stdout)
		}
		if r.Stderr != "" {
			b.WriteString("\nstderr before it stopped:\n" + r.Stderr)
		}
	}
	b.WriteString("\nobserved by the runtime: nothing changed in the workspace")
	return b.String()
}

func reconciledResult(a *Action, p facts.EffectReconciled) string {
	what := "reported success but the runtime observed no change"
	switch {
	case a.Interrupted != nil && a.Interrupted.Cancelled:
		what = "was stopped when its run was cancelled, and the workspace changed or could not be observed"
	case a.Interrupted != nil:
		what = "was interrupted when the process died"
	case a.Completed != nil && a.Completed.Report.InDoubt:
		what = "was in doubt (no answer it could trust: " + a.Completed.Report.Error + ")"
	}
	text := fmt.Sprintf("The action %s; a person (%s) decided: %s.", what, p.By, p.Decision)
	if p.Note != "" {
		text += " Note: " + p.Note
	}
	return text
}
