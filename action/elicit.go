package action

import (
	"context"

	"github.com/seed-7cc7a084/harness/facts"
)

// Elicit puts a question to a person on behalf of the action running under
// its context — an MCP server's elicitation during a call — and waits for
// the answer: the runtime records q (question.asked, with q.Elicit naming
// the action) in the thread, where every front end shows it, and returns
// the answer a person gives from any of them (question.answered). It
// fills q.RequestID. It returns the context's error when the action is
// cancelled or stopped first, and an error when the question cannot be
// recorded; nothing else answers for a person.
type Elicit func(ctx context.Context, q facts.QuestionAsked) (facts.QuestionAnswered, error)

// askKey carries the Elicit WithElicit sets.
type elicitKey struct{}

// WithElicit returns a context under which an adapter may ask a person
// (the runtime sets it for each action it runs).
func WithElicit(ctx context.Context, ask Elicit) context.Context {
	return context.WithValue(ctx, elicitKey{}, ask)
}

// ElicitOf returns the Elicit of ctx (WithElicit), nil when nobody can be asked.
func ElicitOf(ctx context.Context) Elicit {
	f, _ := ctx.Value(elicitKey{}).(Elicit)
	return f
}
