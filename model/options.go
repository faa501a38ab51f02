package model

import (
	"context"
	"errors"
	"net/http"
	"os"
	"time"
)

// ErrSpec reports a model that cannot be named so: an unknown provider, or
// a missing model name or file.
var ErrSpec = errors.New("bad model spec")

// Streamer is a Model that can stream a turn's text as it arrives. The
// Decision is returned only when the turn is complete; a stream that stops
// early returns an error and no decision, so nothing of a partial turn is
// recorded and the turn runs again. The text already given to onText is
// then not part of any decision: a retried turn streams again from its
// start (see ErrStreamCut).
type Streamer interface {
	Model
	// Stream takes a turn like Turn, calling onText with each piece of
	// the model's text as it arrives, in order, from the calling
	// goroutine.
	Stream(ctx context.Context, req Request, onText func(delta string)) (Decision, error)
}

// Options configure a real provider (the packages model/openai and
// model/anthropic read them). Make them with NewOptions from Option values;
// the zero Options are the defaults, except that LookupEnv is then nil
// (NewOptions sets os.LookupEnv).
type Options struct {
	// HTTPClient is the client requests go through; nil is the provider's
	// default.
	HTTPClient *http.Client
	// BaseURL, when not nil, is the API's base URL, in place of the
	// provider's variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL).
	BaseURL *string
	// APIKey, when not nil, is the API key, in place of the provider's
	// variable (OPENAI_API_KEY, ANTHROPIC_API_KEY); "" is no key.
	APIKey *string
	// OnText, when set, makes Turn stream: it is called with each piece of
	// the model's text as it arrives (see Streamer).
	OnText func(delta string)
	// MaxTokens bounds the tokens the model writes in one turn; 0 is the
	// provider's default.
	MaxTokens int64
	// Timeout bounds one call, from sending the request to the last byte
	// of the response; 0 leaves it to the caller's context.
	Timeout time.Duration
	// StreamIdle bounds the wait between two events of a streamed turn
	// (and for the first after the response began); past it the stream
	// counts as cut off (ErrStreamCut: transient, the turn runs again).
	// 0 is DefaultStreamIdle; negative is no bound.
	StreamIdle time.Duration
	// NoAskTool stops offering the AskTool pseudo-tool.
	NoAskTool bool
	// LookupEnv is where environment variables are read from.
	LookupEnv func(string) (string, bool)
}

// Option sets a field of Options.
type Option func(*Options)

// NewOptions returns the options opts set, over the defaults
// (LookupEnv is os.LookupEnv).
func NewOptions(opts ...Option) Options {
	o := Options{LookupEnv: os.LookupEnv}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Env returns an environment variable through LookupEnv, "" when it is
// not set.
func (o Options) Env(name string) string {
	if o.LookupEnv == nil {
		return ""
	}
	v, _ := o.LookupEnv(name)
	return v
}

// Endpoint returns the base URL and the API key a provider uses: the
// options' when given, else the variables baseVar and keyVar.
func (o Options) Endpoint(baseVar, keyVar string) (base, key string) {
	base, key = o.Env(baseVar), o.Env(keyVar)
	if o.BaseURL != nil {
		base = *o.BaseURL
	}
	if o.APIKey != nil {
		key = *o.APIKey
	}
	return base, key
}

// CallContext bounds one call by Timeout, if it is set.
func (o Options) CallContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.Timeout > 0 {
		return context.WithTimeout(ctx, o.Timeout)
	}
	return context.WithCancel(ctx)
}

// WithHTTPClient sets Options.HTTPClient: the HTTP client requests go
// through; by default, the provider's.
func WithHTTPClient(c *http.Client) Option { return func(o *Options) { o.HTTPClient = c } }

// WithBaseURL sets Options.BaseURL: the API's base URL, in place of
// OPENAI_BASE_URL or ANTHROPIC_BASE_URL.
func WithBaseURL(u string) Option { return func(o *Options) { o.BaseURL = &u } }

// WithAPIKey sets Options.APIKey: the API key, in place of OPENAI_API_KEY
// or ANTHROPIC_API_KEY.
func WithAPIKey(k string) Option { return func(o *Options) { o.APIKey = &k } }

// WithStream makes Turn stream: onText is called with each piece of the
// model's text as it arrives (see Streamer). A turn that is retried after
// a failure streams again from its start; the retry loop's notice of the
// wait (harness.Services.OnModelWait) says so, with an error that
// matches ErrStreamCut when the stream was cut off.
func WithStream(onText func(delta string)) Option { return func(o *Options) { o.OnText = onText } }

// WithMaxTokens bounds the tokens the model writes in one turn. Anthropic
// requires a bound and defaults to 4096; OpenAI sends none unless this is
// given (as max_completion_tokens).
func WithMaxTokens(n int64) Option { return func(o *Options) { o.MaxTokens = n } }

// WithTimeout bounds one call, from sending the request to the last byte
// of the response. A call that runs out of time fails with class timeout.
// By default only the caller's context bounds a call.
func WithTimeout(d time.Duration) Option { return func(o *Options) { o.Timeout = d } }

// DefaultStreamIdle is the longest wait between two events of a streamed
// turn when WithStreamIdle does not say: a server that stalls longer is
// taken as gone.
const DefaultStreamIdle = 5 * time.Minute

// WithStreamIdle sets Options.StreamIdle: the longest wait between two
// events of a streamed turn before the stream counts as cut off; negative
// is no bound.
func WithStreamIdle(d time.Duration) Option { return func(o *Options) { o.StreamIdle = d } }

// WithoutAskTool stops offering the AskTool pseudo-tool: the model can
// then only ask a question in its text.
func WithoutAskTool() Option { return func(o *Options) { o.NoAskTool = true } }

// WithLookupEnv sets where environment variables are read from; by
// default, os.LookupEnv.
func WithLookupEnv(f func(string) (string, bool)) Option {
	return func(o *Options) { o.LookupEnv = f }
}
