package call

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Recorder keeps the bytes of one HTTP exchange, and the wait the server
// asked for. It is installed as the innermost SDK middleware of one call,
// so it sees the body the SDK finally sends and every byte the SDK reads
// back. The SDKs' own retries are off, so one call is one exchange.
type Recorder struct {
	provider string
	now      func() time.Time

	// mu guards what follows: the exchange of the call, recorded as the
	// SDK sends and reads it.
	mu         sync.Mutex
	url        string
	status     int
	retryAfter time.Duration
	req        []byte
	resp       bytes.Buffer
	sent       bool
}

// NewRecorder returns a recorder of one call of the provider ("openai").
func NewRecorder(provider string) *Recorder {
	return &Recorder{provider: provider, now: time.Now}
}

// Middleware records the exchange; it has the signature of both SDKs'
// middlewares.
func (r *Recorder) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
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
		wait := retryAfter(res.Header, r.now())
		r.mu.Lock()
		r.status, r.retryAfter = res.StatusCode, wait
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
	r  *Recorder
}

// MaxResponseBytes bounds what one model turn's response may hold (a
// stream's whole): what the SDK reads, and the copy kept. Past it the turn
// fails with class invalid_output: a provider that never ends a stream
// cannot fill the harness's memory.
const MaxResponseBytes = 32 << 20

func (t *teeBody) Read(p []byte) (int, error) {
	t.r.mu.Lock()
	left := MaxResponseBytes - t.r.resp.Len()
	t.r.mu.Unlock()
	if left <= 0 {
		var one [1]byte
		if n, err := t.rc.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, &model.Error{Class: facts.ClassInvalidOutput,
			Err: fmt.Errorf("the response is over %d bytes", MaxResponseBytes)}
	}
	if len(p) > left {
		p = p[:left]
	}
	n, err := t.rc.Read(p)
	if n > 0 {
		t.r.mu.Lock()
		t.r.resp.Write(p[:n])
		t.r.mu.Unlock()
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// Exchange returns what was recorded, or nil when nothing was sent.
func (r *Recorder) Exchange() *model.Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.sent {
		return nil
	}
	return &model.Exchange{
		Provider: r.provider,
		URL:      r.url,
		Status:   r.status,
		Request:  r.req,
		Response: bytes.Clone(r.resp.Bytes()),
	}
}

// RetryAfter returns the wait the response asked for; 0 when it asked
// none, or no response came.
func (r *Recorder) RetryAfter() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retryAfter
}

// maxRetryAfter bounds a wait read from a header, so that no arithmetic
// on it overflows; any caller's cap is far below it.
const maxRetryAfter = 1000 * time.Hour

// retryAfter reads the wait a response asks for: retry-after-ms (OpenAI's,
// in milliseconds) first, else Retry-After in seconds or as an HTTP date.
// A date is read against the response's own Date header when it has one
// (the server's clock, so a skewed local clock does not change the wait),
// else against now. A value that is none of these, or a date in the past,
// asks for no wait.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && !math.IsInf(ms, 0) {
			return min(time.Duration(ms*float64(time.Millisecond)), maxRetryAfter)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	if d := at.Sub(now); d > 0 {
		return min(d, maxRetryAfter)
	}
	return 0
}
