package action

import "context"

// Output is given an adapter's output as it comes, while the action runs:
// each piece read from a command's stdout or stderr (stream is "stdout"
// or "stderr"), raw — it is the command's, and may hold anything; escape
// it before it reaches a terminal. It is called from the goroutines that
// read the output, one per stream, and must return quickly. What is given
// is ephemeral: the report keeps the output as always.
// thread is the thread whose action it is (see WithThread), "" when
// the context names none.
type Output func(thread, actionID, stream string, p []byte)

// StreamAsked is the stream of an Output that tells a question the action
// put to a person (Elicit): p is its question.asked payload as JSON, once
// recorded. It is not the command's output.
const StreamAsked = "asked"

// outputKey carries the Output WithOutput sets.
type outputKey struct{}

// WithOutput returns a context under which an adapter that can (the
// built-in run_command) gives its output to show as it comes.
func WithOutput(ctx context.Context, show Output) context.Context {
	return context.WithValue(ctx, outputKey{}, show)
}

// threadKey carries the thread WithThread sets.
type threadKey struct{}

// WithThread returns a context that names the thread whose transition
// runs under it (the runtime sets it): an Output is told whose output it
// is given, also in a tree whose threads share one Output.
func WithThread(ctx context.Context, thread string) context.Context {
	return context.WithValue(ctx, threadKey{}, thread)
}

// ThreadOf returns the thread ctx names (WithThread), "" when none.
func ThreadOf(ctx context.Context) string {
	t, _ := ctx.Value(threadKey{}).(string)
	return t
}

// OutputOf returns the Output of ctx (WithOutput), nil when none.
func OutputOf(ctx context.Context) Output {
	f, _ := ctx.Value(outputKey{}).(Output)
	return f
}
