package scheduler

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	// PhaseDone: the turn is complete; nothing is enabled or awaited.
	PhaseDone Phase = "done"
	// PhaseFailed: a step failed for good, or a budget ran out.
	PhaseFailed Phase = "failed"
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
}

// Env supplies the effects the scheduler enables. S is the services the
// effects need.
type Env[S any] struct {
	// Infer describes one model turn.
	Infer func(Request) effect.Effect[S, facts.ModelTurn]
	// Declare describes finding the check a call declares (it may read the
	// workspace, as edit_file's expected result does); nil declares none.
	Declare func(call facts.ToolCall) effect.Effect[S, *facts.CheckSpec]
	// Act describes carrying out a request through the effect boundary:
	// it must record action.started through j immediately before invoking
	// the adapter, and return the action.completed (and check.recorded)
	// drafts. An action that may not start returns its completion without
	// recording anything.
	Act func(req action.Request, j fold.Journal) effect.Effect[S, []facts.Draft]
	// Refuse describes completing a request a person denied, without
	// invoking its adapter.
	Refuse func(req action.Request, why string) effect.Effect[S, facts.ActionCompleted]
	// Recover describes observing an action found in doubt.
	Recover func(started facts.ActionStarted) effect.Effect[S, facts.ActionInterrupted]
	// Policy says whether a call needs confirmation and what it needs.
	Policy func(call facts.ToolCall) Policy
	// Granted reports whether the thread was granted a capability; a call
	// needing one it was not is not put to a person: the boundary denies
	// it. Nil grants everything.
	Granted func(action.Capability) bool
	// Budget, when set, is asked before each model turn; a non-nil answer
	// stops the thread with that budget.exhausted fact instead of the turn.
	Budget func() *facts.BudgetExhausted
	// Actor names the actor in action requests.
	Actor string
	// Scope, when set, begins every request and action id this scheduler
	// makes ("<scope>-1-call_1"), so that a scheduler nested beside
	// another (see fold.Prefixed) is answered on its own requests.
	Scope string
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

var ownPrefixes = []string{"infer/turn/", "confirm/", "tool/", "question/ask/"}

// Digest identifies a tool call exactly: the tool's name and its
// arguments, byte for byte.
func Digest(tool, args string) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(args))
	return hex.EncodeToString(h.Sum(nil))
}

// Errors of Accept, wrapped with the request id.
var (
	// ErrUnknownRequest: an answer names no request of this thread.
	ErrUnknownRequest = errors.New("no such request")
	// ErrAnswered: an answer names a request already answered.
	ErrAnswered = errors.New("request already answered")
	// ErrNotAnOption: an answer to a question that allows no free text is
	// not one of its options.
	ErrNotAnOption = errors.New("answer is not one of the options")
	// ErrDigest: an approval names a digest other than the request's.
	ErrDigest = errors.New("approval does not match the request's digest")
)

// attempt is the fold of one action of a call; a reconciliation may ask
// for another.
type attempt struct {
	id          string // the action id: ref, then ref.2, ref.3, …
	requested   *facts.ActionRequested
	started     *facts.ActionStarted
	completed   *facts.ActionCompleted
	doneSeq     uint64 // the seq of completed
	check       *facts.CheckRecorded
	interrupted *facts.ActionInterrupted
	reconciled  *facts.EffectReconciled
}

// open reports whether a person must settle the attempt: an effect nobody
// can vouch for (unknown), or an action in doubt after a crash.
func (a *attempt) open() bool {
	if a.reconciled != nil {
		return false
	}
	return a.interrupted != nil || (a.completed != nil && a.completed.EffectState == facts.EffectUnknown)
}

// call is the fold of one tool call of a model turn.
type call struct {
	ref      string // "<turn>-<id>", unique in the thread
	call     facts.ToolCall
	policy   Policy // as recorded on the first action.requested
	asked    *facts.ConfirmationRequested
	answer   *facts.ConfirmationAnswered
	attempts []*attempt
}

func (c *call) last() *attempt {
	if len(c.attempts) == 0 {
		return nil
	}
	return c.attempts[len(c.attempts)-1]
}

func (c *call) needsConfirmation() bool { return c.policy.Confirm }
func (c *call) denied() bool            { return c.needsConfirmation() && c.answer != nil && !c.answer.Approved }

// settled reports whether nothing more happens to the call.
func (c *call) settled() bool {
	if c.denied() {
		return true
	}
	a := c.last()
	if a == nil {
		return false
	}
	if a.reconciled != nil {
		return a.reconciled.Decision != facts.DecisionRetry
	}
	return a.completed != nil && !a.open()
}

// question is the fold of a question the model asked.
type question struct {
	turn   int
	q      facts.Question
	asked  *facts.QuestionAsked
	answer *facts.QuestionAnswered
}

// View is the scheduler's folded state.
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
}

// state is the scheduler's fold of a stretch of the log: the whole log
// (the full state, for the conversation and for answers), or the latest
// model turn on (the current state, for what is enabled now).
type state[S any] struct {
	env Env[S]
	// whole, when set, answers what only the whole log knows: the
	// conversation, and which idempotency keys were completed.
	whole func() *state[S]

	thread    string
	system    facts.SystemConfigured
	messages  []facts.Message
	turns     int
	calls     []*call // of the latest model turn
	byRef     map[string]*call
	byRequest map[string]*call    // confirmation request id → call
	byAction  map[string]*call    // action id → call
	done      map[string]*attempt // idempotency key → attempt that completed it
	question  *question
	// userAfterTurn is true when a user message came after the latest
	// model turn (or before the first): a model turn is due.
	userAfterTurn bool
	failure       string
	retry         string // the failed key a new resume may run again
	exhausted     *facts.BudgetExhausted
}

func newState[S any](env Env[S]) *state[S] {
	return &state[S]{env: env, byRef: map[string]*call{}, byRequest: map[string]*call{},
		byAction: map[string]*call{}, done: map[string]*attempt{}}
}

// attemptOf returns the call and attempt of an action id.
func (s *state[S]) attemptOf(id string) (*call, *attempt) {
	c := s.byAction[id]
	if c == nil {
		return nil, nil
	}
	for _, a := range c.attempts {
		if a.id == id {
			return c, a
		}
	}
	return c, nil
}

// apply folds one fact.
func (s *state[S]) apply(f facts.Fact) error {
	s.thread = f.Thread
	if transitionKinds[f.Kind] && !owns(f.Cause) {
		// Another component's: a scheduler nested beside this one (its
		// keys prefixed) keeps its own turns, calls and failures.
		return nil
	}
	switch f.Kind {
	case facts.KindSystemConfigured:
		return decodeInto(f, &s.system)
	case facts.KindUserMessage:
		var p facts.UserMessage
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		s.messages = append(s.messages, facts.Message{Role: facts.RoleUser, Text: p.Text, Seq: f.Seq})
		s.userAfterTurn = true
	case facts.KindModelTurn:
		var p facts.ModelTurn
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		s.stepTurn(f.Seq, p)
	case facts.KindConfirmationRequested:
		var p facts.ConfirmationRequested
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if c := s.byRef[p.CallID]; c != nil {
			c.asked = &p
			s.byRequest[p.RequestID] = c
		}
	case facts.KindConfirmationAnswered:
		var p facts.ConfirmationAnswered
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if c := s.byRequest[p.RequestID]; c != nil && c.answer == nil {
			c.answer = &p
			if !p.Approved {
				text := "A person denied this tool call; it did not run."
				if p.Reason != "" {
					text += " Reason: " + p.Reason
				}
				s.messages = append(s.messages, facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Text: text, Seq: f.Seq})
			}
		}
	case facts.KindActionRequested:
		var p facts.ActionRequested
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if c := s.byRef[refOf(p.ActionID)]; c != nil {
			c.attempts = append(c.attempts, &attempt{id: p.ActionID, requested: &p})
			s.byAction[p.ActionID] = c
			if len(c.attempts) == 1 {
				c.policy = Policy{Confirm: p.Confirm, Capability: action.Capability(p.Capability)}
			}
		}
	case facts.KindActionStarted:
		var p facts.ActionStarted
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if _, a := s.attemptOf(p.ActionID); a != nil {
			a.started = &p
		}
	case facts.KindActionCompleted:
		var p facts.ActionCompleted
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if c, a := s.attemptOf(p.ActionID); a != nil && a.completed == nil {
			a.completed, a.doneSeq = &p, f.Seq
			if k := a.requested.IdempotencyKey; k != "" && s.done[k] == nil && !c.denied() {
				s.done[k] = a
			}
			if !a.open() && !c.denied() {
				s.messages = append(s.messages, facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Text: ToolResult(p, nil), Seq: f.Seq})
			}
		}
	case facts.KindCheckRecorded:
		var p facts.CheckRecorded
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if _, a := s.attemptOf(p.ActionID); a != nil {
			a.check = &p
			// The check comes with its completion: show the model both.
			for i := len(s.messages) - 1; i >= 0; i-- {
				if m := &s.messages[i]; m.Role == facts.RoleTool && a.completed != nil && m.Seq == a.doneSeq {
					m.Text = ToolResult(*a.completed, &p)
					break
				}
			}
		}
	case facts.KindActionInterrupted:
		var p facts.ActionInterrupted
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if _, a := s.attemptOf(p.ActionID); a != nil {
			a.interrupted = &p
		}
	case facts.KindEffectReconciled:
		var p facts.EffectReconciled
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if c, a := s.attemptOf(p.ActionID); a != nil && a.open() {
			a.reconciled = &p
			if p.Decision != facts.DecisionRetry {
				s.messages = append(s.messages, facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Text: reconciledResult(a, p), Seq: f.Seq})
			}
		}
	case facts.KindQuestionAsked:
		var p facts.QuestionAsked
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if s.question != nil && s.question.asked == nil {
			s.question.asked = &p
		}
	case facts.KindQuestionAnswered:
		var p facts.QuestionAnswered
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if q := s.question; q != nil && q.asked != nil && q.asked.RequestID == p.RequestID && q.answer == nil {
			q.answer = &p
			s.messages = append(s.messages, facts.Message{Role: facts.RoleUser, Text: p.Text, Seq: f.Seq})
		}
	case facts.KindContextCompacted:
		var p facts.ContextCompacted
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		s.compact(p)
	case facts.KindBudgetExhausted:
		var p facts.BudgetExhausted
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		s.exhausted = &p
	case facts.KindTransitionFailed:
		var p facts.TransitionFailed
		if err := decodeInto(f, &p); err != nil {
			return err
		}
		if owns(p.Key) {
			s.failure = fmt.Sprintf("%s failed (%s): %s", p.Key, p.Class, p.Message)
			s.retry = ""
			if !p.Defect && strings.HasPrefix(p.Key, "infer/turn/") {
				// A model turn changes nothing in the world, so whatever
				// its failure (a key, a quota, a service down), a person
				// may fix the cause and resume to try it again.
				s.retry = p.Key
			}
		}
	}
	return nil
}

func decodeInto[T any](f facts.Fact, dst *T) error {
	v, err := facts.Decode[T](f)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// transitionKinds are the kinds this scheduler's transitions append; a
// fact of one of them is this scheduler's only when its cause is one of
// its keys.
var transitionKinds = map[facts.Kind]bool{
	facts.KindModelTurn: true, facts.KindConfirmationRequested: true, facts.KindQuestionAsked: true,
	facts.KindActionRequested: true, facts.KindActionStarted: true, facts.KindActionCompleted: true,
	facts.KindActionInterrupted: true, facts.KindCheckRecorded: true, facts.KindBudgetExhausted: true,
	facts.KindTransitionFailed: true,
}

func (s *state[S]) scope() string {
	if s.env.Scope == "" {
		return ""
	}
	return s.env.Scope + "-"
}

// refOf is the call ref of an action id: the id without its attempt.
func refOf(actionID string) string {
	ref, _, _ := strings.Cut(actionID, ".")
	return ref
}

// owns reports whether key is one of this component's transitions.
func owns(key string) bool {
	return slices.ContainsFunc(ownPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

func (s *state[S]) stepTurn(seq uint64, p facts.ModelTurn) {
	s.failure, s.retry = "", ""
	s.turns = p.Turn
	s.userAfterTurn = false
	s.calls = nil
	s.question = nil
	text := p.Text
	if p.Question != nil {
		if text != "" {
			text += "\n\n"
		}
		text += p.Question.Text
	}
	s.messages = append(s.messages, facts.Message{Role: facts.RoleAssistant, Text: text, ToolCalls: p.ToolCalls, Seq: seq})
	for _, tc := range p.ToolCalls {
		// The call's policy is not decided here, from today's
		// configuration, but when it is requested, and read back from
		// action.requested: a fold reads only the log.
		c := &call{ref: s.scope() + strconv.Itoa(p.Turn) + "-" + tc.ID, call: tc}
		s.calls = append(s.calls, c)
		s.byRef[c.ref] = c
	}
	if p.Question != nil {
		s.question = &question{turn: p.Turn, q: *p.Question}
	}
}

// compact replaces the messages a summary covers with the summary.
func (s *state[S]) compact(p facts.ContextCompacted) {
	kept := []facts.Message{{Role: facts.RoleUser, Text: "Summary of the conversation so far:\n" + p.Summary, Seq: p.UpTo}}
	for _, m := range s.messages {
		if m.Seq > p.UpTo {
			kept = append(kept, m)
		}
	}
	s.messages = kept
}

// conversation returns the conversation the whole log gives.
func (s *state[S]) conversation() []facts.Message {
	if s.whole != nil {
		return s.whole().conversation()
	}
	return slices.Clone(s.messages)
}

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
	case s.exhausted != nil:
		v.Phase = PhaseFailed
		v.Failure = fmt.Sprintf("%s budget exhausted: %d used of %d", s.exhausted.Resource, s.exhausted.Used, s.exhausted.Limit)
		out.Stop = &fold.Stop{Status: fold.StatusStopped, Reason: v.Failure}
	case len(s.calls) > 0:
		s.outputCalls(&v, &out)
	case s.question != nil:
		s.outputQuestion(&v, &out)
	case s.userAfterTurn:
		v.Phase = PhaseInfer
		out.Transitions = append(out.Transitions, s.infer())
	default:
		v.Phase = PhaseDone
	}
	out.View = v
	out.Waits = v.Waits
	return out
}

func (s *state[S]) outputCalls(v *View, out *fold.Output[S]) {
	ran := false
	reconcile := false
	// The calls of a turn take effect in the order the model wrote them: a
	// call runs only when every call before it is settled. Requests,
	// confirmations and the recovery of an action in doubt are records,
	// not effects, and are made for all calls at once.
	earlierOpen := false
	for _, c := range s.calls {
		a := c.last()
		switch {
		case a == nil:
			out.Transitions = append(out.Transitions, s.request(c, c.ref))
		case c.needsConfirmation() && c.asked == nil:
			out.Transitions = append(out.Transitions, s.confirm(c))
		case c.needsConfirmation() && c.answer == nil:
			v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitConfirmation, RequestID: c.asked.RequestID,
				Summary: fmt.Sprintf("run %s %s", c.asked.Tool, c.asked.Args)})
		case c.denied() && a.completed == nil:
			out.Transitions = append(out.Transitions, s.refuse(c, a))
		case c.denied():
		case a.reconciled != nil && a.reconciled.Decision == facts.DecisionRetry:
			out.Transitions = append(out.Transitions, s.request(c, c.ref+"."+strconv.Itoa(len(c.attempts)+1)))
		case a.completed == nil && a.started == nil && earlierOpen:
			// Approved, and waiting its turn.
		case a.completed == nil && a.started == nil:
			out.Transitions = append(out.Transitions, s.execute(c, a))
		case a.completed == nil && a.interrupted == nil:
			// Started, never completed, and no runtime holds it: the
			// process died while the adapter ran. Never run it again
			// blindly: look, record, and ask a person.
			out.Transitions = append(out.Transitions, s.recover(a))
		case a.open():
			reconcile = true
			v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitReconcile, RequestID: a.id, Summary: openSummary(c, a)})
		default:
			ran = true
		}
		earlierOpen = earlierOpen || !c.settled()
	}
	switch {
	case len(out.Transitions) > 0:
		v.Phase = PhaseTool
	case reconcile:
		v.Phase = PhaseReconcile
	case len(v.Waits) > 0:
		v.Phase = PhaseConfirm
	case ran || s.userAfterTurn:
		// Every call is settled and at least one ran: the model sees the
		// results (and the denials) in its next turn.
		v.Phase = PhaseInfer
		out.Transitions = append(out.Transitions, s.infer())
	default:
		// Every call was denied: the turn is complete without a tool.
		v.Phase = PhaseDone
	}
}

func openSummary(c *call, a *attempt) string {
	if a.interrupted != nil {
		return fmt.Sprintf("%s %s was in progress when the process died: did it happen?", c.call.Name, a.id)
	}
	return fmt.Sprintf("%s %s reported success but nothing observed changed: accept, retry or abandon?", c.call.Name, a.id)
}

func (s *state[S]) outputQuestion(v *View, out *fold.Output[S]) {
	q := s.question
	switch {
	case q.asked == nil:
		v.Phase = PhaseQuestion
		out.Transitions = append(out.Transitions, s.ask(q))
	case q.answer == nil:
		v.Phase = PhaseQuestion
		v.AllowFreeText, v.Options = q.asked.AllowFreeText, q.asked.Options
		v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitQuestion, RequestID: q.asked.RequestID, Summary: q.asked.Text})
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
	req := Request{Thread: s.thread, Turn: turn, System: s.system, Messages: s.conversation()}
	return fold.Transition[S]{Key: key, Effect: effect.AndThen(s.env.Infer(req), func(mt facts.ModelTurn) effect.Effect[S, []facts.Draft] {
		mt.Turn = turn
		mt.ToolCalls = uniqueIDs(mt.ToolCalls)
		if mt.Question != nil && mt.Question.ID == "" {
			q := *mt.Question
			q.ID = "q-" + strconv.Itoa(turn)
			mt.Question = &q
		}
		return drafts[S](facts.KindModelTurn, mt)
	})}
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
	tc := c.call
	if c.asked != nil {
		// The approved call is the one in the confirmation request: the
		// tool runs with exactly the arguments a person saw.
		tc.Name, tc.Args = c.asked.Tool, c.asked.Args
	}
	// The policy is decided now and recorded: a capability not granted is
	// never put to a person (the boundary denies it), and a call already
	// confirmed is not asked again on a retry.
	policy := Policy{Confirm: true, Capability: action.Execute}
	if s.env.Policy != nil {
		policy = s.env.Policy(tc)
	}
	if s.env.Granted != nil && !s.env.Granted(policy.Capability) {
		policy.Confirm = false
	}
	if len(c.attempts) > 0 {
		policy = c.policy
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
	declare := effect.Succeed[S]((*facts.CheckSpec)(nil))
	if s.env.Declare != nil && req.Payload != nil {
		declare = s.env.Declare(tc)
	}
	return fold.Transition[S]{Key: requestKey(id), Effect: effect.AndThen(declare, func(check *facts.CheckSpec) effect.Effect[S, []facts.Draft] {
		req.Check = check
		f := req.Fact()
		f.Confirm = policy.Confirm
		return drafts[S](facts.KindActionRequested, f)
	})}
}

func (s *state[S]) confirm(c *call) fold.Transition[S] {
	return fold.Transition[S]{Key: confirmKey(c.ref), Effect: drafts[S](facts.KindConfirmationRequested, facts.ConfirmationRequested{
		RequestID: c.ref,
		CallID:    c.ref,
		Tool:      c.call.Name,
		Args:      c.call.Args,
		Digest:    Digest(c.call.Name, c.call.Args),
	})}
}

// execute carries out an attempt: through the boundary, or — when its
// idempotency key was completed before — by returning that completion.
func (s *state[S]) execute(c *call, a *attempt) fold.Transition[S] {
	req := action.FromFact(*a.requested)
	done := s.done
	if s.whole != nil {
		done = s.whole().done
	}
	if prior := done[req.IdempotencyKey]; prior != nil && prior.id != a.id {
		return fold.Transition[S]{Key: executeKey(a.id), Effect: drafts[S](facts.KindActionCompleted, action.Replay(req, *prior.completed))}
	}
	if req.Payload == nil {
		// The model's arguments are not JSON: nothing can run. The model
		// is shown why.
		return fold.Transition[S]{Key: executeKey(a.id), Effect: drafts[S](facts.KindActionCompleted, facts.ActionCompleted{
			ActionID: a.id, EffectState: facts.EffectReported,
			Report: facts.Report{Status: facts.StatusFailed, Error: fmt.Sprintf("the arguments of %s are not valid JSON: %q", c.call.Name, c.call.Args)},
		})}
	}
	id := a.id
	return fold.Transition[S]{Key: executeKey(id), ClaimKey: startKey(id), Staged: func(j fold.Journal) effect.Effect[S, []facts.Draft] {
		return s.env.Act(req, j)
	}}
}

// refuse completes the request of a call a person denied.
func (s *state[S]) refuse(c *call, a *attempt) fold.Transition[S] {
	why := "a person denied the call"
	if c.answer.By != "" {
		why = c.answer.By + " denied the call"
	}
	if c.answer.Reason != "" {
		why += ": " + c.answer.Reason
	}
	return fold.Transition[S]{Key: executeKey(a.id), Effect: effect.AndThen(s.env.Refuse(action.FromFact(*a.requested), why),
		func(done facts.ActionCompleted) effect.Effect[S, []facts.Draft] {
			return drafts[S](facts.KindActionCompleted, done)
		})}
}

func (s *state[S]) recover(a *attempt) fold.Transition[S] {
	return fold.Transition[S]{Key: recoverKey(a.id), Effect: effect.AndThen(s.env.Recover(*a.started),
		func(rec facts.ActionInterrupted) effect.Effect[S, []facts.Draft] {
			return drafts[S](facts.KindActionInterrupted, rec)
		})}
}

func (s *state[S]) ask(q *question) fold.Transition[S] {
	return fold.Transition[S]{Key: askKey(q.turn), Effect: drafts[S](facts.KindQuestionAsked, facts.QuestionAsked{
		RequestID:     s.scope() + "q-" + strconv.Itoa(q.turn),
		Text:          q.q.Text,
		Options:       q.q.Options,
		AllowFreeText: q.q.AllowFreeText,
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

// notAddressed marks an answer to a request this scheduler never made: a
// scheduler nested beside it may have made it. It prints as nothing.
var notAddressed = silent{fold.ErrNotAddressed}

type silent struct{ error }

func (silent) Error() string   { return "" }
func (s silent) Unwrap() error { return s.error }

// accept checks an answer against the open requests.
func (s *state[S]) accept(d facts.Draft) error {
	f := facts.Fact{Kind: d.Kind, Data: d.Data}
	switch d.Kind {
	case facts.KindConfirmationAnswered:
		p, err := facts.Decode[facts.ConfirmationAnswered](f)
		if err != nil {
			return err
		}
		c := s.byRequest[p.RequestID]
		switch {
		case c == nil:
			return fmt.Errorf("confirmation %q: %w%w", p.RequestID, ErrUnknownRequest, notAddressed)
		case c.answer != nil:
			return fmt.Errorf("confirmation %q: %w", p.RequestID, ErrAnswered)
		case p.Digest != "" && c.asked != nil && p.Digest != c.asked.Digest:
			return fmt.Errorf("confirmation %q: digest %s, request has %s: %w", p.RequestID, p.Digest, c.asked.Digest, ErrDigest)
		}
	case facts.KindQuestionAnswered:
		p, err := facts.Decode[facts.QuestionAnswered](f)
		if err != nil {
			return err
		}
		q := s.question
		switch {
		case q == nil || q.asked == nil || q.asked.RequestID != p.RequestID:
			if s.answeredQuestion(p.RequestID) {
				return fmt.Errorf("question %q: %w", p.RequestID, ErrAnswered)
			}
			return fmt.Errorf("question %q: %w%w", p.RequestID, ErrUnknownRequest, notAddressed)
		case q.answer != nil:
			return fmt.Errorf("question %q: %w", p.RequestID, ErrAnswered)
		case !q.asked.AllowFreeText && len(q.asked.Options) > 0 && !slices.Contains(q.asked.Options, p.Text):
			return fmt.Errorf("question %q: %q (options: %q): %w", p.RequestID, p.Text, q.asked.Options, ErrNotAnOption)
		}
	case facts.KindEffectReconciled:
		p, err := facts.Decode[facts.EffectReconciled](f)
		if err != nil {
			return err
		}
		_, a := s.attemptOf(p.ActionID)
		switch {
		case a == nil:
			return fmt.Errorf("effect %q: %w%w", p.ActionID, ErrUnknownRequest, notAddressed)
		case a.reconciled != nil:
			return fmt.Errorf("effect %q: %w", p.ActionID, ErrAnswered)
		case !a.open():
			return fmt.Errorf("effect %q is not open (its effect state is %s): %w", p.ActionID, effectState(a), ErrUnknownRequest)
		}
	}
	return nil
}

func effectState(a *attempt) string {
	if a.completed != nil {
		return string(a.completed.EffectState)
	}
	return "not completed"
}

// answeredQuestion reports whether id names a question of an earlier turn.
func (s *state[S]) answeredQuestion(id string) bool {
	n, ok := strings.CutPrefix(id, s.scope()+"q-")
	if !ok {
		return false
	}
	turn, err := strconv.Atoi(n)
	return err == nil && turn >= 1 && turn <= s.turns && (s.question == nil || s.question.turn != turn)
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

func reconciledResult(a *attempt, p facts.EffectReconciled) string {
	what := "reported success but the runtime observed no change"
	if a.interrupted != nil {
		what = "was interrupted when the process died"
	}
	text := fmt.Sprintf("The action %s; a person (%s) decided: %s.", what, p.By, p.Decision)
	if p.Note != "" {
		text += " Note: " + p.Note
	}
	return text
}
