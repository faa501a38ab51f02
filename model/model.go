package model

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
)

// Model takes model turns.
type Model interface {
	// Turn returns the model's decision for req. The error, if any, should
	// carry a class (see Error); an unclassified error is treated as
	// business: the remote said no.
	Turn(ctx context.Context, req Request) (Decision, error)
}

// Request is everything the model is shown for one turn.
type Request struct {
	// Thread is the thread the turn belongs to.
	Thread string
	// Turn counts the model turns of the thread, from 1.
	Turn int
	// System is the system prompt.
	System string
	// Tools are the tools the model may call.
	Tools []facts.ToolSchema
	// Messages is the conversation so far, oldest first.
	Messages []facts.Message
	// MaxTokens, when above 0, bounds the tokens the model writes in this
	// turn, below the model's own bound (model.WithMaxTokens) when that
	// is higher (an MCP server's sampling turn is bounded so).
	MaxTokens int64
}

// Decision is what the model decided in one turn: text, tool calls, or a
// question (the last two may come with text), and the tokens it used.
type Decision struct {
	Text      string           `json:"text,omitempty"`
	ToolCalls []facts.ToolCall `json:"tool_calls,omitempty"`
	Question  *facts.Question  `json:"question,omitempty"`
	Usage     facts.Usage      `json:"usage,omitzero"`
	// Model, when set, is the model spec that answered ("anthropic:
	// claude-sonnet-4-5"; see WithSpec): the turn is priced by it.
	Model string `json:"model,omitempty"`
	// StopReason is why the model stopped, as the provider said it
	// ("stop", "tool_calls", "end_turn", "length"); "" from a scripted
	// model.
	StopReason string `json:"stop_reason,omitempty"`
	// Cut is set when the server cut the answer off at a limit (OpenAI's
	// finish_reason "length", Anthropic's stop_reason "max_tokens") before
	// it was complete: Text is what came, and the tool calls that had
	// begun are named in Cut, not in ToolCalls (their arguments are
	// incomplete). Such an answer is no decision to act on; the runtime
	// asks the model to go on.
	Cut *facts.Cut `json:"cut,omitempty"`
	// Exchange is the HTTP exchange of the turn, byte for byte, from a
	// real provider (nil from a scripted one). It is not part of the
	// decision's JSON.
	Exchange *Exchange `json:"-"`
}

// Validate refuses a decision that says nothing, or asks a question and
// calls tools at once.
func (d Decision) Validate() error {
	switch {
	case d.Question != nil && len(d.ToolCalls) > 0:
		return errors.New("a decision asks a question and calls tools at once")
	case d.Question != nil && d.Question.Text == "":
		return errors.New("a question with no text")
	case d.Cut != nil && (d.Question != nil || len(d.ToolCalls) > 0):
		return errors.New("a decision cut off at a limit carries tool calls or a question to act on")
	case d.Cut != nil:
	case d.Text == "" && d.Question == nil && len(d.ToolCalls) == 0:
		return errors.New("an empty decision: no text, tool call or question")
	}
	for i, c := range d.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no tool name", i+1)
		}
	}
	return d.Usage.Validate()
}

// Error is a model failure with its class.
type Error struct {
	Class facts.ErrorClass
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("model: %s: %v", e.Class, e.Err) }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ErrorClass returns the class, so the runtime can record it.
func (e *Error) ErrorClass() facts.ErrorClass { return e.Class }

// Classify returns the class an error carries (an error with an
// ErrorClass method anywhere in its chain), and ok false when it carries
// none.
func Classify(err error) (facts.ErrorClass, bool) {
	var c interface{ ErrorClass() facts.ErrorClass }
	if errors.As(err, &c) {
		return c.ErrorClass(), true
	}
	return "", false
}

// ErrStreamCut is the error of a streamed turn whose stream stopped — cut
// off, or ended — before the turn was complete. It is transient: a model
// turn changes nothing in the world and nothing of it was recorded, so the
// turn runs again, from its start. Text already streamed is not part of
// any decision.
var ErrStreamCut = errors.New("the stream ended before the turn was complete")

// IsTransient reports whether err is a transient failure, worth retrying.
func IsTransient(err error) bool {
	c, _ := Classify(err)
	return c == facts.ClassTransient
}

// ErrContextOverflow matches the error of a turn the server refused
// because the conversation is longer than its context (llama.cpp's
// "exceeds the available context size", OpenAI's and vLLM's "maximum
// context length", Anthropic's "prompt is too long", a 413). Its class is
// context_overflow: the runtime compacts the conversation and tries the
// turn once more.
var ErrContextOverflow = errors.New("the conversation is longer than the model's context")
