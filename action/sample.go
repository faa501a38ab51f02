package action

import (
	"context"

	"github.com/seed-7cc7a084/harness/facts"
)

// Sample runs a turn of the thread's model on behalf of the action
// running under its context — an MCP server's sampling request during a
// call — and returns its answer: the runtime checks that the thread's
// budget covers the turn, runs it with no tools, records it
// (model.sampled) and counts it in the budget. It returns an error when
// the turn is refused (the budget cannot cover it, the action asked too
// often) or cannot be recorded; a failed model call is recorded and
// returned as an error too.
type Sample func(ctx context.Context, r SampleRequest) (SampleResult, error)

// SampleRequest is a server's request for a model turn, as its client
// bounded it.
type SampleRequest struct {
	// ActionID is the action whose call the request came in; Server the
	// server's name in the settings; N counts the call's requests, from 1.
	ActionID string
	Server   string
	// System is the server's system prompt (at most
	// facts.MaxSampledSystem bytes); Messages its messages, text only,
	// user and assistant.
	System   string
	Messages []facts.Message
	// MaxTokens bounds the answer (the settings' cap applied);
	// AskedMaxTokens is what the server asked for.
	MaxTokens      int64
	AskedMaxTokens int64
	// IncludeContext is what the server asked to include of the
	// conversation; none is included.
	IncludeContext string
}

// SampleResult is the model's answer to a sampling request: its text,
// the model that answered, and why it stopped (Cut: at MaxTokens).
type SampleResult struct {
	Text  string
	Model string
	Cut   bool
}

// sampleKey carries the Sample WithSample sets.
type sampleKey struct{}

// WithSample returns a context under which an adapter may run a sampling
// turn (the runtime sets it for each action it runs).
func WithSample(ctx context.Context, s Sample) context.Context {
	return context.WithValue(ctx, sampleKey{}, s)
}

// SampleOf returns the Sample of ctx (WithSample), nil when no model turn
// can be run there.
func SampleOf(ctx context.Context) Sample {
	f, _ := ctx.Value(sampleKey{}).(Sample)
	return f
}
