package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/seed-7cc7a084/harness/facts"
)

// endpoint is what a provider's failures are explained with.
type endpoint struct {
	provider string // "openai"
	model    string
	baseURL  string
	keyVar   string // "OPENAI_API_KEY"
	baseVar  string // "OPENAI_BASE_URL"
}

var (
	// errIncomplete: a stream ended before the turn did.
	errIncomplete = errors.New("the stream ended before the turn was complete")
	// errMalformed: a response that is not what the API sends.
	errMalformed = errors.New("malformed response")
)

// fail classifies a failed call (see the package doc) and wraps it with
// what was exchanged. ctx is the caller's context; a call deadline of the
// provider's own (WithTimeout) is inside it.
func (e endpoint) fail(ctx context.Context, rec *recorder, err error) error {
	ce := &CallError{Provider: e.provider, Exchange: rec.exchange(), Err: err}
	if ce.Exchange != nil {
		ce.Status = ce.Exchange.Status
	}
	class := e.classify(ctx, ce, err)
	return &Error{Class: class, Err: ce}
}

func (e endpoint) classify(ctx context.Context, ce *CallError, err error) facts.ErrorClass {
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
			ce.Message = join(ce.Message, "check "+e.keyVar)
			return facts.ClassPermission
		case status == http.StatusNotFound:
			ce.Message = join(ce.Message, fmt.Sprintf("check the model name %q and %s (%s)", e.model, e.baseVar, e.baseURL))
			return facts.ClassNotFound
		case transientStatus(status):
			return facts.ClassTransient
		}
		return facts.ClassBusiness
	case status == 0:
		if isTimeout(err) {
			ce.Message = "no response in time from " + e.baseURL
			return facts.ClassTimeout
		}
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			ce.Message = fmt.Sprintf("cannot connect to %s: is the server running? check %s", e.baseURL, e.baseVar)
		} else {
			ce.Message = "no response from " + e.baseURL + ": the connection failed"
		}
		return facts.ClassTransport
	}
	// A 2xx response came and could not be used.
	if typ, msg, ok := streamError(err); ok {
		ce.Type, ce.Message, ce.Err = typ, msg, nil
		if transientType(typ) {
			return facts.ClassTransient
		}
		return facts.ClassBusiness
	}
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, errMalformed), errors.As(err, &syntax), errors.As(err, &typeErr),
		strings.Contains(err.Error(), "error parsing response json"):
		// The body came whole and is not what the API sends.
	case isTimeout(err):
		ce.Message = "the response stopped coming in time"
		return facts.ClassTimeout
	case errors.Is(err, errIncomplete), errors.Is(err, io.ErrUnexpectedEOF), isNetError(err),
		strings.Contains(err.Error(), "error reading response body"):
		// Cut off mid-response: the turn is not known.
		return facts.ClassTransport
	}
	// Not JSON, or not the shape the API sends.
	ce.Message = "the response is not a valid " + e.provider + " response"
	return facts.ClassInvalidOutput
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

// streamError reads an error event that ended a stream: OpenAI's data
// {"error": {...}}, Anthropic's "event: error".
func streamError(err error) (typ, msg string, ok bool) {
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		typ, msg = apiError(se.Event.Data)
		return typ, msg, true
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		typ, msg = apiError([]byte(ae.RawJSON()))
		return typ, msg, true
	}
	const prefix = "received error while streaming: "
	if s := err.Error(); strings.HasPrefix(s, prefix) {
		typ, msg = apiError([]byte(strings.TrimPrefix(s, prefix)))
		return typ, msg, true
	}
	return "", "", false
}
