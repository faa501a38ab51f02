package model

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
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
//	no response: connection refused or reset       transport
//	a stream cut off, or ending before the turn    transport: nothing is recorded; the turn runs again
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

// recorder keeps the bytes of one HTTP exchange. It is installed as the
// innermost SDK middleware of one call, so it sees the body the SDK finally
// sends and every byte the SDK reads back. The SDKs' own retries are off,
// so one call is one exchange.
type recorder struct {
	provider string

	mu     sync.Mutex
	url    string
	status int
	req    []byte
	resp   bytes.Buffer
	sent   bool
}

func (r *recorder) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	var body []byte
	switch {
	case req.GetBody != nil:
		rc, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("record request body: %w", err)
		}
		body, err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("record request body: %w", err)
		}
	case req.Body != nil && req.Body != http.NoBody:
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("record request body: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	u := *req.URL
	u.User = nil
	r.mu.Lock()
	r.url, r.req, r.sent = u.String(), body, true
	r.mu.Unlock()
	res, err := next(req)
	if res != nil {
		r.mu.Lock()
		r.status = res.StatusCode
		r.mu.Unlock()
		if res.Body != nil {
			res.Body = &teeBody{rc: res.Body, r: r}
		}
	}
	return res, err
}

// teeBody copies what is read from a response body into its recorder.
type teeBody struct {
	rc io.ReadCloser
	r  *recorder
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if n > 0 {
		t.r.mu.Lock()
		t.r.resp.Write(p[:n])
		t.r.mu.Unlock()
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// exchange returns what was recorded, or nil when nothing was sent.
func (r *recorder) exchange() *Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.sent {
		return nil
	}
	return &Exchange{
		Provider: r.provider,
		URL:      r.url,
		Status:   r.status,
		Request:  r.req,
		Response: bytes.Clone(r.resp.Bytes()),
	}
}

// statusCode returns the status recorded, 0 when no response came.
func (r *recorder) statusCode() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}
