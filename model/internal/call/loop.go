package call

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Events is a stream of one provider's server-sent events, as both SDKs
// return it.
type Events[E any] interface {
	Next() bool
	Current() E
	Err() error
	Close() error
}

// Accumulator folds a provider's streamed events into a decision.
type Accumulator[E any] interface {
	// Add folds one event in, calling onText (when not nil) with each
	// piece of text it carries.
	Add(ev E, onText func(string))
	// Finished reports whether the stream said the turn is complete.
	Finished() bool
	// Decision is the turn the events made, with its stop reason.
	Decision() model.Decision
}

// Loop is one turn of a provider, streamed or not: the request is built,
// sent through a Recorder, its answer decoded, checked and classified the
// same way for every provider. P is the provider's request, R its
// response and E its stream event; the fields are the provider's own
// pieces.
type Loop[P, R, E any] struct {
	Endpoint Endpoint
	Options  model.Options
	// Params builds the request of a turn; asks reports whether the
	// AskTool pseudo-tool was offered.
	Params func(req model.Request) (params P, asks bool, err error)
	// Send sends a request with mw as its innermost middleware.
	Send func(ctx context.Context, p P, mw Middleware) (R, error)
	// Decode reads a response; a response that is not the API's shape
	// is an error matching ErrMalformed.
	Decode func(res R) (model.Decision, error)
	// Open starts a streamed request with mw as its innermost middleware.
	Open func(ctx context.Context, p P, mw Middleware) Events[E]
	// NewAccumulator returns an empty accumulator of one stream.
	NewAccumulator func() Accumulator[E]
	// CutOff reports whether a stop reason says the answer was cut off
	// at a limit (OpenAI's "length", Anthropic's "max_tokens") rather
	// than finished.
	CutOff func(reason string) bool
}

// Middleware is the signature of both SDKs' middlewares (Recorder's).
type Middleware = func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// Turn takes one model turn; with Options.OnText it streams (see Stream).
func (l Loop[P, R, E]) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	if l.Options.OnText != nil {
		return l.Stream(ctx, req, l.Options.OnText)
	}
	p, asks, err := l.Params(req)
	if err != nil {
		return model.Decision{}, err
	}
	rec := NewRecorder(l.Endpoint.Provider)
	cctx, cancel := l.Options.CallContext(ctx)
	defer cancel()
	res, err := l.Send(cctx, p, rec.Middleware)
	if err != nil {
		return model.Decision{}, l.Endpoint.Fail(ctx, rec, err)
	}
	d, err := l.Decode(res)
	if err != nil {
		return model.Decision{}, l.Endpoint.Fail(ctx, rec, err)
	}
	return l.finish(rec, d, asks)
}

// Stream takes one model turn as a stream of server-sent events, calling
// onText with each piece of text as it arrives. The decision is returned
// when the stream says the turn is complete; a stream that is cut off or
// ends before that is a transient error matching model.ErrStreamCut.
func (l Loop[P, R, E]) Stream(ctx context.Context, req model.Request, onText func(string)) (model.Decision, error) {
	p, asks, err := l.Params(req)
	if err != nil {
		return model.Decision{}, err
	}
	rec := NewRecorder(l.Endpoint.Provider)
	cctx, cancel := l.Options.CallContext(ctx)
	defer cancel()
	stream := l.Open(cctx, p, rec.Middleware)
	defer stream.Close()
	idle := l.Options.StreamIdle
	if idle == 0 {
		idle = model.DefaultStreamIdle
	}
	// A server that stops sending without closing the stream would hold
	// the turn for ever: past idle with nothing new, the call is
	// cancelled and the stream counts as cut off.
	var stalled atomic.Bool
	var watch *time.Timer
	if idle > 0 {
		watch = time.AfterFunc(idle, func() { stalled.Store(true); cancel() })
		defer watch.Stop()
	}
	acc := l.NewAccumulator()
	for stream.Next() {
		if watch != nil && !watch.Stop() {
			break // it fired: the call is being cancelled
		}
		acc.Add(stream.Current(), onText)
		if watch != nil {
			watch.Reset(idle)
		}
	}
	return l.end(ctx, rec, stream.Err(), acc, asks, stalled.Load(), idle)
}

// end is the end of a stream: its error, a stall, a stream that ended
// before the turn did, or the turn.
func (l Loop[P, R, E]) end(ctx context.Context, rec *Recorder, err error, acc Accumulator[E], asks, stalled bool, idle time.Duration) (model.Decision, error) {
	if stalled {
		return model.Decision{}, l.Endpoint.FailStream(ctx, rec, fmt.Errorf("%w: nothing came for %v", model.ErrStreamCut, idle))
	}
	if err != nil {
		return model.Decision{}, l.Endpoint.FailStream(ctx, rec, err)
	}
	if !acc.Finished() {
		return model.Decision{}, l.Endpoint.FailStream(ctx, rec, model.ErrStreamCut)
	}
	return l.finish(rec, acc.Decision(), asks)
}

// finish is the end of every turn that came whole: an answer cut off at a
// limit is returned as cut — its text kept, the tool calls that had begun
// named and not returned as calls (their arguments are incomplete) — so
// that the runtime records it and asks the model to go on; any other
// becomes the decision, with the AskTool call read as a question. The
// exchange is attached either way.
func (l Loop[P, R, E]) finish(rec *Recorder, d model.Decision, asks bool) (model.Decision, error) {
	if l.CutOff != nil && l.CutOff(d.StopReason) {
		cut := &facts.Cut{}
		for _, c := range d.ToolCalls {
			cut.Calls = append(cut.Calls, c.Name)
		}
		d.ToolCalls, d.Question, d.Cut = nil, nil, cut
	} else {
		d = model.AsQuestion(d, asks)
	}
	d.Exchange = rec.Exchange()
	return d, nil
}
