// Package call is one HTTP call of a provider to its API, as the
// providers in model/openai and model/anthropic make it: a Recorder keeps
// the bytes exchanged and the wait the server asked for, and an Endpoint
// says what a failed call means — its class (see model.CallError) and what
// to check. It imports no vendor SDK: what is particular to one SDK comes
// in through Endpoint.StreamError.
package call

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Endpoint is where a provider's calls go, and what its failures are
// explained with.
type Endpoint struct {
	Provider string // "openai"
	Model    string
	BaseURL  string
	KeyVar   string // "OPENAI_API_KEY"
	BaseVar  string // "OPENAI_BASE_URL"
	// StreamError, when set, returns the data of an error event that
	// ended a stream, from the SDK's error.
	StreamError func(err error) (data []byte, ok bool)
}

// ErrMalformed: a response that is not what the API sends.
var ErrMalformed = errors.New("malformed response")

// Fail classifies a failed call (see model.CallError) and wraps it with
// what was exchanged. ctx is the caller's context; a call deadline of the
// provider's own (model.WithTimeout) is inside it.
func (e Endpoint) Fail(ctx context.Context, rec *Recorder, err error) error {
	return e.fail(ctx, rec, err, false)
}

// FailStream is Fail for a streamed call: a stream that is cut off, or
// ends before the turn does, is transient (model.ErrStreamCut).
func (e Endpoint) FailStream(ctx context.Context, rec *Recorder, err error) error {
	return e.fail(ctx, rec, err, true)
}

func (e Endpoint) fail(ctx context.Context, rec *Recorder, err error, stream bool) error {
	ce := &model.CallError{Provider: e.Provider, Exchange: rec.Exchange(), Err: err, RetryAfter: rec.RetryAfter()}
	if ce.Exchange != nil {
		ce.Status = ce.Exchange.Status
	}
	class := e.classify(ctx, ce, err, stream)
	return &model.Error{Class: class, Err: ce}
}

func (e Endpoint) classify(ctx context.Context, ce *model.CallError, err error, stream bool) facts.ErrorClass {
	if cerr := ctx.Err(); cerr != nil {
		// The caller gave up: that is theirs to report, whatever the
		// connection said as it was torn down.
		if !errors.Is(err, cerr) {
			ce.Err = fmt.Errorf("%w (%v)", cerr, err)
		}
		if errors.Is(cerr, context.DeadlineExceeded) {
			return facts.ClassTimeout
		}
		return facts.ClassCancelled
	}
	switch status := ce.Status; {
	case status >= 400:
		var body []byte
		if ce.Exchange != nil {
			body = ce.Exchange.Response
		}
		ce.Type, ce.Message = apiError(body)
		ce.Err = nil // the SDK's error says no more than the body
		switch {
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			ce.Message = join(ce.Message, "check "+e.KeyVar)
			return facts.ClassPermission
		case status == http.StatusNotFound:
			ce.Message = join(ce.Message, fmt.Sprintf("check the model name %q and %s (%s)", e.Model, e.BaseVar, e.BaseURL))
			return facts.ClassNotFound
		case transientStatus(status):
			return facts.ClassTransient
		case overflow(status, ce.Type, ce.Message):
			ce.Err = model.ErrContextOverflow
			ce.Message = join(ce.Message, "the conversation is over the context size of "+e.BaseURL+"; a thread compacts it and tries the turn once more (set a context window a little under the server's so that it compacts before it fills, or raise the server's)")
			return facts.ClassContextOverflow
		}
		return facts.ClassBusiness
	case status == 0:
		if isTimeout(err) {
			ce.Message = "no response in time from " + e.BaseURL
			return facts.ClassTimeout
		}
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			ce.Message = fmt.Sprintf("cannot connect to %s: is the server running? check %s", e.BaseURL, e.BaseVar)
		} else {
			ce.Message = "no response from " + e.BaseURL + ": the connection failed"
		}
		// A model turn changes nothing in the world: a call that got no
		// response — refused (a server restarting), or reset — is made
		// again, as a cut stream is.
		return facts.ClassTransient
	}
	// A 2xx response came and could not be used.
	if typ, msg, ok := e.streamError(err); ok {
		ce.Type, ce.Message, ce.Err = typ, msg, nil
		if transientType(typ) {
			return facts.ClassTransient
		}
		return facts.ClassBusiness
	}
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, ErrMalformed), errors.As(err, &syntax), errors.As(err, &typeErr),
		strings.Contains(err.Error(), "error parsing response json"):
		// The body came whole and is not what the API sends.
	case isTimeout(err):
		ce.Message = "the response stopped coming in time"
		return facts.ClassTimeout
	case errors.Is(err, model.ErrStreamCut), errors.Is(err, io.ErrUnexpectedEOF), isNetError(err),
		strings.Contains(err.Error(), "error reading response body"):
		// A model turn changes nothing in the world, and nothing of a
		// cut response is recorded: the turn can run again, streamed or
		// not.
		if stream && !errors.Is(err, model.ErrStreamCut) {
			ce.Err = fmt.Errorf("%w: %w", model.ErrStreamCut, err)
		}
		if !stream {
			ce.Message = "the response from " + e.BaseURL + " was cut off"
		}
		return facts.ClassTransient
	}
	// Not JSON, or not the shape the API sends.
	ce.Message = "the response is not a valid " + e.Provider + " response"
	return facts.ClassInvalidOutput
}

// overflowTypes and overflowPhrases are how servers say a conversation is
// longer than the model's context: llama.cpp's llama-server, OpenAI, vLLM,
// Ollama, Anthropic.
var (
	overflowTypes   = []string{"exceed_context_size_error", "context_length_exceeded", "request_too_large"}
	overflowPhrases = []string{"exceeds the available context size", "maximum context length", "context length",
		"context window", "context_length_exceeded", "prompt is too long", "too many tokens in the prompt"}
)

// overflow: a refusal that says the conversation does not fit the
// model's context.
func overflow(status int, typ, msg string) bool {
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
		return false
	}
	if status == http.StatusRequestEntityTooLarge || slices.Contains(overflowTypes, typ) {
		return true
	}
	msg = strings.ToLower(msg)
	for _, p := range overflowPhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// transientStatus: the server did not take the request on, and may later.
func transientStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return status >= 500
}

// transientType: an error type a stream can end with that says "later".
func transientType(typ string) bool {
	switch typ {
	case "overloaded_error", "rate_limit_error", "rate_limit_exceeded", "api_error", "server_error", "timeout_error":
		return true
	}
	return false
}

func join(msg, hint string) string {
	if msg == "" {
		return hint
	}
	return msg + "; " + hint
}

// apiError reads the error type and message from an error body: OpenAI's
// {"error": {"type", "code", "message"}}, Anthropic's {"type": "error",
// "error": {"type", "message"}}, or a bare {"error": "..."} as some
// OpenAI-compatible servers send. A body that is none of those is its
// message, shortened.
func apiError(body []byte) (typ, msg string) {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil && len(v.Error) > 0 {
		var s string
		if json.Unmarshal(v.Error, &s) == nil {
			return "", s
		}
		var o struct {
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(v.Error, &o) == nil {
			var code string
			_ = json.Unmarshal(o.Code, &code)
			if o.Type == "" {
				o.Type = code
			}
			return o.Type, o.Message
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return "", text
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func isNetError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF)
}

// streamError reads an error event that ended a stream: the SDK's own
// error type (through StreamError), or an error the SDK names as one.
func (e Endpoint) streamError(err error) (typ, msg string, ok bool) {
	if e.StreamError != nil {
		if data, ok := e.StreamError(err); ok {
			typ, msg = apiError(data)
			return typ, msg, true
		}
	}
	const prefix = "received error while streaming: "
	if s := err.Error(); strings.HasPrefix(s, prefix) {
		typ, msg = apiError([]byte(strings.TrimPrefix(s, prefix)))
		return typ, msg, true
	}
	return "", "", false
}
