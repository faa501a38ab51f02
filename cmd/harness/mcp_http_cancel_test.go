package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// tap is a client's HTTP transport that lets every stream the server
// sends run on after the client stops reading it, as a client that keeps
// reading would, and keeps what each carried.
type tap struct {
	token string

	mu      sync.Mutex // guards streams
	streams []*tapped
}

// tapped is one response stream: the request that opened it, and what
// the server sent on it.
type tapped struct {
	request string
	done    chan struct{} // closed when the server ends the stream

	mu   sync.Mutex // guards data
	data bytes.Buffer
}

func (s *tapped) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data.String()
}

func (t *tap) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	out := r.Clone(context.WithoutCancel(r.Context()))
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.Header.Set("Authorization", "Bearer "+t.token)
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	s := &tapped{request: string(body), done: make(chan struct{})}
	t.mu.Lock()
	t.streams = append(t.streams, s)
	t.mu.Unlock()
	pr, pw := io.Pipe()
	src := resp.Body
	go func() {
		defer close(s.done)
		defer src.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			s.mu.Lock()
			s.data.Write(buf[:n])
			s.mu.Unlock()
			// The client may have stopped reading: the stream runs on.
			_, _ = pw.Write(buf[:n])
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	go func() {
		select {
		case <-r.Context().Done():
			pw.CloseWithError(r.Context().Err())
		case <-s.done:
		}
	}()
	resp.Body = pr
	return resp, nil
}

// stream is the stream opened by the request that holds text.
func (t *tap) stream(text string) *tapped {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.streams {
		if strings.Contains(s.request, text) {
			return s
		}
	}
	return nil
}

// sseEvent is one server-sent event.
type sseEvent struct{ id, data string }

func sseEvents(text string) []sseEvent {
	var evs []sseEvent
	var e sseEvent
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if e != (sseEvent{}) {
				evs = append(evs, e)
			}
			e = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			e.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			e.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return evs
}

// noResponse checks that no event of evs is a response to the call id.
func noResponse(t *testing.T, evs []sseEvent, id json.RawMessage) {
	t.Helper()
	for _, e := range evs {
		var m wireMsg
		if e.data == "" || json.Unmarshal([]byte(e.data), &m) != nil {
			continue
		}
		require.False(t, m.Method == "" && string(m.ID) == string(id), "no response to the cancelled call: %s", e.data)
	}
}

// A tools/call the client cancels over streamable HTTP gets no response,
// neither on its stream (which a client may go on reading: the tap
// does) nor on a resumption of it with Last-Event-ID; the running tool
// is cancelled (action.interrupted), the hint that the thread is
// resumable, naming it, reaches the client on the session's own stream,
// and resume runs the thread to done.
func TestMCPServeHTTPCancel(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": cancelScript})
	url, token := serveHTTP(t, dir, "--model", "scripted:script.jsonl", "--approve", "all")
	tp := &tap{token: token}
	logs := make(chan string, 1024)
	client := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			raw, _ := json.Marshal(r.Params)
			logs <- string(raw)
		}})
	ctx := context.Background()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tp}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	require.NoError(t, cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}))

	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &sdk.CallToolParams{Name: "start", Arguments: map[string]any{"task": "Wait a while"}})
		errc <- err
	}()
	logged := func(text string) string {
		t.Helper()
		for {
			select {
			case l := <-logs:
				if strings.Contains(l, text) {
					return l
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("no log message with %q", text)
			}
		}
	}
	logged(`"kind":"action.started"`)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	hint := logged("resumable")
	require.Contains(t, hint, `"level":"warning"`)
	require.Contains(t, hint, "thread t1 is resumable: harness resume t1 (or with the resume tool)")

	call := tp.stream(`"name":"start"`)
	require.NotNil(t, call, "the call's stream was tapped")
	var req wireMsg
	require.NoError(t, json.Unmarshal([]byte(call.request), &req))
	select {
	case <-call.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the cancelled call's stream did not end: %s", call)
	}
	evs := sseEvents(call.String())
	noResponse(t, evs, req.ID)
	require.Contains(t, call.String(), "action.interrupted", "what the cancelled call appended reaches its stream")

	// A client that resumes the call's stream is not sent the response
	// either.
	last := evs[len(evs)-1].id
	require.NotEmpty(t, last)
	for _, from := range []string{last, strings.Split(last, "_")[0] + "_0"} {
		get, err := http.NewRequest("GET", url, nil)
		require.NoError(t, err)
		get.Header.Set("Authorization", "Bearer "+token)
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set("Mcp-Session-Id", cs.ID())
		get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		get.Header.Set("Last-Event-ID", from)
		resp, err := http.DefaultClient.Do(get)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		replayed := sseEvents(string(body))
		noResponse(t, replayed, req.ID)
		if strings.HasSuffix(from, "_0") {
			require.Contains(t, string(body), "action.interrupted", "the replay is the stream's")
		}
	}

	var v tourView
	text, isErr := callTool(t, cs, "facts", map[string]any{"thread": "t1"}, nil)
	require.False(t, isErr, text)
	require.Contains(t, text, "action.interrupted")
	require.NotContains(t, text, "action.completed")
	text, isErr = callTool(t, cs, "resume", map[string]any{"thread": "t1"}, &v)
	require.False(t, isErr, text)
	require.Equal(t, "done", v.Status, "the cancelled thread was resumable: %s", text)
}
