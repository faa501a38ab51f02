// Package providertest is what the tests of the providers share: a fake
// server speaking a provider's API (Fake, Reply), and the suite every
// provider passes against it (Run): decisions, error classes, streaming,
// the ask pseudo-tool, the server's Retry-After, a stream cut off and
// restarted, and whole threads through the harness runtime.
package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Reply is what a fake API server answers one request with.
type Reply struct {
	Status int    // default 200
	Body   string // sent as application/json unless ContentType says otherwise
	// Events, when set, are sent as server-sent events, each followed by a
	// blank line and flushed; the body is then ignored.
	Events      []string
	ContentType string
	// Header is sent with the reply (Retry-After, Date).
	Header http.Header
	// Abort cuts the connection after the events (or at once).
	Abort bool
	// Delay holds the reply back.
	Delay time.Duration
	// Stall holds the connection open after the events, sending nothing
	// (until the client goes).
	Stall time.Duration
}

// Fake is a hand-written server speaking one provider's API at one path.
// It answers requests with its replies in order; the last one repeats.
type Fake struct {
	path string
	// Server is the test server; its URL is the base of the API.
	Server *httptest.Server

	// mu guards what follows: the replies left, and what arrived and
	// was sent.
	mu      sync.Mutex
	replies []Reply
	bodies  [][]byte
	arrived []time.Time
	headers []http.Header
	sent    [][]byte // the response bodies written, byte for byte
}

// NewFake starts a fake server answering POST path with replies, closed
// when the test ends.
func NewFake(t testing.TB, path string, replies ...Reply) *Fake {
	f := &Fake{path: path, replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Server.Close)
	return f
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != f.path || r.Method != http.MethodPost {
		http.Error(w, fmt.Sprintf(`{"error":{"type":"not_found_error","message":"no route %s %s"}}`, r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.arrived = append(f.arrived, time.Now())
	f.headers = append(f.headers, r.Header.Clone())
	rp := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()

	if rp.Delay > 0 {
		select {
		case <-time.After(rp.Delay):
		case <-r.Context().Done():
			return
		}
	}
	var sent bytes.Buffer
	defer func() {
		f.mu.Lock()
		f.sent = append(f.sent, sent.Bytes())
		f.mu.Unlock()
	}()
	for k, vs := range rp.Header {
		w.Header()[k] = vs
	}
	status := rp.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rp.Events != nil {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		fl := w.(http.Flusher)
		for _, e := range rp.Events {
			chunk := e + "\n\n"
			sent.WriteString(chunk)
			io.WriteString(w, chunk)
			fl.Flush()
		}
		if rp.Stall > 0 {
			select {
			case <-time.After(rp.Stall):
			case <-r.Context().Done():
			}
		}
		if rp.Abort {
			panic(http.ErrAbortHandler)
		}
		return
	}
	if rp.Abort {
		panic(http.ErrAbortHandler)
	}
	ct := rp.ContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	sent.WriteString(rp.Body)
	io.WriteString(w, rp.Body)
}

// Requests returns the request bodies received, in order.
func (f *Fake) Requests() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
}

// Arrived returns when each request came, in order.
func (f *Fake) Arrived() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.arrived...)
}

// Request decodes the nth request body (from 0).
func (f *Fake) Request(t testing.TB, n int) map[string]any {
	t.Helper()
	reqs := f.Requests()
	require.Greater(t, len(reqs), n, "request %d never came", n)
	var v map[string]any
	require.NoError(t, json.Unmarshal(reqs[n], &v))
	return v
}

// Header returns the headers of the nth request (from 0).
func (f *Fake) Header(n int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[n]
}

// Down closes the server, so that a connection to it is refused, and
// returns what starts it again on the same address — a server restarting.
func (f *Fake) Down(t testing.TB) (up func()) {
	addr := f.Server.Listener.Addr().String()
	f.Server.Close()
	return func() {
		l, err := net.Listen("tcp", addr)
		require.NoError(t, err, "listen again on %s", addr)
		s := httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
		s.Listener.Close()
		s.Listener = l
		s.Start()
		t.Cleanup(s.Close)
	}
}

// Responded reports how many responses the server has finished writing.
func (f *Fake) Responded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

// Response returns the nth response body written, byte for byte. The
// handler records a body once it has written it whole, which may be a
// moment after the client has read it all: Response waits up to 10s for
// it, then panics naming n.
func (f *Fake) Response(n int) []byte {
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		if n < len(f.sent) {
			b := f.sent[n]
			f.mu.Unlock()
			return b
		}
		f.mu.Unlock()
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("providertest: response %d was never written", n))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// SSE formats one server-sent event: data alone, or an event name and data.
func SSE(event string, data any) string {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event == "" {
		return "data: " + string(b)
	}
	return "event: " + event + "\ndata: " + string(b)
}

// JSONText marshals v.
func JSONText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
