package scheduler

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	// PhaseTool: an approved tool call is to be recorded or run.
	PhaseTool Phase = "tool"
	// PhaseDone: the turn is complete; nothing is enabled or awaited.
	PhaseDone Phase = "done"
	// PhaseFailed: a step failed for good, or a budget ran out.
	PhaseFailed Phase = "failed"
)

// Request is what a model turn is given: the turn number, the system
// configuration and the conversation derived from the log.
type Request struct {
	Turn     int
	System   facts.SystemConfigured
	Messages []facts.Message
}

// Policy is what the scheduler needs to know of a tool before running it.
type Policy struct {
	// Confirm is true when a person must approve the call first.
	Confirm bool
	// Capability is what running the tool needs: "read", "write" or
	// "execute".
	Capability string
}

// Env supplies the effects the scheduler enables. S is the services the
// effects need.
type Env[S any] struct {
	// Infer describes one model turn.
	Infer func(Request) effect.Effect[S, facts.ModelTurn]
	// Execute describes running one approved tool call; the report is the
	// tool's own account. A Fail of the effect is recorded as a failed
	// report; a Die stops the thread.
	Execute func(call facts.ToolCall) effect.Effect[S, facts.Report]
	// Policy says whether a call needs confirmation and what it needs.
	Policy func(call facts.ToolCall) Policy
	// Budget, when set, is asked before each model turn; a non-nil answer
	// stops the thread with that budget.exhausted fact instead of the turn.
	Budget func() *facts.BudgetExhausted
	// Actor names the actor in action requests.
	Actor string
}

// Keys of the transitions this component enables; ref is "<turn>-<call id>".
func inferKey(turn int) string     { return "infer/turn/" + strconv.Itoa(turn) }
func confirmKey(ref string) string { return "confirm/" + ref }
func requestKey(ref string) string { return "tool/request/" + ref }
func executeKey(ref string) string { return "tool/execute/" + ref }
func askKey(turn int) string       { return "question/ask/" + strconv.Itoa(turn) }

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

// call is the fold of one tool call of a model turn.
type call struct {
	ref       string // "<turn>-<id>", unique in the thread
	call      facts.ToolCall
	policy    Policy
	asked     *facts.ConfirmationRequested
	answer    *facts.ConfirmationAnswered
	requested bool
	completed *facts.ActionCompleted
}

func (c *call) approved() bool { return !c.policy.Confirm || (c.answer != nil && c.answer.Approved) }
func (c *call) denied() bool   { return c.policy.Confirm && c.answer != nil && !c.answer.Approved }
func (c *call) settled() bool  { return c.denied() || c.completed != nil }

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
	// Waits are the open requests when the phase is confirm or question.
	Waits []fold.Wait
	// AllowFreeText is the open question's, when the phase is question.
	AllowFreeText bool
	// Options are the open question's options.
	Options []string
	// Failure says why, when the phase is failed.
	Failure string
}

// Scheduler is the coding scheduler component. Make one per fold with New.
type Scheduler[S any] struct {
	env Env[S]

	system    facts.SystemConfigured
	messages  []facts.Message
	turns     int
	calls     []*call // of the latest model turn
	byRef     map[string]*call
	byRequest map[string]*call // confirmation request id → call
	question  *question
	// userAfterTurn is true when a user message came after the latest
	// model turn (or before the first): a model turn is due.
	userAfterTurn bool
	failure       string
	exhausted     *facts.BudgetExhausted
}

// New returns a scheduler with the environment env.
func New[S any](env Env[S]) *Scheduler[S] {
	return &Scheduler[S]{env: env, byRef: map[string]*call{}, byRequest: map[string]*call{}}
}

// Name is "scheduler".
func (s *Scheduler[S]) Name() string { return "scheduler" }

// Step folds one fact.
func (s *Scheduler[S]) Step(f facts.Fact) error {
	switch f.Kind {
	case facts.KindSystemConfigured:
		p, err := facts.Decode[facts.SystemConfigured](f)
		if err != nil {
			return err
		}
		s.system = p
	case facts.KindUserMessage:
		p, err := facts.Decode[facts.UserMessage](f)
		if err != nil {
			return err
		}
		s.messages = append(s.messages, facts.Message{Role: facts.RoleUser, Text: p.Text, Seq: f.Seq})
		s.userAfterTurn = true
	case facts.KindModelTurn:
		p, err := facts.Decode[facts.ModelTurn](f)
		if err != nil {
			return err
		}
		s.stepTurn(f.Seq, p)
	case facts.KindConfirmationRequested:
		p, err := facts.Decode[facts.ConfirmationRequested](f)
		if err != nil {
			return err
		}
		if c := s.byRef[p.CallID]; c != nil {
			c.asked = &p
			s.byRequest[p.RequestID] = c
		}
	case facts.KindConfirmationAnswered:
		p, err := facts.Decode[facts.ConfirmationAnswered](f)
		if err != nil {
			return err
		}
		if c := s.byRequest[p.RequestID]; c != nil && c.answer == nil {
			c.answer = &p
			if !p.Approved {
				text := "The person denied this tool call."
				if p.Reason != "" {
					text += " Reason: " + p.Reason
				}
				s.messages = append(s.messages, facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Text: text, Seq: f.Seq})
			}
		}
	case facts.KindActionRequested:
		p, err := facts.Decode[facts.ActionRequested](f)
		if err != nil {
			return err
		}
		if c := s.byRef[p.ActionID]; c != nil {
			c.requested = true
		}
	case facts.KindActionCompleted:
		p, err := facts.Decode[facts.ActionCompleted](f)
		if err != nil {
			return err
		}
		if c := s.byRef[p.ActionID]; c != nil && c.completed == nil {
			c.completed = &p
			s.messages = append(s.messages, facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Text: ToolResult(p), Seq: f.Seq})
		}
	case facts.KindQuestionAsked:
		p, err := facts.Decode[facts.QuestionAsked](f)
		if err != nil {
			return err
		}
		if s.question != nil && s.question.asked == nil {
			s.question.asked = &p
		}
	case facts.KindQuestionAnswered:
		p, err := facts.Decode[facts.QuestionAnswered](f)
		if err != nil {
			return err
		}
		if q := s.question; q != nil && q.asked != nil && q.asked.RequestID == p.RequestID && q.answer == nil {
			q.answer = &p
			s.messages = append(s.messages, facts.Message{Role: facts.RoleUser, Text: p.Text, Seq: f.Seq})
		}
	case facts.KindContextCompacted:
		p, err := facts.Decode[facts.ContextCompacted](f)
		if err != nil {
			return err
		}
		s.compact(p)
	case facts.KindBudgetExhausted:
		p, err := facts.Decode[facts.BudgetExhausted](f)
		if err != nil {
			return err
		}
		s.exhausted = &p
	case facts.KindTransitionFailed:
		p, err := facts.Decode[facts.TransitionFailed](f)
		if err != nil {
			return err
		}
		if s.owns(p.Key) {
			s.failure = fmt.Sprintf("%s failed (%s): %s", p.Key, p.Class, p.Message)
		}
	}
	return nil
}

// owns reports whether key is one of this component's transitions.
func (s *Scheduler[S]) owns(key string) bool {
	for _, prefix := range []string{"infer/turn/", "confirm/", "tool/request/", "tool/execute/", "question/ask/"} {
		if len(key) > len(prefix) && key[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

func (s *Scheduler[S]) stepTurn(seq uint64, p facts.ModelTurn) {
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
		c := &call{ref: strconv.Itoa(p.Turn) + "-" + tc.ID, call: tc}
		if s.env.Policy != nil {
			c.policy = s.env.Policy(tc)
		} else {
			c.policy = Policy{Confirm: true}
		}
		s.calls = append(s.calls, c)
		s.byRef[c.ref] = c
	}
	if p.Question != nil {
		s.question = &question{turn: p.Turn, q: *p.Question}
	}
}

// compact replaces the messages a summary covers with the summary.
func (s *Scheduler[S]) compact(p facts.ContextCompacted) {
	kept := []facts.Message{{Role: facts.RoleUser, Text: "Summary of the conversation so far:\n" + p.Summary, Seq: p.UpTo}}
	for _, m := range s.messages {
		if m.Seq > p.UpTo {
			kept = append(kept, m)
		}
	}
	s.messages = kept
}

// Messages returns the conversation the next model turn would see.
func (s *Scheduler[S]) Messages() []facts.Message { return slices.Clone(s.messages) }

// Output reports the phase and the transitions it enables.
func (s *Scheduler[S]) Output() fold.Output[S] {
	var out fold.Output[S]
	v := View{Turns: s.turns}
	switch {
	case s.failure != "":
		v.Phase, v.Failure = PhaseFailed, s.failure
		out.Stop = &fold.Stop{Status: fold.StatusFailed, Reason: s.failure}
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

func (s *Scheduler[S]) outputCalls(v *View, out *fold.Output[S]) {
	ran := false
	for _, c := range s.calls {
		switch {
		case c.policy.Confirm && c.asked == nil:
			out.Transitions = append(out.Transitions, s.confirm(c))
		case c.policy.Confirm && c.answer == nil:
			v.Waits = append(v.Waits, fold.Wait{Kind: fold.WaitConfirmation, RequestID: c.asked.RequestID,
				Summary: fmt.Sprintf("run %s %s", c.call.Name, c.asked.Args)})
		case c.denied():
		case !c.requested:
			out.Transitions = append(out.Transitions, s.request(c))
		case c.completed == nil:
			out.Transitions = append(out.Transitions, s.execute(c))
		default:
			ran = true
		}
	}
	switch {
	case len(out.Transitions) > 0:
		v.Phase = PhaseTool
		if slices.ContainsFunc(s.calls, func(c *call) bool { return c.policy.Confirm && c.asked == nil }) {
			v.Phase = PhaseConfirm
		}
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

func (s *Scheduler[S]) outputQuestion(v *View, out *fold.Output[S]) {
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
func (s *Scheduler[S]) infer() fold.Transition[S] {
	turn := s.turns + 1
	key := inferKey(turn)
	if s.env.Budget != nil {
		if spent := s.env.Budget(); spent != nil {
			return fold.Transition[S]{Key: key, Effect: drafts[S](facts.KindBudgetExhausted, *spent)}
		}
	}
	req := Request{Turn: turn, System: s.system, Messages: s.Messages()}
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

// uniqueIDs gives every call of a turn an id, unique within the turn: a
// model may omit ids or repeat them, and answers must name one call.
func uniqueIDs(calls []facts.ToolCall) []facts.ToolCall {
	seen := map[string]bool{}
	out := slices.Clone(calls)
	for i := range out {
		id := out[i].ID
		if id == "" || seen[id] {
			id = "call-" + strconv.Itoa(i+1)
			for seen[id] {
				id += "'"
			}
			out[i].ID = id
		}
		seen[id] = true
	}
	return out
}

func (s *Scheduler[S]) confirm(c *call) fold.Transition[S] {
	return fold.Transition[S]{Key: confirmKey(c.ref), Effect: drafts[S](facts.KindConfirmationRequested, facts.ConfirmationRequested{
		RequestID: c.ref,
		CallID:    c.ref,
		Tool:      c.call.Name,
		Args:      c.call.Args,
		Digest:    Digest(c.call.Name, c.call.Args),
	})}
}

func (s *Scheduler[S]) request(c *call) fold.Transition[S] {
	return fold.Transition[S]{Key: requestKey(c.ref), Effect: drafts[S](facts.KindActionRequested, facts.ActionRequested{
		ActionID:       c.ref,
		CallID:         c.call.ID,
		Capability:     c.policy.Capability,
		Instruction:    c.call.Args,
		IdempotencyKey: executeKey(c.ref),
		RequestedBy:    s.requester(c),
		ActorID:        s.env.Actor,
		Adapter:        c.call.Name,
	})}
}

// requester is who asked for the action: the person who approved it, or
// the actor when no approval was needed. An attribution, not a proof.
func (s *Scheduler[S]) requester(c *call) string {
	if c.answer != nil && c.answer.By != "" {
		return c.answer.By
	}
	return s.env.Actor
}

func (s *Scheduler[S]) execute(c *call) fold.Transition[S] {
	// The approved call is the one in the confirmation request: the tool
	// runs with exactly the arguments a person saw.
	run := c.call
	if c.asked != nil {
		run.Name, run.Args = c.asked.Tool, c.asked.Args
	}
	report := effect.CatchFail(s.env.Execute(run), func(err error) effect.Effect[S, facts.Report] {
		return effect.Succeed[S](facts.Report{Status: facts.StatusFailed, Error: err.Error()})
	})
	ref := c.ref
	return fold.Transition[S]{Key: executeKey(ref), Effect: effect.AndThen(report, func(r facts.Report) effect.Effect[S, []facts.Draft] {
		return drafts[S](facts.KindActionCompleted, facts.ActionCompleted{
			ActionID: ref,
			Report:   r,
			// No observer looked: the effect rests on the report alone.
			EffectState: facts.EffectReported,
		})
	})}
}

func (s *Scheduler[S]) ask(q *question) fold.Transition[S] {
	return fold.Transition[S]{Key: askKey(q.turn), Effect: drafts[S](facts.KindQuestionAsked, facts.QuestionAsked{
		RequestID:     "q-" + strconv.Itoa(q.turn),
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

// Accept checks an answer against the open requests.
func (s *Scheduler[S]) Accept(d facts.Draft) error {
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
			return fmt.Errorf("confirmation %q: %w", p.RequestID, ErrUnknownRequest)
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
			return fmt.Errorf("question %q: %w", p.RequestID, ErrUnknownRequest)
		case q.answer != nil:
			return fmt.Errorf("question %q: %w", p.RequestID, ErrAnswered)
		case !q.asked.AllowFreeText && len(q.asked.Options) > 0 && !slices.Contains(q.asked.Options, p.Text):
			return fmt.Errorf("question %q: %q (options: %q): %w", p.RequestID, p.Text, q.asked.Options, ErrNotAnOption)
		}
	}
	return nil
}

// answeredQuestion reports whether id names a question of an earlier turn.
func (s *Scheduler[S]) answeredQuestion(id string) bool {
	n, ok := strings.CutPrefix(id, "q-")
	if !ok {
		return false
	}
	turn, err := strconv.Atoi(n)
	return err == nil && turn >= 1 && turn < s.turns+1 && (s.question == nil || s.question.turn != turn)
}

// ToolResult is the text a model is shown for a tool's completion.
func ToolResult(p facts.ActionCompleted) string {
	r := p.Report
	text := string(r.Status)
	if r.Error != "" {
		text += ": " + r.Error
	}
	for _, part := range []string{r.Transcript, r.Stdout} {
		if part != "" {
			text += "\n" + part
		}
	}
	if r.Stderr != "" {
		text += "\nstderr:\n" + r.Stderr
	}
	if r.ExitCode != 0 {
		text += fmt.Sprintf("\nexit code %d", r.ExitCode)
	}
	return text
}
