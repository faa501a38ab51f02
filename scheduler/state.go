package scheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// call is the fold of one tool call of a model turn.
type call struct {
	ref      string // "<turn>-<id>", unique in the thread
	turn     int
	turnSeq  uint64
	call     facts.ToolCall
	policy   Policy // as recorded on the first action.requested
	asked    *facts.ConfirmationRequested
	answer   *facts.ConfirmationAnswered
	askedSeq uint64
	answerAt uint64
	attempts []*Action
	child    *Child          // a delegation's child, once spawned (see delegate.go)
	hooks    []facts.HookRan // the before_tool hooks' runs (see hook.go)
	canon    *string         // the arguments as the loop guard compares them, worked out when folded (canonical)
	served   *facts.Served   // in a rerun, the recorded result the call is served (see rerun.go)
	// offer, when set, is the worktree.finished whose offered merge the
	// call is: no model made it (see offer.go).
	offer *facts.WorktreeResult
}

// canonical is c's arguments as the loop guard compares them
// (canonicalArgs): worked out when the call was folded with a guard on,
// else now (nothing is written: projections share calls).
func (c *call) canonical() string {
	if c.canon != nil {
		return *c.canon
	}
	return canonicalArgs(c.call.Args)
}

func (c *call) last() *Action {
	if len(c.attempts) == 0 {
		return nil
	}
	return c.attempts[len(c.attempts)-1]
}

func (c *call) needsConfirmation() bool { return c.policy.Confirm || c.hookAsked() }

// hookAsked reports whether a before_tool hook asked for a person's
// confirmation of the call.
func (c *call) hookAsked() bool {
	return slices.ContainsFunc(c.hooks, func(r facts.HookRan) bool { return r.Decision == facts.HookAsk })
}

// hookDenied reports whether a before_tool hook denied the call (or
// failed, which denies it).
func (c *call) hookDenied() bool {
	return slices.ContainsFunc(c.hooks, func(r facts.HookRan) bool {
		return r.Decision == facts.HookDeny || r.Decision == facts.HookFailed
	})
}
func (c *call) denied() bool { return c.needsConfirmation() && c.answer != nil && !c.answer.Approved }

// settled reports whether nothing more happens to the call.
func (c *call) settled() bool {
	if c.child != nil {
		return c.child.settled()
	}
	if c.denied() {
		return true
	}
	a := c.last()
	if a == nil {
		return false
	}
	if a.Reconciled != nil {
		return a.Reconciled.Decision != facts.DecisionRetry
	}
	return a.Ended() && !a.Open()
}

// reading returns the call as a Call, its actions copied.
func (c *call) reading() Call {
	out := Call{Ref: c.ref, Turn: c.turn, TurnSeq: c.turnSeq, Call: c.call, Policy: c.policy,
		Confirmation: c.asked, Answer: c.answer, ConfirmationSeq: c.askedSeq, AnswerSeq: c.answerAt, Hooks: c.hooks, Offer: c.offer}
	out.Actions = make([]Action, len(c.attempts))
	for i, a := range c.attempts {
		out.Actions[i] = *a
	}
	if c.child != nil {
		ch := *c.child
		out.Child = &ch
	}
	return out
}

// state is the scheduler's fold of a stretch of the log: the whole log
// (the full state, for the conversation, for answers and for readers), or
// the latest model turn on (the current state, for what is enabled now).
type state[S any] struct {
	env Env[S]
	// sawTurn is set once an own model turn is folded; compactedSince
	// when a compaction came after the latest one: a turn refused as too
	// long for the model's context then stays due once (see
	// transitionFailed).
	sawTurn, compactedSince bool
	// whole, when set, answers what only the whole log knows: the
	// conversation, and which idempotency keys were completed.
	whole func() *state[S]
	// talk and prior, when set, answer those two in place of whole: a
	// scheduler restored from a snapshot finds them without folding the
	// whole log (see snapshot.go).
	talk  func() []msg
	prior func(key, id string) *Action
	// missed is set when a fact named a call, request or action this
	// state does not know: a fold of a stretch of the log, rather than the
	// whole, may then read it otherwise than the whole fold does.
	missed bool

	thread    string
	system    facts.SystemConfigured
	hasSystem bool
	// messages are the conversation so far, as the fold keeps it (see
	// msg). lend lends them out without a copy, capped at their length
	// (an append by either side does not reach the other):
	// messages[:lent] were lent, and one of them is changed in place (see
	// checkRecorded) only after a copy, so what was lent never changes.
	messages  []msg
	lent      int
	turns     int
	calls     []*call // of the latest model turn
	all       []*call // of every turn, in order
	byRef     map[string]*call
	byRequest map[string]*call   // confirmation request id → call
	byAction  map[string]*call   // action id → call
	byChild   map[string]*call   // child thread id → call
	done      map[string]*Action // idempotency key → attempt that completed it
	question  *Question          // of the latest model turn
	questions []*Question
	// elicits are the questions MCP servers asked during actions, in
	// order; byElicit by request id (see elicit.go).
	elicits  []*Elicitation
	byElicit map[string]*Elicitation
	restored []Restored
	// userAfterTurn is true when a user message came after the latest
	// model turn (or before the first): a model turn is due.
	userAfterTurn bool
	// cutInARow counts the turns cut off at a limit one after another,
	// up to the latest, since a user message (see facts.Cut.InARow).
	cutInARow int
	// answerTurn is the latest turn when it is a final answer to check
	// against the output schema (answer its text), and checked its
	// verdict once recorded; invalidInARow counts the invalid ones one
	// after another since a user message (see facts.OutputChecked.InARow).
	answerTurn    int
	answer        string
	checked       *facts.OutputChecked
	invalidInARow int
	failure       string
	retry         string // the failed key a new resume may run again
	exhausted     *facts.BudgetExhausted
	// unchecked is the action whose completion was just recorded by its
	// boundary run with a check declared: its check.recorded must follow.
	unchecked *Action
	// lastObs is the last observation of the workspace the facts folded
	// record, whichever scheduler's (see action.ObservedIn); observed,
	// when set, answers it for the whole log in place of lastObs (a fold
	// of the latest turn on does not see the facts before it).
	lastObs  action.Observed
	observed func() (action.Observed, error)
	// changes are the workspace.changed records folded, in order;
	// unstarted is the latest, until the action it names starts or
	// completes, as it must next.
	changes   []Changed
	unstarted *facts.WorkspaceChanged
	// head is the seq of the latest fact folded; ownHooks the runs of the
	// hooks of the thread's own events (session_start, parked,
	// thread_end), in order.
	head     uint64
	ownHooks []facts.HookRan
	// halted is why a rerun stopped at a divergence (see rerun.go).
	halted string
	// offers are, in a rerun, the original's facts to offer after the
	// latest turn (its rerun.turn's Offers, with its From), and offered
	// how many of them the log holds copies of (see rerun.go).
	offers     []facts.Offer
	offersFrom string
	offeredN   int
	// lean is set on the whole log's fold of a lean scheduler: it keeps
	// no conversation, and lets go of settled calls (see lean.go).
	lean *leanFold
	// leanNow, when set, reports whether the whole log's fold is lean
	// (see lean.go).
	leanNow func() bool
}

func newState[S any](env Env[S]) *state[S] {
	return &state[S]{env: env, byRef: map[string]*call{}, byRequest: map[string]*call{},
		byAction: map[string]*call{}, byChild: map[string]*call{}, done: map[string]*Action{}, byElicit: map[string]*Elicitation{}}
}

// attemptOf returns the call and attempt of an action id.
func (s *state[S]) attemptOf(id string) (*call, *Action) {
	c := s.byAction[id]
	if c == nil {
		s.missedRef(refOf(id))
		return nil, nil
	}
	for _, a := range c.attempts {
		if a.ID == id {
			return c, a
		}
	}
	return c, nil
}

// apply folds one fact: one method per kind, each decoding its payload.
func (s *state[S]) apply(f facts.Fact) error {
	s.thread, s.head = f.Thread, f.Seq
	if transitionKinds[f.Kind] && !owns(f.Cause) {
		// Another component's: a scheduler nested beside this one (its
		// keys prefixed) keeps its own turns, calls and failures. The
		// workspace is every scheduler's, though: its last observation
		// is read from any scheduler's facts.
		if o, ok, err := action.ObservedIn(f); err != nil {
			return err
		} else if ok {
			s.lastObs = o
		}
		return nil
	}
	switch f.Kind {
	case facts.KindSystemConfigured:
		return with(f, s.systemConfigured)
	case facts.KindUserMessage:
		return with(f, s.userMessage)
	case facts.KindModelTurn:
		return with(f, s.modelTurn)
	case facts.KindConfirmationRequested:
		return with(f, s.confirmationRequested)
	case facts.KindConfirmationAnswered:
		return with(f, s.confirmationAnswered)
	case facts.KindActionRequested:
		return with(f, s.actionRequested)
	case facts.KindActionStarted:
		return with(f, s.actionStarted)
	case facts.KindActionCompleted:
		return with(f, s.actionCompleted)
	case facts.KindCheckRecorded:
		return with(f, s.checkRecorded)
	case facts.KindActionInterrupted:
		return with(f, s.actionInterrupted)
	case facts.KindEffectReconciled:
		return with(f, s.effectReconciled)
	case facts.KindQuestionAsked:
		return with(f, s.questionAsked)
	case facts.KindQuestionAnswered:
		return with(f, s.questionAnswered)
	case facts.KindContextCompacted:
		return with(f, s.contextCompacted)
	case facts.KindBudgetExhausted:
		return with(f, s.budgetExhausted)
	case facts.KindTransitionFailed:
		return with(f, s.transitionFailed)
	case facts.KindWorkspaceRestored:
		return with(f, s.workspaceRestored)
	case facts.KindChildSpawned:
		return with(f, s.childSpawned)
	case facts.KindChildReported:
		return with(f, s.childReported)
	case facts.KindWorkspaceChanged:
		return with(f, s.workspaceChanged)
	case facts.KindHookRan:
		return with(f, s.hookRan)
	case facts.KindOutputChecked:
		return with(f, s.outputChecked)
	case facts.KindRerunTurn:
		return with(f, s.rerunTurn)
	case facts.KindWorktreeFinished:
		return with(f, s.worktreeFinished)
	}
	return nil
}

// with decodes f's payload and folds it with apply.
func with[T any](f facts.Fact, apply func(facts.Fact, T)) error {
	p, err := facts.Decode[T](f)
	if err != nil {
		return err
	}
	apply(f, p)
	return nil
}

// sawWorkspace notes the reading of the workspace a payload records, if any
// (see action.ObservedIn).
func (s *state[S]) sawWorkspace(f facts.Fact, payload any) {
	if o, ok := action.Observation(f.Seq, payload); ok {
		s.lastObs = o
	}
}

// folded reports whether state.apply reads facts of kind k.
func folded(k facts.Kind) bool {
	switch k {
	case facts.KindSystemConfigured, facts.KindUserMessage, facts.KindModelTurn,
		facts.KindConfirmationRequested, facts.KindConfirmationAnswered,
		facts.KindQuestionAsked, facts.KindQuestionAnswered,
		facts.KindActionRequested, facts.KindActionStarted, facts.KindActionCompleted,
		facts.KindActionInterrupted, facts.KindCheckRecorded, facts.KindEffectReconciled,
		facts.KindContextCompacted, facts.KindBudgetExhausted, facts.KindTransitionFailed,
		facts.KindWorkspaceRestored, facts.KindChildSpawned, facts.KindChildReported,
		facts.KindWorkspaceChanged, facts.KindHookRan, facts.KindOutputChecked, facts.KindRerunTurn,
		facts.KindWorktreeFinished:
		return true
	}
	return false
}

// transitionKinds are the kinds this scheduler's transitions append; a
// fact of one of them is this scheduler's only when its cause is one of
// its keys.
var transitionKinds = map[facts.Kind]bool{
	facts.KindModelTurn: true, facts.KindConfirmationRequested: true, facts.KindQuestionAsked: true,
	facts.KindActionRequested: true, facts.KindActionStarted: true, facts.KindActionCompleted: true,
	facts.KindActionInterrupted: true, facts.KindCheckRecorded: true, facts.KindBudgetExhausted: true,
	facts.KindTransitionFailed: true, facts.KindChildSpawned: true, facts.KindWorkspaceChanged: true,
	facts.KindHookRan: true, facts.KindOutputChecked: true, facts.KindRerunTurn: true,
	facts.KindModelSampled: true,
}

func (s *state[S]) systemConfigured(_ facts.Fact, p facts.SystemConfigured) {
	s.system, s.hasSystem = p, true
}

func (s *state[S]) userMessage(f facts.Fact, p facts.UserMessage) {
	s.offeredNow(f, p.Served)
	s.say(facts.Message{Role: facts.RoleUser, Text: p.Text, Seq: f.Seq})
	s.userAfterTurn = true
	s.cutInARow, s.invalidInARow = 0, 0
}

func (s *state[S]) modelTurn(f facts.Fact, p facts.ModelTurn) {
	s.evict()
	if l := s.lean; l != nil && l.has(p.Turn) {
		// A turn numbered as one whose calls the lean fold let go of:
		// its calls' references would meet theirs.
		l.touched = true
	}
	s.sawTurn, s.compactedSince = true, false
	s.failure, s.retry = "", ""
	s.turns = p.Turn
	s.userAfterTurn = false
	s.calls = nil
	s.offers, s.offersFrom, s.offeredN = nil, "", 0
	s.question = nil
	s.answerTurn, s.answer, s.checked = 0, "", nil
	if s.system.Output != nil && p.Cut == nil && p.Question == nil && len(p.ToolCalls) == 0 {
		s.answerTurn, s.answer = p.Turn, p.Text
	}
	text := p.Text
	if p.Question != nil {
		if text != "" {
			text += "\n\n"
		}
		text += p.Question.Text
	}
	if p.Cut == nil || text != "" {
		// (A turn cut off before any text came says nothing to show.)
		s.say(facts.Message{Role: facts.RoleAssistant, Text: text, ToolCalls: p.ToolCalls, Seq: f.Seq})
	}
	s.cutInARow = 0
	if p.Cut != nil {
		s.cutTurn(f, p)
	}
	for _, tc := range p.ToolCalls {
		// The call's policy is not decided here, from today's
		// configuration, but when it is requested, and read back from
		// action.requested: a fold reads only the log.
		c := &call{ref: s.scope() + strconv.Itoa(p.Turn) + "-" + tc.ID, turn: p.Turn, turnSeq: f.Seq, call: tc}
		if s.env.LoopGuard > 0 {
			a := canonicalArgs(tc.Args)
			c.canon = &a
		}
		s.calls = append(s.calls, c)
		s.all = append(s.all, c)
		s.byRef[c.ref] = c
	}
	if p.Question != nil {
		s.question = &Question{Turn: p.Turn, Question: *p.Question}
		s.questions = append(s.questions, s.question)
	}
}

// MaxCutInARow is how many turns in a row may be cut off at a limit
// before the thread stops: each cut turn is followed by another that
// asks the model to go on, and a model that keeps running into the limit
// would otherwise loop for as long as the budget lasts.
const MaxCutInARow = 3

// cutTurn folds a turn cut off at a limit: it is not the model's answer.
// The model is told what was cut and asked to go on, in the next turn;
// after MaxCutInARow cut turns in a row the thread fails (class
// invalid_output) until a person raises the limit and resumes, which
// tries the next turn once more.
func (s *state[S]) cutTurn(f facts.Fact, p facts.ModelTurn) {
	s.cutInARow = max(p.Cut.InARow, 1)
	s.userAfterTurn = true
	s.say(facts.Message{Role: facts.RoleUser, Text: cutNotice(p), Seq: f.Seq})
	if s.cutInARow >= MaxCutInARow {
		s.failure = fmt.Sprintf("%s failed (%s): the answer was cut off at a limit %d turns in a row (stop reason %q): raise the output limit a turn is given (or the server's own) or the server's context size, then resume the thread",
			inferKey(p.Turn), facts.ClassInvalidOutput, s.cutInARow, p.StopReason)
		s.retry = inferKey(p.Turn + 1)
	}
}

// cutNotice is what the model is told after a turn cut off at a limit.
func cutNotice(p facts.ModelTurn) string {
	if len(p.Cut.Calls) > 0 {
		return fmt.Sprintf("[harness] Your answer was cut off at the output limit (stop reason %q) while you were writing a call to %s; its arguments were incomplete, so it did not run, nor did any call in that answer. Make the call again with less in it: split a large file or edit into several smaller calls.",
			p.StopReason, strings.Join(p.Cut.Calls, ", "))
	}
	return fmt.Sprintf("[harness] Your answer was cut off at the output limit (stop reason %q). Continue exactly where it stopped, without repeating what you already wrote.", p.StopReason)
}

func (s *state[S]) confirmationRequested(f facts.Fact, p facts.ConfirmationRequested) {
	if c := s.byRef[p.CallID]; c != nil {
		c.asked, c.askedSeq = &p, f.Seq
		s.byRequest[p.RequestID] = c
	} else {
		s.missedRef(p.CallID)
		s.missed = true
	}
}

func (s *state[S]) confirmationAnswered(f facts.Fact, p facts.ConfirmationAnswered) {
	c := s.byRequest[p.RequestID]
	if c == nil {
		s.missedRef(p.RequestID)
		s.missed = true
		return
	}
	if c.answer != nil {
		return
	}
	c.answer, c.answerAt = &p, f.Seq
	if !p.Approved && c.offer == nil {
		s.say(facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Text: denialResult(p), Seq: f.Seq})
	}
}

// denialResult is what the model is shown for a denied call.
func denialResult(p facts.ConfirmationAnswered) string {
	by := p.By
	if by == "" {
		by = "a person"
	}
	var text string
	switch p.Then {
	case facts.DenyContinue:
		text = fmt.Sprintf("Denied by %s: this tool call did not run.", by)
	case facts.DenyStop:
		text = fmt.Sprintf("Denied by %s, who stopped the thread here: this tool call did not run, nor any call after it.", by)
	default:
		text = "A person denied this tool call; it did not run."
	}
	if reason := strings.TrimSpace(p.Reason); reason != "" {
		// The reason is a sentence of its own: ended, so that what follows
		// does not read as part of it.
		if !strings.HasSuffix(reason, ".") && !strings.HasSuffix(reason, "!") && !strings.HasSuffix(reason, "?") {
			reason += "."
		}
		text += " Reason: " + reason
	}
	if p.Then == facts.DenyContinue {
		text += " Go on without it: do what was asked another way, or say what you need."
	}
	return text
}

// stopped returns the call of the latest turn whose denial stopped the
// thread (facts.DenyStop), or nil.
func (s *state[S]) stopped() *call {
	for _, c := range s.calls {
		if c.denied() && c.answer.Then == facts.DenyStop && c.offer == nil {
			return c
		}
	}
	return nil
}

// goesOn reports whether a call of the latest turn was denied with the
// model to be told and the thread to go on (facts.DenyContinue).
func (s *state[S]) goesOn() bool {
	for _, c := range s.calls {
		if c.denied() && c.answer.Then == facts.DenyContinue && c.offer == nil {
			return true
		}
	}
	return false
}

func (s *state[S]) actionRequested(f facts.Fact, p facts.ActionRequested) {
	s.oddKey(p)
	c := s.byRef[refOf(p.ActionID)]
	if c == nil {
		s.missedRef(refOf(p.ActionID))
		s.missed = true
		return
	}
	a := &Action{ID: p.ActionID, Call: c.ref, Requested: p, RequestedSeq: f.Seq, At: f.At}
	if p.ActionID == rewriteID(c.ref) {
		// The request with a hook's rewrite of the arguments takes the
		// place of the first, which never runs (see rewrite.go). A new
		// slice: projections share calls.
		c.attempts = []*Action{a}
	} else {
		c.attempts = append(c.attempts, a)
	}
	s.byAction[p.ActionID] = c
	if len(c.attempts) == 1 {
		c.policy = Policy{Confirm: p.Confirm, Capability: p.Capability, Repeats: p.Repeats}
	}
}

// workspaceChanged notes a change of the workspace found before an
// action: informational, it enables and waits for nothing.
func (s *state[S]) workspaceChanged(f facts.Fact, p facts.WorkspaceChanged) {
	s.sawWorkspace(f, p)
	s.changes = append(s.changes, Changed{Seq: f.Seq, WorkspaceChanged: p})
	s.unstarted = &p
}

func (s *state[S]) actionStarted(f facts.Fact, p facts.ActionStarted) {
	s.unstarted = nil
	s.sawWorkspace(f, p)
	if _, a := s.attemptOf(p.ActionID); a != nil {
		a.Started, a.StartedSeq, a.At = &p, f.Seq, f.At
	} else {
		s.missed = true
	}
}

func (s *state[S]) actionCompleted(f facts.Fact, p facts.ActionCompleted) {
	s.unstarted = nil
	s.sawWorkspace(f, p)
	c, a := s.attemptOf(p.ActionID)
	if a == nil {
		s.missed = true
		return
	}
	if a.Completed != nil {
		return
	}
	a.Completed, a.CompletedSeq, a.At = &p, f.Seq, f.At
	if a.Started != nil && a.Requested.Check != nil {
		s.unchecked = a
	}
	if k := a.Requested.IdempotencyKey; k != "" && s.done[k] == nil && !c.denied() {
		s.done[k] = a
	}
	if !a.Open() && !c.denied() && c.offer == nil {
		s.sayResult(facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Seq: f.Seq}, a.Completed)
	}
}

func (s *state[S]) checkRecorded(f facts.Fact, p facts.CheckRecorded) {
	_, a := s.attemptOf(p.ActionID)
	if a == nil {
		s.missed = true
		return
	}
	a.Check, a.CheckSeq, a.At = &p, f.Seq, f.At
	if s.unchecked == a {
		s.unchecked = nil
	}
	// The check comes with its completion: show the model both.
	if a.Completed != nil {
		s.editToolMessage(func(m facts.Message) bool { return m.Seq == a.CompletedSeq },
			func(m *msg) { m.sayWith(a.Completed, &p) })
	}
}

func (s *state[S]) actionInterrupted(f facts.Fact, p facts.ActionInterrupted) {
	s.sawWorkspace(f, p)
	c, a := s.attemptOf(p.ActionID)
	if a == nil {
		s.missed = true
		return
	}
	a.Interrupted, a.InterruptedSeq, a.At = &p, f.Seq, f.At
	if !a.Open() && !c.denied() && c.offer == nil {
		// Stopped by a cancelled run, and nothing changed: the model is
		// told so, as it is told a completion.
		s.say(facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Text: InterruptedResult(p), Seq: f.Seq})
	}
}

func (s *state[S]) effectReconciled(f facts.Fact, p facts.EffectReconciled) {
	c, a := s.attemptOf(p.ActionID)
	if a == nil {
		s.missed = true
		return
	}
	if !a.Open() {
		return
	}
	a.Reconciled, a.ReconciledSeq, a.At = &p, f.Seq, f.At
	if p.Decision != facts.DecisionRetry && c.offer == nil {
		s.say(facts.Message{Role: facts.RoleTool, ToolCallID: c.call.ID, Text: reconciledResult(a, p), Seq: f.Seq})
	}
}

func (s *state[S]) questionAsked(f facts.Fact, p facts.QuestionAsked) {
	if p.Elicit != nil {
		s.elicitAsked(f, p)
		return
	}
	if s.question != nil && s.question.Asked == nil {
		s.question.Asked, s.question.AskedSeq = &p, f.Seq
	}
}

func (s *state[S]) questionAnswered(f facts.Fact, p facts.QuestionAnswered) {
	if s.elicitAnswered(f, p) {
		return
	}
	q := s.question
	if q == nil || q.Asked == nil || q.Asked.RequestID != p.RequestID || q.Answer != nil {
		return
	}
	q.Answer, q.AnswerSeq = &p, f.Seq
	s.offeredNow(f, p.Served)
	s.say(facts.Message{Role: facts.RoleUser, Text: p.Text, Seq: f.Seq})
}

// contextCompacted replaces the messages a summary covers with the summary.
func (s *state[S]) contextCompacted(_ facts.Fact, p facts.ContextCompacted) {
	s.compactedSince = true
	kept := []msg{{Message: facts.Message{Role: facts.RoleUser, Text: "Summary of the conversation so far:\n" + p.Summary, Seq: p.UpTo}}}
	for _, m := range s.messages {
		if m.Seq > p.UpTo {
			kept = append(kept, m)
		}
	}
	s.messages, s.lent = kept, 0
}

func (s *state[S]) budgetExhausted(_ facts.Fact, p facts.BudgetExhausted) { s.exhausted = &p }

func (s *state[S]) transitionFailed(_ facts.Fact, p facts.TransitionFailed) {
	if !owns(p.Key) {
		return
	}
	if p.Class == facts.ClassContextOverflow && strings.HasPrefix(p.Key, "infer/turn/") && s.sawTurn && !s.compactedSince {
		// The conversation did not fit the model's context, and there is
		// a conversation to compact (a turn and what came after it): the
		// turn stays due, for the compactor to shorten the conversation
		// first. Refused again after a compaction, or with nothing to
		// compact, it fails as any turn does.
		return
	}
	s.failure = fmt.Sprintf("%s failed (%s): %s", p.Key, p.Class, p.Message)
	s.retry = ""
	if !p.Defect && strings.HasPrefix(p.Key, "infer/turn/") {
		// A model turn changes nothing in the world, so whatever its
		// failure (a key, a quota, a service down), a person may fix the
		// cause and resume to try it again.
		s.retry = p.Key
	}
}

func (s *state[S]) workspaceRestored(f facts.Fact, p facts.WorkspaceRestored) {
	s.restored = append(s.restored, Restored{Seq: f.Seq, WorkspaceRestored: p})
}

// reading returns the state as a Reading.
func (s *state[S]) reading() Reading {
	r := Reading{Thread: s.thread, Turns: s.turns, Restored: slices.Clone(s.restored), Changed: slices.Clone(s.changes)}
	if s.hasSystem {
		sys := s.system
		r.System = &sys
	}
	r.Calls = make([]Call, len(s.all))
	for i, c := range s.all {
		r.Calls[i] = c.reading()
	}
	r.Questions = make([]Question, len(s.questions))
	for i, q := range s.questions {
		r.Questions[i] = *q
	}
	r.Elicitations = s.elicitations(false)
	return r
}

// current returns the reading of the state's latest model turn: its
// calls and question only.
func (s *state[S]) current() Reading {
	r := Reading{Thread: s.thread, Turns: s.turns}
	if s.hasSystem {
		sys := s.system
		r.System = &sys
	}
	r.Calls = make([]Call, len(s.calls))
	for i, c := range s.calls {
		r.Calls[i] = c.reading()
	}
	if s.question != nil {
		r.Questions = []Question{*s.question}
	}
	r.Elicitations = s.elicitations(true)
	r.Output = s.finalOutput()
	return r
}

// finalOutput is the latest turn's final answer checked valid, or nil.
func (s *state[S]) finalOutput() facts.RawJSON {
	if s.checked == nil || !s.checked.Valid {
		return nil
	}
	return s.checked.Output
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
