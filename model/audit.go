package model

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Exchange is one HTTP exchange with a provider, byte for byte, kept so a
// turn can be audited: the request body exactly as it was sent, and the
// response body exactly as it was received (for a streamed turn, the raw
// server-sent events). Headers are not kept: they carry the API key.
//
// A real provider puts the exchange of a turn on Decision.Exchange, and the
// exchange of a failed call on its error (see ExchangeOf). Recording it is
// the caller's choice.
type Exchange struct {
	// Provider is "openai" or "anthropic".
	Provider string `json:"provider"`
	// URL is where the request went.
	URL string `json:"url"`
	// Status is the HTTP status of the response; 0 when none came.
	Status int `json:"status,omitempty"`
	// Request is the request body as sent.
	Request []byte `json:"request,omitempty"`
	// Response is the response body as received; for a call cut short,
	// what was received before it stopped.
	Response []byte `json:"response,omitempty"`
}

// Size is the bytes the exchange keeps: request and response bodies.
func (e *Exchange) Size() int {
	if e == nil {
		return 0
	}
	return len(e.Request) + len(e.Response)
}

// ExchangeOf returns the exchange a provider error carries, or nil.
func ExchangeOf(err error) *Exchange {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Exchange
	}
	return nil
}

// CallError is a provider call that failed: what the provider or the
// connection said, and what was exchanged before it failed. It is wrapped
// in an *Error that gives its class:
//
//	429, 408, 409, 425, 5xx (529 overloaded too)   transient: Infer retries it
//	an error event in a stream: overloaded,
//	  rate limit, api/server error                 transient
//	401, 403                                       permission ("check OPENAI_API_KEY")
//	404                                            not_found (names the model and the base URL)
//	other 4xx, other error events                  business: the API said no
//	a 2xx body that is not JSON, or not the
//	  API's shape                                  invalid_output
//	a 400 or 413 saying the conversation is longer
//	  than the model's context                     context_overflow (ErrContextOverflow): compact, try once more
//	no response: connection refused or reset       transient: a model turn changes nothing; it runs again
//	a stream cut off, or ending before the turn    transient (ErrStreamCut): nothing is recorded; the turn runs again
//	a response body cut off (not streamed)         transient, as a cut stream
//	past WithTimeout, or the caller's deadline     timeout
//	the caller's context cancelled                 cancelled (errors.Is context.Canceled)
//
// Tool arguments that are not valid JSON are not an error: the call is
// returned with its arguments as written, and the runtime answers it with
// a tool error the model sees.
type CallError struct {
	// Provider is "openai" or "anthropic".
	Provider string
	// Status is the HTTP status; 0 when no response came.
	Status int
	// Type is the error type the API named ("rate_limit_error",
	// "invalid_api_key"), when it named one.
	Type string
	// Message says what went wrong, with what to check when that is known.
	Message string
	// RetryAfter is the wait the server asked for before a retry (the
	// retry-after-ms or Retry-After header, in seconds or as an HTTP
	// date); 0 when it asked none.
	RetryAfter time.Duration
	// Exchange is what was sent and received.
	Exchange *Exchange
	// Err is the underlying error, when there is one.
	Err error
}

func (e *CallError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": %d", e.Status)
		if text := http.StatusText(e.Status); text != "" {
			b.WriteString(" " + text)
		}
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil && (e.Message == "" || !strings.Contains(e.Message, e.Err.Error())) {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *CallError) Unwrap() error { return e.Err }

// Reason says in a few words why the call failed, for a person told that
// it is tried again: "rate limited by openai (429)", "the stream from
// anthropic was cut off".
func (e *CallError) Reason() string {
	p := e.Provider
	switch s := e.Status; {
	case errors.Is(e.Err, ErrStreamCut):
		return "the stream from " + p + " was cut off"
	case errors.Is(e.Err, ErrContextOverflow):
		return "the conversation is over " + p + "'s context size"
	case s == http.StatusTooManyRequests:
		return fmt.Sprintf("rate limited by %s (%d)", p, s)
	case s == 529:
		return fmt.Sprintf("%s is overloaded (%d)", p, s)
	case s == http.StatusServiceUnavailable:
		return fmt.Sprintf("%s is unavailable (%d)", p, s)
	case s >= 500:
		return fmt.Sprintf("%s server error (%d)", p, s)
	case s >= 400:
		return fmt.Sprintf("%s answered %d %s", p, s, http.StatusText(s))
	case e.Type != "":
		// An error event that ended a stream.
		switch {
		case strings.Contains(e.Type, "rate_limit"):
			return fmt.Sprintf("rate limited by %s (%s)", p, e.Type)
		case strings.Contains(e.Type, "overloaded"):
			return fmt.Sprintf("%s is overloaded (%s)", p, e.Type)
		}
		return fmt.Sprintf("%s stream error (%s)", p, e.Type)
	}
	return e.Error()
}

// RetryAfter returns the wait the server asked for before a retry, when a
// provider error carries one (see CallError.RetryAfter).
func RetryAfter(err error) (time.Duration, bool) {
	var ce *CallError
	if errors.As(err, &ce) && ce.RetryAfter > 0 {
		return ce.RetryAfter, true
	}
	return 0, false
}

// Reason says in a few words why a model call failed: a provider error's
// Reason, else the error's text.
func Reason(err error) string {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Reason()
	}
	return err.Error()
}
