package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// ErrSpec reports a model spec that Open cannot read: an unknown provider
// or a missing model name or file.
var ErrSpec = errors.New("bad model spec")

// SpecForms are the forms of a model spec Open accepts.
const SpecForms = "scripted:FILE, openai:MODEL or anthropic:MODEL"

// Open returns the model a spec names:
//
//	scripted:FILE      a script of decisions (see Scripted)
//	openai:MODEL       an OpenAI-compatible chat completions API (see OpenAI)
//	anthropic:MODEL    the Anthropic messages API (see Anthropic)
//
// The spec is cut at its first colon, so a model name may hold colons
// ("openai:llama3.1:8b" for Ollama). Options configure the real providers;
// a scripted model ignores them. A spec Open cannot read is an error
// wrapping ErrSpec that names the spec and the forms accepted.
func Open(spec string, opts ...Option) (Model, error) {
	scheme, name, ok := strings.Cut(spec, ":")
	if !ok {
		return nil, fmt.Errorf("model spec %q: %w: no provider; want %s", spec, ErrSpec, SpecForms)
	}
	if name == "" {
		what := "model name"
		if scheme == "scripted" {
			what = "file"
		}
		return nil, fmt.Errorf("model spec %q: %w: no %s; want %s", spec, ErrSpec, what, SpecForms)
	}
	switch scheme {
	case "scripted":
		return LoadScript(name)
	case "openai":
		return NewOpenAI(name, opts...)
	case "anthropic":
		return NewAnthropic(name, opts...)
	}
	return nil, fmt.Errorf("model spec %q: %w: unknown provider %q; want %s", spec, ErrSpec, scheme, SpecForms)
}

// Streamer is a Model that can stream a turn's text as it arrives. The
// Decision is returned only when the turn is complete; a stream that stops
// early returns an error and no decision, so nothing of a partial turn is
// recorded and the turn runs again.
type Streamer interface {
	Model
	// Stream takes a turn like Turn, calling onText with each piece of
	// the model's text as it arrives, in order, from the calling
	// goroutine.
	Stream(ctx context.Context, req Request, onText func(delta string)) (Decision, error)
}

// Option configures a real provider.
type Option func(*options)

type options struct {
	client    *http.Client
	baseURL   *string
	apiKey    *string
	onText    func(string)
	maxTokens int64
	timeout   time.Duration
	noAsk     bool
	lookupEnv func(string) (string, bool)
}

func newOptions(opts []Option) options {
	o := options{lookupEnv: os.LookupEnv}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// env returns an environment variable, "" when it is not set.
func (o options) env(name string) string {
	v, _ := o.lookupEnv(name)
	return v
}

// WithHTTPClient sets the HTTP client requests go through; by default,
// the SDK's.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithBaseURL sets the API's base URL, in place of OPENAI_BASE_URL or
// ANTHROPIC_BASE_URL.
func WithBaseURL(u string) Option { return func(o *options) { o.baseURL = &u } }

// WithAPIKey sets the API key, in place of OPENAI_API_KEY or
// ANTHROPIC_API_KEY.
func WithAPIKey(k string) Option { return func(o *options) { o.apiKey = &k } }

// WithStream makes Turn stream: onText is called with each piece of the
// model's text as it arrives (see Streamer). A turn that is retried after
// a failure streams again from its start.
func WithStream(onText func(delta string)) Option { return func(o *options) { o.onText = onText } }

// WithMaxTokens bounds the tokens the model writes in one turn. Anthropic
// requires a bound and defaults to 4096; OpenAI sends none unless this is
// given (as max_completion_tokens).
func WithMaxTokens(n int64) Option { return func(o *options) { o.maxTokens = n } }

// WithTimeout bounds one call, from sending the request to the last byte
// of the response. A call that runs out of time fails with class timeout.
// By default only the caller's context bounds a call.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithoutAskTool stops offering the AskTool pseudo-tool: the model can
// then only ask a question in its text.
func WithoutAskTool() Option { return func(o *options) { o.noAsk = true } }

// WithLookupEnv sets where environment variables are read from; by
// default, os.LookupEnv.
func WithLookupEnv(f func(string) (string, bool)) Option {
	return func(o *options) { o.lookupEnv = f }
}

// callContext bounds one call by the WithTimeout duration, if any.
func (o options) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.timeout > 0 {
		return context.WithTimeout(ctx, o.timeout)
	}
	return context.WithCancel(ctx)
}
