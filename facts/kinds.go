package facts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The kinds the runtime appends. Each has a payload type registered in this
// package's init; Decode[T] reads it.
const (
	// KindUserMessage: a person wrote to the agent (UserMessage).
	KindUserMessage Kind = "user.message"
	// KindSystemConfigured: the thread's prompt, model and tools (SystemConfigured).
	KindSystemConfigured Kind = "system.configured"
	// KindModelTurn: what the model answered in one turn (ModelTurn).
	KindModelTurn Kind = "model.turn"
	// KindModelCallFailed: one call of a model turn failed — a 500, a
	// refused connection, a cut stream — before the turn was retried or
	// failed (ModelAttempt). It is appended with the turn's model.turn, or
	// with its transition.failed, in order, under the same cause.
	KindModelCallFailed Kind = "model.call_failed"
	// KindConfirmationRequested: a tool call waits for a person's approval
	// (ConfirmationRequested).
	KindConfirmationRequested Kind = "confirmation.requested"
	// KindConfirmationAnswered: a person approved or refused (ConfirmationAnswered).
	KindConfirmationAnswered Kind = "confirmation.answered"
	// KindQuestionAsked: the agent asked a person a question (QuestionAsked).
	KindQuestionAsked Kind = "question.asked"
	// KindQuestionAnswered: a person answered (QuestionAnswered).
	KindQuestionAnswered Kind = "question.answered"
	// KindActionRequested: an effectful action is requested, before
	// anything runs (ActionRequested).
	KindActionRequested Kind = "action.requested"
	// KindActionStarted: the adapter is about to be invoked (ActionStarted).
	KindActionStarted Kind = "action.started"
	// KindActionCompleted: the adapter's report beside the runtime's own
	// observation, and the effect state (ActionCompleted).
	KindActionCompleted Kind = "action.completed"
	// KindActionInterrupted: the action started and never completed — a
	// process died while it ran, and resume observed this; or the run was
	// cancelled while its adapter worked, and the runtime stopped the
	// adapter and observed this (ActionInterrupted).
	KindActionInterrupted Kind = "action.interrupted"
	// KindCheckRecorded: the declared check's verdict (CheckRecorded).
	KindCheckRecorded Kind = "check.recorded"
	// KindEffectReconciled: a person settled an open effect (EffectReconciled).
	KindEffectReconciled Kind = "effect.reconciled"
	// KindContextCompacted: earlier facts are summarized for the model
	// (ContextCompacted).
	KindContextCompacted Kind = "context.compacted"
	// KindBudgetExhausted: a budget ran out (BudgetExhausted).
	KindBudgetExhausted Kind = "budget.exhausted"
	// KindTransitionFailed: a transition ended in an error (TransitionFailed).
	KindTransitionFailed Kind = "transition.failed"
	// KindThreadForked: the thread continues another thread's log up to a
	// seq (ThreadForked).
	KindThreadForked Kind = "thread.forked"
	// KindWorkspaceRestored: a person undid the workspace changes of a
	// thread's actions (WorkspaceRestored). It is appended from outside the
	// runtime, as an ingress fact; no component acts on it.
	KindWorkspaceRestored Kind = "workspace.restored"
	// KindWorkspaceChanged: the workspace an action was about to act on
	// differed from what the thread last observed — a change no action of
	// the thread made, by nobody it knows (WorkspaceChanged). It is
	// appended with the action's start (or its completion, when it may not
	// start), before it, so that the change is not the action's.
	KindWorkspaceChanged Kind = "workspace.changed"
	// KindPolicySet: the approval policy the thread is driven by from here
	// on (PolicySet), posted from outside when the thread starts and when a
	// person changes it. No component acts on it; a front end that drives
	// the thread applies the latest one.
	KindPolicySet Kind = "policy.set"
	// KindContextBoundsSet: the bounds the conversation is kept within
	// from here on (ContextBoundsSet), posted from outside when a person
	// changes them on a thread; they replace those system.configured
	// recorded.
	KindContextBoundsSet Kind = "context.bounds_set"
	// KindOutputChecked: the verdict on a final answer (a model turn with
	// no tool calls) against the thread's output schema (OutputChecked).
	// The scheduler's fold reads the verdict; it never validates again.
	KindOutputChecked Kind = "output.checked"
)

func init() {
	register[UserMessage](KindUserMessage)
	register[SystemConfigured](KindSystemConfigured)
	register[ModelTurn](KindModelTurn)
	register[ModelAttempt](KindModelCallFailed)
	register[ConfirmationRequested](KindConfirmationRequested)
	register[ConfirmationAnswered](KindConfirmationAnswered)
	register[QuestionAsked](KindQuestionAsked)
	register[QuestionAnswered](KindQuestionAnswered)
	register[ActionRequested](KindActionRequested)
	register[ActionStarted](KindActionStarted)
	register[ActionCompleted](KindActionCompleted)
	register[ActionInterrupted](KindActionInterrupted)
	register[CheckRecorded](KindCheckRecorded)
	register[EffectReconciled](KindEffectReconciled)
	register[ContextCompacted](KindContextCompacted)
	register[BudgetExhausted](KindBudgetExhausted)
	register[TransitionFailed](KindTransitionFailed)
	register[ThreadForked](KindThreadForked)
	register[WorkspaceRestored](KindWorkspaceRestored)
	register[WorkspaceChanged](KindWorkspaceChanged)
	register[PolicySet](KindPolicySet)
	register[ContextBoundsSet](KindContextBoundsSet)
	register[OutputChecked](KindOutputChecked)
}

// UserMessage is the payload of user.message.
type UserMessage struct {
	Text string `msgpack:"text,omitempty" json:"text,omitempty"`
	// Served, in a rerun, names the original's user.message this one
	// copies (Served.Thread and Seq): the runtime offered it, after the
	// turn it followed there (see RerunTurn.Offers); nobody wrote it.
	Served *Served `msgpack:"served,omitempty" json:"served,omitempty"`
	// Prompt, when set, says the text is an MCP server's prompt a person
	// chose (MCPPrompt).
	Prompt *MCPPrompt `msgpack:"prompt,omitempty" json:"prompt,omitempty"`
}

// Validate requires some text: an empty message asks nothing.
func (p UserMessage) Validate() error {
	if strings.TrimSpace(p.Text) == "" {
		return errors.New("missing text: a user message must say something")
	}
	if p.Prompt != nil {
		if err := p.Prompt.Validate(); err != nil {
			return err
		}
	}
	if p.Served != nil {
		return p.Served.Validate()
	}
	return nil
}

// ToolSchema describes one tool offered to the model.
type ToolSchema struct {
	Name        string `msgpack:"name,omitempty" json:"name,omitempty"`
	Description string `msgpack:"description,omitempty" json:"description,omitempty"`
	// Schema is the JSON Schema of the tool's arguments.
	Schema RawJSON `msgpack:"schema,omitempty" json:"schema,omitempty"`
}

// SystemConfigured is the payload of system.configured.
type SystemConfigured struct {
	Prompt string       `msgpack:"prompt,omitempty" json:"prompt,omitempty"`
	Model  string       `msgpack:"model,omitempty" json:"model,omitempty"`
	Tools  []ToolSchema `msgpack:"tools,omitempty" json:"tools,omitempty"`
	// Version names the configuration, so a resumed thread can tell it was
	// configured by a different build.
	Version string `msgpack:"version,omitempty" json:"version,omitempty"`
	// Workspace names where the thread works (host and directory), for
	// the record: threads of a store shared by machines can be told apart.
	Workspace string `msgpack:"workspace,omitempty" json:"workspace,omitempty"`
	// Sandbox is where the thread's commands may reach, as configured;
	// nil in logs written before commands ran in a sandbox.
	Sandbox *Sandbox `msgpack:"sandbox,omitempty" json:"sandbox,omitempty"`
	// Context is when the thread's conversation is compacted, as
	// configured when it started (zero bounds: never); nil in logs written
	// before the bounds were recorded. The record, not a later process's
	// configuration, decides, so a replay folds as the run did.
	Context *ContextBounds `msgpack:"context,omitempty" json:"context,omitempty"`
	// Output, when set, is the JSON Schema the thread's final answer
	// must be valid against (harness run --output-schema): each answer is
	// checked (output.checked) before the thread is done.
	Output *OutputSchema `msgpack:"output,omitempty" json:"output,omitempty"`
	// Settings are where the configuration came from: each scope that
	// set something (a settings file, with its path and content digest,
	// or the command line), the keys it set and the keys left out as
	// untrusted; nil in logs written before sources were recorded.
	Settings []SettingsSource `msgpack:"settings,omitempty" json:"settings,omitempty"`
	// Hooks are the hooks in force when the thread was configured, in
	// the order they run (see Hook); the fold runs these and no others.
	Hooks []Hook `msgpack:"hooks,omitempty" json:"hooks,omitempty"`
	// HooksTogether, when set, is the rule the before_tool hooks of a
	// model turn's calls run by: once every call of the turn is
	// requested, the next hook due of each call waiting on one runs at
	// once with the others, in one transition whose hook.ran facts are
	// appended together (a call's own hooks still run one after another).
	// False in logs written before, whose hooks ran one at a time, each in
	// a transition of its own; a thread folds by the rule it records.
	HooksTogether bool `msgpack:"hooks_together,omitempty" json:"hooks_together,omitempty"`
	// AfterHooksTogether, when set, is the rule the after_tool hooks of a
	// completed call run by: every one due runs at once with the others,
	// in one transition whose hook.ran facts are appended together in the
	// hooks' declared order, whatever order they end in. False in logs
	// written before, whose after_tool hooks ran one at a time, each in a
	// transition of its own; a thread folds by the rule it records.
	AfterHooksTogether bool `msgpack:"after_hooks_together,omitempty" json:"after_hooks_together,omitempty"`
	// Worktrees is when the thread's children work in worktrees of
	// their own (WorktreesParallel, WorktreesAlways, WorktreesOff); ""
	// in logs written before worktrees, whose children share the
	// workspace.
	Worktrees string `msgpack:"worktrees,omitempty" json:"worktrees,omitempty"`
	// Reserve, when set, says that the thread's budget reserves each
	// model turn's estimate before the turn runs, and the price it
	// reckons the first turn's prompt at (see BudgetReserve); nil in logs
	// written before, whose budget waits only once what was spent
	// reaches it.
	Reserve *BudgetReserve `msgpack:"reserve,omitempty" json:"reserve,omitempty"`
	// Worktree, when set, is the thread's own worktree of the workspace,
	// made when it was configured (a worker's root thread, see
	// harness.Config.OwnWorktree): it works there, not in the workspace,
	// until its worktree.finished.
	Worktree *Worktree `msgpack:"worktree,omitempty" json:"worktree,omitempty"`
	// WorktreeError, when set, says why the thread works in the
	// workspace though its configuration gave it a worktree of its own:
	// the worktree could not be made.
	WorktreeError string `msgpack:"worktree_error,omitempty" json:"worktree_error,omitempty"`
	// WorktreeMerge, on a thread with a worktree of its own, is what its
	// end does with its branch: WorktreeMergeAsk (offer a person the
	// merge) or WorktreeMergeBranch (leave it on the branch); "" in logs
	// written before, whose end offers the merge as ask does.
	WorktreeMerge string `msgpack:"worktree_merge,omitempty" json:"worktree_merge,omitempty"`
}

// SettingsSource is one scope of settings as a thread records it: who
// set which keys, and which keys of an untrusted file were ignored.
type SettingsSource struct {
	// Scope is user, project, local or flag (the command line).
	Scope string `msgpack:"scope" json:"scope"`
	// Path and Digest (SHA-256 of the content, hex) name a file; empty for
	// the command line.
	Path   string `msgpack:"path,omitempty" json:"path,omitempty"`
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// Trusted reports whether the file widens with the person's trust: a
	// file outside the workspace, or one inside whose content the person
	// trusted (harness trust).
	Trusted bool `msgpack:"trusted,omitempty" json:"trusted,omitempty"`
	// Keys are the keys it set that took effect.
	Keys []string `msgpack:"keys,omitempty" json:"keys,omitempty"`
	// Ignored are the keys it set that would widen authority and were left
	// out, its content not being trusted.
	Ignored []string `msgpack:"ignored,omitempty" json:"ignored,omitempty"`
}

// RuleSource says where one rule of a policy came from: Rule is
// "approve:MODE", "allow:PATTERN" or "deny:PATTERN"; Scope is user,
// project, local, flag, answer (a person's "always" at a prompt) or thread
// (carried from a policy recorded before sources were); a file's Path and
// Digest name its content.
type RuleSource struct {
	Rule   string `msgpack:"rule" json:"rule"`
	Scope  string `msgpack:"scope" json:"scope"`
	Path   string `msgpack:"path,omitempty" json:"path,omitempty"`
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
}

// ContextBounds say when a thread's conversation is compacted (see
// harness.Config): past CompactAt approximate tokens, or past Fraction of
// the model's Window as the provider counts usage. Zero is no bound.
type ContextBounds struct {
	Window    int     `msgpack:"window,omitempty" json:"window,omitempty"`
	Fraction  float64 `msgpack:"fraction,omitempty" json:"fraction,omitempty"`
	CompactAt int     `msgpack:"compact_at,omitempty" json:"compact_at,omitempty"`
}

// ContextBoundsSet is the payload of context.bounds_set.
type ContextBoundsSet struct {
	Bounds ContextBounds `msgpack:"bounds" json:"bounds"`
	// By is who set them: the person whose command posted them.
	By string `msgpack:"by,omitempty" json:"by,omitempty"`
}

// Validate checks the bounds.
func (p ContextBoundsSet) Validate() error { return p.Bounds.Validate() }

// OutputSchema is the JSON Schema a thread's final answer must be valid
// against (system.configured records it; see OutputChecked).
type OutputSchema struct {
	// Schema is the JSON Schema, as the person gave it.
	Schema RawJSON `msgpack:"schema" json:"schema"`
	// Digest is "sha256:" and the hex digest of Schema as recorded.
	Digest string `msgpack:"digest" json:"digest"`
	// Source names where the schema came from (the file given).
	Source string `msgpack:"source,omitempty" json:"source,omitempty"`
}

// Validate requires a schema whose digest is the one recorded.
func (p OutputSchema) Validate() error {
	if len(p.Schema) == 0 {
		return errors.New("missing schema")
	}
	if want := SchemaDigest(p.Schema); p.Digest != want {
		return fmt.Errorf("schema digest %q is not the schema's (%s)", p.Digest, want)
	}
	return nil
}

// SchemaDigest is the digest an OutputSchema records for schema: of its
// meaning, not its spelling (object keys sorted, no space), so that it is
// the same however the log that holds it is written out and read back.
func SchemaDigest(schema RawJSON) string {
	b := []byte(schema)
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil {
		if m, err := json.Marshal(v); err == nil {
			b = m
		}
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// MaxOutputErrors bounds the validation errors an output.checked keeps,
// and MaxOutputError the length of each.
const (
	MaxOutputErrors = 10
	MaxOutputError  = 500
)

// OutputChecked is the payload of output.checked.
type OutputChecked struct {
	// Turn is the model turn whose answer was checked.
	Turn int `msgpack:"turn" json:"turn"`
	// Digest is the digest of the schema it was checked against.
	Digest string `msgpack:"digest" json:"digest"`
	Valid  bool   `msgpack:"valid" json:"valid"`
	// Output is the answer as a JSON document, when it is valid.
	Output RawJSON `msgpack:"output,omitempty" json:"output,omitempty"`
	// Errors say why it is not, at most MaxOutputErrors of them.
	Errors []string `msgpack:"errors,omitempty" json:"errors,omitempty"`
	// InARow counts the invalid answers one after another, this one
	// included (0 when it is valid).
	InARow int `msgpack:"in_a_row,omitempty" json:"in_a_row,omitempty"`
}

// Validate requires a turn, an output exactly when valid, and errors
// within their bound exactly when not.
func (p OutputChecked) Validate() error {
	switch {
	case p.Turn < 1:
		return errors.New("missing turn")
	case p.Valid && len(p.Output) == 0:
		return errors.New("a valid answer without its output")
	case p.Valid && len(p.Errors) > 0:
		return errors.New("a valid answer with errors")
	case !p.Valid && len(p.Errors) == 0:
		return errors.New("an invalid answer without its errors")
	case len(p.Errors) > MaxOutputErrors:
		return fmt.Errorf("%d errors: at most %d are kept", len(p.Errors), MaxOutputErrors)
	}
	for _, e := range p.Errors {
		if len(e) > MaxOutputError {
			return fmt.Errorf("an error of %d bytes: at most %d", len(e), MaxOutputError)
		}
	}
	return nil
}

// Validate requires bounds that are not negative and a fraction in [0, 1].
func (b ContextBounds) Validate() error {
	switch {
	case b.Window < 0:
		return fmt.Errorf("window %d: want ≥ 0", b.Window)
	case b.CompactAt < 0:
		return fmt.Errorf("compact_at %d: want ≥ 0", b.CompactAt)
	case !(b.Fraction >= 0 && b.Fraction <= 1):
		return fmt.Errorf("fraction %v: want a share in [0, 1]", b.Fraction)
	}
	return nil
}

// Validate requires every tool to have a name, and a valid sandbox record.
func (p SystemConfigured) Validate() error {
	for i, t := range p.Tools {
		if t.Name == "" {
			return fmt.Errorf("tools[%d]: missing name", i)
		}
	}
	if p.Sandbox != nil {
		if err := p.Sandbox.Validate(); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	if p.Context != nil {
		if err := p.Context.Validate(); err != nil {
			return fmt.Errorf("context: %w", err)
		}
	}
	if p.Output != nil {
		if err := p.Output.Validate(); err != nil {
			return fmt.Errorf("output: %w", err)
		}
	}
	if p.Reserve != nil {
		if err := p.Reserve.Validate(); err != nil {
			return fmt.Errorf("reserve: %w", err)
		}
	}
	switch p.WorktreeMerge {
	case "", WorktreeMergeAsk, WorktreeMergeBranch:
	default:
		return fmt.Errorf("worktree_merge %q: want %s or %s", p.WorktreeMerge, WorktreeMergeAsk, WorktreeMergeBranch)
	}
	return nil
}

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string `msgpack:"id,omitempty" json:"id,omitempty"`
	Name string `msgpack:"name,omitempty" json:"name,omitempty"`
	// Args is the arguments exactly as the model wrote them. It is a string,
	// not RawJSON, because a model can write invalid JSON and the log keeps
	// what it said.
	Args string `msgpack:"args,omitempty" json:"args,omitempty"`
}

// Question is a question the model put to a person.
type Question struct {
	ID            string   `msgpack:"id,omitempty" json:"id,omitempty"`
	Text          string   `msgpack:"text,omitempty" json:"text,omitempty"`
	Options       []string `msgpack:"options,omitempty" json:"options,omitempty"`
	AllowFreeText bool     `msgpack:"allow_free_text,omitempty" json:"allow_free_text,omitempty"`
}

// Usage counts the tokens of one model turn.
type Usage struct {
	InputTokens  int64 `msgpack:"input_tokens,omitempty" json:"input_tokens,omitempty"`
	OutputTokens int64 `msgpack:"output_tokens,omitempty" json:"output_tokens,omitempty"`
	// CacheReadTokens and CacheWriteTokens are the input tokens the
	// provider read from its prompt cache and wrote to it, when it says
	// (OpenAI's cached_tokens, Anthropic's cache_read_input_tokens and
	// cache_creation_input_tokens): parts of InputTokens, priced apart.
	CacheReadTokens  int64 `msgpack:"cache_read_tokens,omitempty" json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `msgpack:"cache_write_tokens,omitempty" json:"cache_write_tokens,omitempty"`
}

// TurnCost is what a model turn cost, by a price table.
type TurnCost struct {
	// USD is the turn's cost in US dollars.
	USD float64 `msgpack:"usd" json:"usd"`
	// Table names the price table and its version ("harness-2025-11", or
	// the user's settings' with their digest).
	Table string `msgpack:"table,omitempty" json:"table,omitempty"`
}

// ModelTurn is the payload of model.turn.
type ModelTurn struct {
	// Turn counts the model turns of the thread, from 1.
	Turn      int        `msgpack:"turn,omitempty" json:"turn,omitempty"`
	Text      string     `msgpack:"text,omitempty" json:"text,omitempty"`
	ToolCalls []ToolCall `msgpack:"tool_calls,omitempty" json:"tool_calls,omitempty"`
	Question  *Question  `msgpack:"question,omitempty" json:"question,omitempty"`
	Usage     Usage      `msgpack:"usage,omitempty" json:"usage,omitzero"`
	// Cost is what the turn cost by the price table named, when the table
	// prices the thread's model; none in a log written before it was
	// recorded, or for a model the table does not price.
	Cost *TurnCost `msgpack:"cost,omitempty" json:"cost,omitempty"`
	// Model is the model spec that ran the turn when it is not the one
	// system.configured recorded (resume --model other); the turn is
	// priced by it. "" is the recorded one.
	Model string `msgpack:"model,omitempty" json:"model,omitempty"`
	// Exchange names the exact bytes of the provider call, kept as blobs in
	// the store, when the provider exposes them.
	Exchange *ExchangeRef `msgpack:"exchange,omitempty" json:"exchange,omitempty"`
	// StopReason is why the model stopped, as its provider said it
	// ("stop", "tool_calls", "end_turn", "length"); none from a scripted
	// model or a log written before it was recorded.
	StopReason string `msgpack:"stop_reason,omitempty" json:"stop_reason,omitempty"`
	// Cut is set when the answer stopped at a limit (the output limit, or
	// the context filling up) before it was complete. Text is what came;
	// the tool calls that had begun are not in ToolCalls — their
	// arguments are incomplete, and they never run — but named in Cut.
	// A cut turn is not the model's answer: the model is asked to go on.
	Cut *Cut `msgpack:"cut,omitempty" json:"cut,omitempty"`
	// Attempts are the calls of this turn that failed before the one
	// that answered, as logs written before each was a fact of its own
	// (model.call_failed) kept them; a turn now records none here.
	Attempts []ModelAttempt `msgpack:"attempts,omitempty" json:"attempts,omitempty"`
	// ToolsUnseen is set when the server counted fewer input tokens than
	// the tool schemas alone take: it left the tools out of the prompt
	// (a chat template without tool support), and the model cannot call
	// them.
	ToolsUnseen bool `msgpack:"tools_unseen,omitempty" json:"tools_unseen,omitempty"`
}

// Cut is how a model turn's answer was cut off at a limit.
type Cut struct {
	// Calls names, in order, the tool calls that had begun when the
	// answer was cut; none of them runs.
	Calls []string `msgpack:"calls,omitempty" json:"calls,omitempty"`
	// InARow counts the turns cut one after another, this one included,
	// since the latest turn that was not cut or the latest user message.
	InARow int `msgpack:"in_a_row,omitempty" json:"in_a_row,omitempty"`
}

// ModelAttempt is one failed call of a model turn: the payload of
// model.call_failed.
type ModelAttempt struct {
	// Turn is the model turn the call was for.
	Turn int `msgpack:"turn,omitempty" json:"turn,omitempty"`
	// Attempt counts the turn's calls, from 1.
	Attempt int        `msgpack:"attempt,omitempty" json:"attempt,omitempty"`
	Class   ErrorClass `msgpack:"class,omitempty" json:"class,omitempty"`
	// Status is the HTTP status; 0 when no response came.
	Status  int    `msgpack:"status,omitempty" json:"status,omitempty"`
	Message string `msgpack:"message,omitempty" json:"message,omitempty"`
	// Body is the start of the response's body, at most MaxAttemptBody
	// bytes.
	Body string `msgpack:"body,omitempty" json:"body,omitempty"`
	// WaitMS is how long the runtime waited before the next call, in
	// milliseconds; 0 after the last.
	WaitMS int64 `msgpack:"wait_ms,omitempty" json:"wait_ms,omitempty"`
}

// MaxAttemptBody bounds the body a ModelAttempt keeps.
const MaxAttemptBody = 1024

// ExchangeRef points at the kept bytes of one call to a model provider.
type ExchangeRef struct {
	Provider string `msgpack:"provider,omitempty" json:"provider,omitempty"`
	URL      string `msgpack:"url,omitempty" json:"url,omitempty"`
	Status   int    `msgpack:"status,omitempty" json:"status,omitempty"`
	// Request and Response are the SHA-256 digests (hex) of the request
	// body as sent and the response body as received.
	Request  string `msgpack:"request,omitempty" json:"request,omitempty"`
	Response string `msgpack:"response,omitempty" json:"response,omitempty"`
	// Size is the request and response bytes together.
	Size int `msgpack:"size,omitempty" json:"size,omitempty"`
}

// Validate requires ids and names on tool calls and an id on a question.
func (p ModelTurn) Validate() error {
	if p.Turn < 0 {
		return fmt.Errorf("turn %d is negative", p.Turn)
	}
	for i, c := range p.ToolCalls {
		if c.ID == "" {
			return fmt.Errorf("tool_calls[%d]: missing id", i)
		}
		if c.Name == "" {
			return fmt.Errorf("tool_calls[%d]: missing name", i)
		}
	}
	if p.Question != nil && p.Question.ID == "" {
		return errors.New("question: missing id")
	}
	return nil
}

// ConfirmationRequested is the payload of confirmation.requested.
type ConfirmationRequested struct {
	RequestID string `msgpack:"request_id,omitempty" json:"request_id,omitempty"`
	CallID    string `msgpack:"call_id,omitempty" json:"call_id,omitempty"`
	Tool      string `msgpack:"tool,omitempty" json:"tool,omitempty"`
	Args      string `msgpack:"args,omitempty" json:"args,omitempty"`
	// Digest identifies exactly what is being approved (the tool and its
	// arguments), so an answer cannot approve something else.
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// Hook, when set, is the before_tool hook that asked for this
	// confirmation and its reason ("hook NAME (scope): reason").
	Hook string `msgpack:"hook,omitempty" json:"hook,omitempty"`
	// ApprovedBy, when set, names the user-scope before_tool hook that
	// approved the call: a front end's policy answers it as it would an
	// allow rule (a deny rule still wins).
	ApprovedBy string `msgpack:"approved_by,omitempty" json:"approved_by,omitempty"`
	// Reason, when set, says why a person is asked though no rule asks
	// (the loop guard: ActionRequested.Repeats); no approval policy
	// answers such a request.
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Rewritten, when set, says that a before_tool hook rewrote the
	// call's arguments (Args are the rewrite) and what the model had
	// asked for; the policy decides on Args as on any call's.
	Rewritten string `msgpack:"rewritten,omitempty" json:"rewritten,omitempty"`
}

// Validate requires a request id.
func (p ConfirmationRequested) Validate() error { return required("request_id", p.RequestID) }

// CallDigest identifies a tool call exactly: the tool's name and its
// arguments, byte for byte (SHA-256, hex). It is the Digest a
// confirmation.requested, its answer and an MCPCall record.
func CallDigest(tool, args string) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(args))
	return hex.EncodeToString(h.Sum(nil))
}

// ConfirmationAnswered is the payload of confirmation.answered.
type ConfirmationAnswered struct {
	RequestID string `msgpack:"request_id,omitempty" json:"request_id,omitempty"`
	Approved  bool   `msgpack:"approved,omitempty" json:"approved"`
	By        string `msgpack:"by,omitempty" json:"by,omitempty"`
	Reason    string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Digest, when set, is the digest of the request the person saw; an
	// answer whose digest differs from the request's is refused, so an
	// approval cannot approve something else.
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// Then, on a denial, says what the thread does next (see AfterDenial);
	// "" on an approval, and on a denial recorded before denials said.
	Then AfterDenial `msgpack:"then,omitempty" json:"then,omitempty"`
}

// Validate requires a request id, and a known Then on a denial only.
func (p ConfirmationAnswered) Validate() error {
	if err := required("request_id", p.RequestID); err != nil {
		return err
	}
	switch {
	case p.Then == "":
	case p.Approved:
		return fmt.Errorf("then %q: only a denial says what follows it", p.Then)
	default:
		return p.Then.Validate()
	}
	return nil
}

// AfterDenial is what a thread does after a person denies a tool call.
type AfterDenial string

// What follows a denial.
const (
	// DenyContinue: the model is told the call was denied (and why), and
	// the thread goes on with its next model turn.
	DenyContinue AfterDenial = "continue"
	// DenyStop: the thread stops here: no other call of the turn runs (each
	// is completed as denied, unrun) and no model turn follows, until a
	// person writes to the thread again.
	DenyStop AfterDenial = "stop"
)

// A denial with no Then was recorded before denials said what follows
// them; it folds as it did then: a turn whose every call was denied is
// complete without a tool, and a denial beside a call that ran is shown
// to the model in its next turn.

// Validate accepts continue and stop.
func (a AfterDenial) Validate() error { return oneOf("then", a, DenyContinue, DenyStop) }

// QuestionAsked is the payload of question.asked.
type QuestionAsked struct {
	RequestID     string   `msgpack:"request_id,omitempty" json:"request_id,omitempty"`
	Text          string   `msgpack:"text,omitempty" json:"text,omitempty"`
	Options       []string `msgpack:"options,omitempty" json:"options,omitempty"`
	AllowFreeText bool     `msgpack:"allow_free_text,omitempty" json:"allow_free_text,omitempty"`
	// Elicit, when set, makes the question one a running action's MCP
	// server asked (elicitation): see Elicit.
	Elicit *Elicit `msgpack:"elicit,omitempty" json:"elicit,omitempty"`
}

// Validate requires a request id, and an elicitation's action and schema.
func (p QuestionAsked) Validate() error {
	if err := required("request_id", p.RequestID); err != nil {
		return err
	}
	if p.Elicit != nil {
		return p.Elicit.Validate()
	}
	return nil
}

// QuestionAnswered is the payload of question.answered.
type QuestionAnswered struct {
	RequestID string `msgpack:"request_id,omitempty" json:"request_id,omitempty"`
	Text      string `msgpack:"text,omitempty" json:"text,omitempty"`
	By        string `msgpack:"by,omitempty" json:"by,omitempty"`
	// Served, in a rerun, names the original's answer to the same
	// question that this one copies: nobody was asked again (see
	// RerunTurn.Offers).
	Served *Served `msgpack:"served,omitempty" json:"served,omitempty"`
	// Elicited, when set, is the answer to an elicitation (a question
	// whose QuestionAsked.Elicit is set): what the server is sent.
	Elicited *Elicited `msgpack:"elicited,omitempty" json:"elicited,omitempty"`
}

// Validate requires a request id, a valid Served, and a known action of
// an elicitation's answer (content only with accept).
func (p QuestionAnswered) Validate() error {
	err := required("request_id", p.RequestID)
	if p.Served != nil {
		err = errors.Join(err, p.Served.Validate())
	}
	if p.Elicited != nil {
		err = errors.Join(err, p.Elicited.Validate())
	}
	return err
}

// CheckSpec declares how to check an action's effect: a named check bound
// to a target, with its arguments.
type CheckSpec struct {
	Name   string  `msgpack:"name,omitempty" json:"name,omitempty"`
	Target string  `msgpack:"target,omitempty" json:"target,omitempty"`
	Args   RawJSON `msgpack:"args,omitempty" json:"args,omitempty"`
}

// ActionRequested is the payload of action.requested, recorded before
// anything runs.
type ActionRequested struct {
	ActionID string `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	// CallID is the model's tool call this action serves, if any.
	CallID string `msgpack:"call_id,omitempty" json:"call_id,omitempty"`
	// Capability is what the thread must have been granted.
	Capability  Capability `msgpack:"capability,omitempty" json:"capability,omitempty"`
	Instruction string     `msgpack:"instruction,omitempty" json:"instruction,omitempty"`
	// Precondition is the observed state hash at request time.
	Precondition   string `msgpack:"precondition,omitempty" json:"precondition,omitempty"`
	IdempotencyKey string `msgpack:"idempotency_key,omitempty" json:"idempotency_key,omitempty"`
	RequestedBy    string `msgpack:"requested_by,omitempty" json:"requested_by,omitempty"`
	ActorID        string `msgpack:"actor_id,omitempty" json:"actor_id,omitempty"`
	Adapter        string `msgpack:"adapter,omitempty" json:"adapter,omitempty"`
	// Payload is the adapter's input.
	Payload RawJSON    `msgpack:"payload,omitempty" json:"payload,omitempty"`
	Check   *CheckSpec `msgpack:"check,omitempty" json:"check,omitempty"`
	// Confirm records that a person must confirm the action before it
	// runs, as the tool's policy said when it was requested, so a later
	// fold does not depend on today's configuration.
	Confirm bool `msgpack:"confirm,omitempty" json:"confirm,omitempty"`
	// Repeats, when set, is how many times in a row the thread's model
	// made this same call (the tool and its arguments, byte for byte),
	// this one included: past the loop guard's bound, a person confirms
	// it whatever the policy says (ConfirmationRequested.Reason).
	Repeats int `msgpack:"repeats,omitempty" json:"repeats,omitempty"`
	// Refused, when set, says why the call was refused before anyone was
	// asked about it — arguments that are not one JSON object, a key named
	// twice, a path the tool would refuse anyway. Nothing runs: the action
	// completes as failed with this reason.
	Refused string `msgpack:"refused,omitempty" json:"refused,omitempty"`
	// Sandbox is where the action's command may reach, recorded with the
	// request so the person approving it and replay see it; nil for an
	// action that runs no command.
	Sandbox *Sandbox `msgpack:"sandbox,omitempty" json:"sandbox,omitempty"`
	// MCP, for a call to a tool of an MCP server, is the server, its
	// tool, the call's digest and the digest of the tool as the thread
	// offered it; nil for any other action.
	MCP *MCPCall `msgpack:"mcp,omitempty" json:"mcp,omitempty"`
	// Served, in a rerun, names the original's recorded result this call
	// is served: nothing runs and nobody is asked (see RerunTurn).
	Served *Served `msgpack:"served,omitempty" json:"served,omitempty"`
}

// Validate requires an action id, and valid sandbox, MCP and served
// records.
func (p ActionRequested) Validate() error {
	if err := required("action_id", p.ActionID); err != nil {
		return err
	}
	if p.Sandbox != nil {
		if err := p.Sandbox.Validate(); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	if p.MCP != nil {
		if err := p.MCP.Validate(); err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
	}
	if p.Served != nil {
		if err := p.Served.Validate(); err != nil {
			return fmt.Errorf("served: %w", err)
		}
	}
	return nil
}

// ActionStarted is the payload of action.started, synced immediately before
// the adapter is invoked.
type ActionStarted struct {
	ActionID       string `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	ObservedBefore string `msgpack:"observed_before,omitempty" json:"observed_before,omitempty"`
	// Manifest is the digest of the kept listing of the observation before
	// (see action.Blobs), so that a resume after a crash can say which
	// paths changed; "" when none was kept.
	Manifest string `msgpack:"manifest,omitempty" json:"manifest,omitempty"`
}

// Validate requires an action id.
func (p ActionStarted) Validate() error { return required("action_id", p.ActionID) }

// ReportStatus is what an adapter says happened.
type ReportStatus string

// The report statuses.
const (
	StatusSucceeded ReportStatus = "succeeded"
	StatusFailed    ReportStatus = "failed"
	StatusDenied    ReportStatus = "denied"
)

// Validate accepts the known statuses.
func (s ReportStatus) Validate() error {
	return oneOf("status", s, StatusSucceeded, StatusFailed, StatusDenied)
}

// Report is an adapter's own account of an action: evidence of nothing but
// what the adapter said.
type Report struct {
	Status       ReportStatus `msgpack:"status,omitempty" json:"status,omitempty"`
	ClaimedState string       `msgpack:"claimed_state,omitempty" json:"claimed_state,omitempty"`
	Transcript   string       `msgpack:"transcript,omitempty" json:"transcript,omitempty"`
	Stdout       string       `msgpack:"stdout,omitempty" json:"stdout,omitempty"`
	Stderr       string       `msgpack:"stderr,omitempty" json:"stderr,omitempty"`
	ExitCode     int          `msgpack:"exit_code,omitempty" json:"exit_code,omitempty"`
	Error        string       `msgpack:"error,omitempty" json:"error,omitempty"`
	// StartedAt and EndedAt bound the adapter's run, RFC 3339 in UTC, as
	// the runtime measured them.
	StartedAt string `msgpack:"started_at,omitempty" json:"started_at,omitempty"`
	EndedAt   string `msgpack:"ended_at,omitempty" json:"ended_at,omitempty"`
	// MCP, for a call to a tool of an MCP server, is the server's answer
	// kept whole (see MCPResult); nil for any other adapter.
	MCP *MCPResult `msgpack:"mcp,omitempty" json:"mcp,omitempty"`
	// Network, for a command with a network allow-list, is each
	// connection it made through the harness's proxy (see Network); nil
	// for any other.
	Network *Network `msgpack:"network,omitempty" json:"network,omitempty"`
	// InDoubt: the adapter cannot tell whether its effect happened (an
	// MCP call that got no answer within its timeout, or whose server or
	// connection died during it). The action's effect is then unknown
	// (unless it only reads): open until a person reconciles it, as an
	// action found in doubt after a crash. Absent in logs written before
	// it was recorded.
	InDoubt bool `msgpack:"in_doubt,omitempty" json:"in_doubt,omitempty"`
}

// PathChange is one path the observer saw change, with digests before and
// after ("" where the path did not exist) and, for a regular file, its
// permission bits before and after. A digest is the SHA-256 of the
// content in lower-case hex (of a symlink's target string), or, for a
// regular file larger than the observer hashes, a stat digest (see
// StatDigestPrefix): the file was not read, and its bytes were not kept;
// for a FIFO, socket or device, a special digest (SpecialDigestPrefix).
type PathChange struct {
	Path   string `msgpack:"path,omitempty" json:"path,omitempty"`
	Before string `msgpack:"before,omitempty" json:"before,omitempty"`
	After  string `msgpack:"after,omitempty" json:"after,omitempty"`
	// BeforeMode and AfterMode are the permission bits of the path before
	// and after (fs.FileMode.Perm: 0o644, 0o755), so that an undo can put
	// back a mode as well as content. 0 means not recorded: the path did
	// not exist or is not a regular file (a symlink's permission bits mean
	// nothing on most systems and cannot be set), the file had no
	// permission bits at all, or the fact was written before modes were
	// recorded. A change of mode alone has Before equal to After.
	BeforeMode uint32 `msgpack:"before_mode,omitempty" json:"before_mode,omitempty"`
	AfterMode  uint32 `msgpack:"after_mode,omitempty" json:"after_mode,omitempty"`
}

// StatDigestPrefix opens the digest the workspace observer gives a regular
// file larger than it hashes (1 GiB unless told otherwise): "stat:" and
// 64 lower-case hex digits, the SHA-256 of the file's stat record (size,
// mtime, ctime, inode, device), not of its content. Such a file was never
// read, so its bytes were never kept: nothing can show or restore them.
// The prefix keeps it apart from every content digest, which is hex alone.
const StatDigestPrefix = "stat:"

// IsStatDigest reports whether digest is a stat digest (see
// StatDigestPrefix): a file known by its stat record alone.
func IsStatDigest(digest string) bool { return strings.HasPrefix(digest, StatDigestPrefix) }

// SpecialDigestPrefix opens the digest the workspace observer gives what
// is neither a regular file, a symbolic link nor a directory: a named
// pipe ("special:fifo"), a socket ("special:socket"), a character or
// block device ("special:char", "special:block"). Such a file has no
// content to read (opening a FIFO waits for a writer), but it is there:
// a command that makes one, or replaces a file by one, changed the
// workspace, and the person's tools may block on it.
const SpecialDigestPrefix = "special:"

// IsSpecialDigest reports whether digest is a special file's (see
// SpecialDigestPrefix).
func IsSpecialDigest(digest string) bool { return strings.HasPrefix(digest, SpecialDigestPrefix) }

// SpecialKind is what a special file's digest says it is ("FIFO",
// "socket", "character device", "block device"), or "" for any other
// digest.
func SpecialKind(digest string) string {
	switch digest {
	case SpecialDigestPrefix + "fifo":
		return "FIFO"
	case SpecialDigestPrefix + "socket":
		return "socket"
	case SpecialDigestPrefix + "char":
		return "character device"
	case SpecialDigestPrefix + "block":
		return "block device"
	}
	if IsSpecialDigest(digest) {
		return "special file"
	}
	return ""
}

// ModeChanged reports whether both modes are recorded and differ.
func (c PathChange) ModeChanged() bool {
	return c.BeforeMode != 0 && c.AfterMode != 0 && c.BeforeMode != c.AfterMode
}

// Observation is what the runtime's own observer saw, independent of the
// adapter.
type Observation struct {
	// Available is false when no observation was possible.
	Available bool         `msgpack:"available,omitempty" json:"available,omitempty"`
	Before    string       `msgpack:"before,omitempty" json:"before,omitempty"`
	After     string       `msgpack:"after,omitempty" json:"after,omitempty"`
	Changed   []PathChange `msgpack:"changed,omitempty" json:"changed,omitempty"`
	Error     string       `msgpack:"error,omitempty" json:"error,omitempty"`
	// Manifest is the digest of the kept listing of the reading after (see
	// ActionStarted.Manifest), "" when none was kept: the next action's
	// reading before is compared with it, path by path, to say what
	// changed in between (see WorkspaceChanged).
	Manifest string `msgpack:"manifest,omitempty" json:"manifest,omitempty"`
	// Others are the changed paths that other threads' recorded actions
	// made, each named by its thread and action: threads sharing the
	// workspace ran at the same time. Their paths stay in Changed (undo
	// reads it); nil in logs written before attribution, and where no
	// other thread's action overlapped.
	Others []OtherChange `msgpack:"others,omitempty" json:"others,omitempty"`
	// Unrecorded are the changed paths that no recorded action names:
	// neither this action's request (which names the paths it writes)
	// nor another thread's. Set only for an action whose request names
	// its paths; for one that does not (a command), what Others leaves is
	// its own or nobody's.
	Unrecorded []string `msgpack:"unrecorded,omitempty" json:"unrecorded,omitempty"`
	// Removed is what the runtime took away after the adapter ended and
	// before it observed after: an entry the action made in a git
	// directory where git would read another config, and so run a
	// program of the writer's choosing in a person's next git command
	// (see Removal). The action made it (its effect is observed, not
	// none), the runtime removed it, and the reading after is of the
	// workspace without it: it is in no Changed. nil when nothing was
	// removed, and in logs written before removals were recorded.
	Removed []Removal `msgpack:"removed,omitempty" json:"removed,omitempty"`
}

// Removal is one entry the runtime removed after an action (see
// Observation.Removed): a "commondir" that appeared, while the action ran,
// in a git directory that had none when it started. Git reads the common
// directory's config, hooks and info from the directory a commondir
// names, so one planted in the workspace's .git makes the person's next
// git status run that config's core.fsmonitor.
type Removal struct {
	// Path is where it was: relative to the workspace, slash-separated,
	// or absolute for a git directory outside it (a linked worktree's
	// or a submodule's).
	Path string `msgpack:"path" json:"path"`
	// Kind is what it was: "a regular file", "a symlink", "a directory"
	// (see action.FileKind).
	Kind string `msgpack:"kind,omitempty" json:"kind,omitempty"`
	// Names is what it named: a file's first line (at most 4 KiB of it
	// read), a link's target; "" for anything else.
	Names string `msgpack:"names,omitempty" json:"names,omitempty"`
	// Digest is the SHA-256 of a file's content (of a link's target),
	// lower-case hex; "" when it was not read whole.
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// Why says why it was removed.
	Why string `msgpack:"why,omitempty" json:"why,omitempty"`
	// Error, when set, is why it could not be removed: it is still there.
	Error string `msgpack:"error,omitempty" json:"error,omitempty"`
}

// OtherChange is what another thread's action changed during an
// observation: the thread, its action, the paths (each also in the
// observation's Changed). Running says the other action had not finished
// when this one was observed: its request named the paths, or it ran a
// command while they changed.
type OtherChange struct {
	Thread  string   `msgpack:"thread" json:"thread"`
	Action  string   `msgpack:"action" json:"action"`
	Paths   []string `msgpack:"paths,omitempty" json:"paths,omitempty"`
	Running bool     `msgpack:"running,omitempty" json:"running,omitempty"`
}

// EffectState is what the runtime concludes from a report and an
// observation.
type EffectState string

// The effect states.
const (
	// EffectReported: no observation was possible; nobody looked.
	EffectReported EffectState = "reported"
	// EffectObserved: the observed scope changed.
	EffectObserved EffectState = "observed"
	// EffectUnknown: report and observation disagree; the effect is open
	// until a person reconciles it.
	EffectUnknown EffectState = "unknown"
	// EffectNone: a failure or a denial was reported and the observed
	// scope did not change: nothing happened, and nothing was claimed.
	EffectNone EffectState = "none"
)

// Validate accepts the known effect states.
func (s EffectState) Validate() error {
	return oneOf("effect_state", s, EffectReported, EffectObserved, EffectUnknown, EffectNone)
}

// ActionCompleted is the payload of action.completed.
type ActionCompleted struct {
	ActionID    string      `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	Report      Report      `msgpack:"report,omitempty" json:"report,omitzero"`
	Observation Observation `msgpack:"observation,omitempty" json:"observation,omitzero"`
	EffectState EffectState `msgpack:"effect_state,omitempty" json:"effect_state,omitempty"`
	// Served, in a rerun, names the original's action.completed this
	// completion copies: nothing ran (see RerunTurn).
	Served *Served `msgpack:"served,omitempty" json:"served,omitempty"`
}

// Validate requires an action id, a known report status and a known effect
// state.
func (p ActionCompleted) Validate() error {
	err := errors.Join(required("action_id", p.ActionID), p.Report.Status.Validate(), p.EffectState.Validate())
	if p.Report.MCP != nil {
		if e := p.Report.MCP.Validate(); e != nil {
			err = errors.Join(err, fmt.Errorf("report: mcp: %w", e))
		}
	}
	if p.Report.Network != nil {
		if e := p.Report.Network.Validate(); e != nil {
			err = errors.Join(err, fmt.Errorf("report: network: %w", e))
		}
	}
	return err
}

// ActionInterrupted is the payload of action.interrupted: the action
// started and never completed. Either the process died between
// action.started and action.completed, and resume found it in doubt and
// observed this; or (Cancelled) the caller cancelled the run while the
// adapter worked: the runtime stopped the adapter (a command gets SIGTERM,
// then SIGKILL) and observed at once. A cancellation is the one fact a
// runtime appends after its context is done.
type ActionInterrupted struct {
	ActionID       string       `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	ObservedBefore string       `msgpack:"observed_before,omitempty" json:"observed_before,omitempty"`
	ObservedNow    string       `msgpack:"observed_now,omitempty" json:"observed_now,omitempty"`
	Changed        []PathChange `msgpack:"changed,omitempty" json:"changed,omitempty"`
	// Manifest is the digest of the kept listing of the reading now, ""
	// when none was kept (see Observation.Manifest).
	Manifest string `msgpack:"manifest,omitempty" json:"manifest,omitempty"`
	// Cancelled: the run was cancelled while the adapter worked, and the
	// adapter was stopped before this was recorded (false: a process died
	// and nobody knows when the adapter stopped).
	Cancelled bool `msgpack:"cancelled,omitempty" json:"cancelled,omitempty"`
	// Report is what the stopped adapter said, when it was cancelled and
	// returned a report (a command's output so far). It is a report, not
	// evidence: the observation above is the runtime's.
	Report *Report `msgpack:"report,omitempty" json:"report,omitempty"`
	// Others and Unrecorded tell Changed apart as an observation's do
	// (Observation.Others): the paths other threads' actions made, by
	// thread and action, and those no recorded action names — for an
	// action found in doubt whose start the workspace's shared ledger
	// still holds (see action.Ledger.Shared).
	Others     []OtherChange `msgpack:"others,omitempty" json:"others,omitempty"`
	Unrecorded []string      `msgpack:"unrecorded,omitempty" json:"unrecorded,omitempty"`
	// Removed is what the runtime removed before it observed now, as an
	// observation's (Observation.Removed).
	Removed []Removal `msgpack:"removed,omitempty" json:"removed,omitempty"`
	// Own are the paths, seen now, of the files the process that began
	// the action wrote itself (its output, redirected into the
	// workspace), which its reading before left out as every reading of
	// that process did: not the action's, so not in Changed. Known from
	// the workspace's shared ledger, as Others is.
	Own []string `msgpack:"own,omitempty" json:"own,omitempty"`
}

// Validate requires an action id.
func (p ActionInterrupted) Validate() error { return required("action_id", p.ActionID) }

// Unchanged reports whether the runtime saw, for sure, that the workspace
// did not change while the action ran: a reading before and one after,
// the same. Only then is an interrupted action known to have had no
// effect that the runtime can see.
func (p ActionInterrupted) Unchanged() bool {
	return p.ObservedBefore != "" && p.ObservedNow == p.ObservedBefore
}

// Verdict is a check's result.
type Verdict string

// The verdicts.
const (
	VerdictPass Verdict = "pass"
	VerdictFail Verdict = "fail"
)

// Validate accepts pass and fail.
func (v Verdict) Validate() error { return oneOf("verdict", v, VerdictPass, VerdictFail) }

// CheckRecorded is the payload of check.recorded.
type CheckRecorded struct {
	ActionID string    `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	Check    CheckSpec `msgpack:"check,omitempty" json:"check,omitzero"`
	Verdict  Verdict   `msgpack:"verdict,omitempty" json:"verdict,omitempty"`
	Reason   string    `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Sandbox, for a check that ran a command (command_succeeds), is where
	// that command could reach: the sandbox the action's request recorded,
	// with the workspace read-only (a check looks; what it wrote would be
	// in no observation).
	Sandbox *Sandbox `msgpack:"sandbox,omitempty" json:"sandbox,omitempty"`
}

// Validate requires an action id and a verdict, and a valid sandbox when
// there is one.
func (p CheckRecorded) Validate() error {
	err := errors.Join(required("action_id", p.ActionID), p.Verdict.Validate())
	if p.Sandbox != nil {
		err = errors.Join(err, p.Sandbox.Validate())
	}
	return err
}

// Decision is how a person settles an open effect.
type Decision string

// The decisions.
const (
	DecisionAccept  Decision = "accept"
	DecisionRetry   Decision = "retry"
	DecisionAbandon Decision = "abandon"
)

// Validate accepts accept, retry and abandon.
func (d Decision) Validate() error {
	return oneOf("decision", d, DecisionAccept, DecisionRetry, DecisionAbandon)
}

// EffectReconciled is the payload of effect.reconciled.
type EffectReconciled struct {
	ActionID string   `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	Decision Decision `msgpack:"decision,omitempty" json:"decision,omitempty"`
	By       string   `msgpack:"by,omitempty" json:"by,omitempty"`
	Note     string   `msgpack:"note,omitempty" json:"note,omitempty"`
}

// Validate requires an action id and a decision.
func (p EffectReconciled) Validate() error {
	return errors.Join(required("action_id", p.ActionID), p.Decision.Validate())
}

// ContextCompacted is the payload of context.compacted: facts up to and
// including UpTo are summarized by Summary for the model.
type ContextCompacted struct {
	UpTo    uint64 `msgpack:"up_to,omitempty" json:"up_to,omitempty"`
	Summary string `msgpack:"summary,omitempty" json:"summary,omitempty"`
	// Messages is how many messages of the conversation the summary
	// stands for: every one the model was shown, up to UpTo.
	Messages int `msgpack:"messages,omitempty" json:"messages,omitempty"`
	// By is who wrote the summary: CompactedByModel when a compaction turn
	// asked the model (Usage and Exchange are that turn's); empty for the
	// extractive summary, or a summarizer of the harness's own.
	By string `msgpack:"by,omitempty" json:"by,omitempty"`
	// Usage is what the compaction turn cost, as the provider counted it.
	Usage Usage `msgpack:"usage,omitempty" json:"usage,omitzero"`
	// Cost is what the compaction turn cost by the price table named,
	// when the table prices its model (Model, or the thread's recorded
	// one when ""); nil otherwise, and in logs from before.
	Cost  *TurnCost `msgpack:"cost,omitempty" json:"cost,omitempty"`
	Model string    `msgpack:"model,omitempty" json:"model,omitempty"`
	// Exchange names the exact bytes of the compaction turn's provider
	// call, kept as blobs, when the provider exposes them.
	Exchange *ExchangeRef `msgpack:"exchange,omitempty" json:"exchange,omitempty"`
	// Fallback, when set, says why the summary is the extractive one
	// though the model was asked (it answered with no summary).
	Fallback string `msgpack:"fallback,omitempty" json:"fallback,omitempty"`
}

// CompactedByModel is ContextCompacted.By for a summary the model wrote.
const CompactedByModel = "model"

// Validate requires UpTo to name a fact.
func (p ContextCompacted) Validate() error {
	if p.UpTo == 0 {
		return errors.New("missing up_to")
	}
	return nil
}

// BudgetExhausted is the payload of budget.exhausted.
type BudgetExhausted struct {
	// Resource names the budget, such as "tokens" or "turns".
	Resource string `msgpack:"resource,omitempty" json:"resource,omitempty"`
	Limit    int64  `msgpack:"limit,omitempty" json:"limit,omitempty"`
	Used     int64  `msgpack:"used,omitempty" json:"used,omitempty"`
}

// Validate requires a resource.
func (p BudgetExhausted) Validate() error { return required("resource", p.Resource) }

// ErrorClass says what an expected failure means for the next step.
type ErrorClass string

// The error classes.
const (
	// ClassTransient: retry within the policy (a 429, a 503).
	ClassTransient ErrorClass = "transient"
	// ClassTimeout: the outcome is unknown; reconcile, never resubmit blindly.
	ClassTimeout ErrorClass = "timeout"
	// ClassTransport: the outcome is unknown; reconcile.
	ClassTransport ErrorClass = "transport"
	// ClassPermission: escalate to a person.
	ClassPermission ErrorClass = "permission"
	// ClassNotFound: escalate to a person.
	ClassNotFound ErrorClass = "not_found"
	// ClassInvalidOutput: malformed or invented data; escalate.
	ClassInvalidOutput ErrorClass = "invalid_output"
	// ClassBusiness: the remote said no; escalate.
	ClassBusiness ErrorClass = "business"
	// ClassCancelled: stop.
	ClassCancelled ErrorClass = "cancelled"
	// ClassContextOverflow: the model's server refused a conversation
	// longer than its context; compact it and try once more.
	ClassContextOverflow ErrorClass = "context_overflow"
)

// Validate accepts the known classes.
func (c ErrorClass) Validate() error {
	return oneOf("class", c, ClassTransient, ClassTimeout, ClassTransport, ClassPermission,
		ClassNotFound, ClassInvalidOutput, ClassBusiness, ClassCancelled, ClassContextOverflow)
}

// TransitionFailed is the payload of transition.failed.
type TransitionFailed struct {
	// Key is the transition that failed.
	Key string `msgpack:"key,omitempty" json:"key,omitempty"`
	// Class is set for an expected failure and empty for a defect.
	Class   ErrorClass `msgpack:"class,omitempty" json:"class,omitempty"`
	Message string     `msgpack:"message,omitempty" json:"message,omitempty"`
	Attempt int        `msgpack:"attempt,omitempty" json:"attempt,omitempty"`
	// Defect is true for a panic or an error marked as a bug.
	Defect bool `msgpack:"defect,omitempty" json:"defect,omitempty"`
	// Attempts are the failed calls of a model turn, as logs written
	// before each was a fact of its own (model.call_failed) kept them; a
	// failure now records none here.
	Attempts []ModelAttempt `msgpack:"attempts,omitempty" json:"attempts,omitempty"`
}

// Validate requires a key, and a known class when one is set.
func (p TransitionFailed) Validate() error {
	err := required("key", p.Key)
	if p.Class != "" {
		err = errors.Join(err, p.Class.Validate())
	}
	return err
}

// ThreadForked is the payload of thread.forked: this thread continues the
// log of thread From as it was up to and including seq At.
type ThreadForked struct {
	From string `msgpack:"from,omitempty" json:"from,omitempty"`
	At   uint64 `msgpack:"at,omitempty" json:"at,omitempty"`
	// Hash is the hash of From's fact At when the fork was made (hex):
	// what the copied facts chained to there. An audit of the fork checks
	// From against it while From is kept. Empty in forks made before it
	// was recorded.
	Hash string `msgpack:"hash,omitempty" json:"hash,omitempty"`
	// Rerun, when set, makes the fork a rerun of From against another
	// model (see RerunTurn).
	Rerun *Rerun `msgpack:"rerun,omitempty" json:"rerun,omitempty"`
}

// Validate requires the thread forked from.
func (p ThreadForked) Validate() error { return required("from", p.From) }

// WorkspaceRestored is the payload of workspace.restored: the paths an
// undo put back as they were when the thread was at seq To.
type WorkspaceRestored struct {
	// To is the seq the workspace was restored to: the changes of the
	// facts after it were undone.
	To uint64 `msgpack:"to,omitempty" json:"to,omitempty"`
	// Restored lists each path with the digest the thread had left there
	// (Before) and the digest restored (After; "" where the path was
	// removed because it did not exist at To), and, where the log recorded
	// them, the permission bits the thread left and those set
	// (BeforeMode, AfterMode: an undo keeps bits changed since and the
	// setuid, setgid and sticky bits).
	Restored []PathChange `msgpack:"restored,omitempty" json:"restored,omitempty"`
	By       string       `msgpack:"by,omitempty" json:"by,omitempty"`
}

// Validate requires at least one path, each named.
func (p WorkspaceRestored) Validate() error {
	if len(p.Restored) == 0 {
		return errors.New("missing restored paths")
	}
	for i, c := range p.Restored {
		if c.Path == "" {
			return fmt.Errorf("restored[%d]: missing path", i)
		}
	}
	return nil
}

// WorkspaceChanged is the payload of workspace.changed: between the
// thread's last observation of the workspace (at seq Since, hash Before)
// and the reading before action ActionID (hash After), the workspace
// changed, and no action of the thread was running: a person editing, a
// process outside harness, a server that was never called. By is who made
// the change as far as the record knows: "unknown". Changed is the
// inventory, as an action's observation has it (see Observation.Changed);
// it is empty when the earlier listing was not kept, and the hashes still
// say that something changed.
type WorkspaceChanged struct {
	ActionID string       `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	By       string       `msgpack:"by,omitempty" json:"by,omitempty"`
	Since    uint64       `msgpack:"since,omitempty" json:"since,omitempty"`
	Before   string       `msgpack:"before,omitempty" json:"before,omitempty"`
	After    string       `msgpack:"after,omitempty" json:"after,omitempty"`
	Changed  []PathChange `msgpack:"changed,omitempty" json:"changed,omitempty"`
}

// ByUnknown is who made a change the record cannot attribute.
const ByUnknown = "unknown"

// Validate requires the action, who (for now only "unknown"), the seq of
// the earlier observation, two different hashes and named paths.
func (p WorkspaceChanged) Validate() error {
	err := errors.Join(required("action_id", p.ActionID), oneOf("by", p.By, ByUnknown),
		required("before", p.Before), required("after", p.After))
	if p.Since == 0 {
		err = errors.Join(err, errors.New("missing since"))
	}
	if p.Before != "" && p.Before == p.After {
		err = errors.Join(err, fmt.Errorf("before and after are the same hash %s: nothing changed", p.Before))
	}
	for i, c := range p.Changed {
		if c.Path == "" {
			err = errors.Join(err, fmt.Errorf("changed[%d]: missing path", i))
		}
	}
	return err
}

// PolicySet is the payload of policy.set: which confirmations are
// answered without asking a person, from this fact on. It replaces the
// policy set before it.
type PolicySet struct {
	// Approve is the approval mode: ask, writes or all ("" is ask).
	Approve string `msgpack:"approve,omitempty" json:"approve,omitempty"`
	// Allow and Deny are tool patterns ("TOOL" or "TOOL:GLOB"); deny wins.
	Allow []string `msgpack:"allow,omitempty" json:"allow,omitempty"`
	Deny  []string `msgpack:"deny,omitempty" json:"deny,omitempty"`
	// By is who set the policy: the person whose command or answer
	// posted it. Where each rule came from is in Sources.
	By string `msgpack:"by,omitempty" json:"by,omitempty"`
	// Sources say where each rule came from (see RuleSource); nil in logs
	// written before sources were recorded.
	Sources []RuleSource `msgpack:"sources,omitempty" json:"sources,omitempty"`
	// Ignored are the settings files whose approval rules were left out,
	// their content not being trusted: the file and the keys.
	Ignored []SettingsSource `msgpack:"ignored,omitempty" json:"ignored,omitempty"`
}

// Validate accepts the approval modes and requires every pattern to name
// a tool.
func (p PolicySet) Validate() error {
	if p.Approve != "" {
		if err := oneOf("approve", p.Approve, "ask", "writes", "all"); err != nil {
			return err
		}
	}
	for _, ps := range [][]string{p.Allow, p.Deny} {
		for i, s := range ps {
			if s == "" || strings.HasPrefix(s, ":") {
				return fmt.Errorf("pattern %d %q: name a tool (or *), as in write_file:docs/*", i, s)
			}
		}
	}
	return nil
}

func required(field, v string) error {
	if v == "" {
		return fmt.Errorf("missing %s", field)
	}
	return nil
}

func oneOf[T ~string](field string, v T, allowed ...T) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	if v == "" {
		return fmt.Errorf("missing %s", field)
	}
	return fmt.Errorf("%s %q is not one of %q", field, string(v), allowed)
}
