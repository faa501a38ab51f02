package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/serve"
)

// fill appends n user messages of size bytes each to thread id, through
// the server's store (so its streams hear of them).
func (f *fixture) fill(id string, n, size int) {
	f.t.Helper()
	ctx := context.Background()
	var after uint64
	if h, err := f.store.Head(ctx, id); err == nil {
		after = h.Seq
	}
	for i := range n {
		d, err := facts.NewDraft(facts.KindUserMessage, fmt.Sprintf("ingress/fill-%d-%d", after, i), facts.UserMessage{Text: strings.Repeat("x", size)})
		require.NoError(f.t, err)
		h, err := f.srv.Store().Append(ctx, id, after, d)
		require.NoError(f.t, err)
		after = h.Seq
	}
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSlowHeaders: a client that sends its headers too slowly is cut off
// by the server's timeout, and the server goes on serving.
func TestSlowHeaders(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	hs := f.srv.HTTPServer()
	require.NotZero(t, hs.ReadHeaderTimeout)
	require.NotZero(t, hs.ReadTimeout)
	require.NotZero(t, hs.IdleTimeout)
	hs.ReadHeaderTimeout = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go hs.Serve(ln)
	defer hs.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /api/threads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+token+"\r\n")
	require.NoError(t, err)
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	b, err := io.ReadAll(conn) // the server hangs up
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "cut off by the header timeout, not by ours")
	require.NotContains(t, string(b), "200 OK")

	resp, err := http.Get("http://" + ln.Addr().String() + "/api/threads?limit=1")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "still serving")
}

// smallBuffers gives each connection it accepts a small send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// TestSlowStreamReader: a stream client that stops reading is let go
// once a write to it takes longer than the write timeout; the server
// goes on serving everyone else.
func TestSlowStreamReader(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript, func(o *serve.Options) { o.WriteTimeout = 150 * time.Millisecond })
	f.fill("big", 1, 10)
	// Small buffers that do not grow, on both sides: the server's writes
	// block soon, whatever the system's buffers may grow to.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := f.srv.HTTPServer()
	go hs.Serve(smallBuffers{ln})
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(16<<10))
	_, err = io.WriteString(conn, "GET /api/threads/big/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+token+"\r\n\r\n")
	require.NoError(t, err)
	eventually(t, "the stream watches", func() bool { return f.srv.Watchers("big") == 1 })
	// The client reads nothing while the thread grows by megabytes.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200 && f.srv.Watchers("big") > 0; i++ {
			f.fill("big", 2, 64<<10)
		}
	}()
	eventually(t, "the slow client is let go", func() bool { return f.srv.Watchers("big") == 0 })
	<-done
	// Everyone else is still served.
	resp, b := f.do("GET", fmt.Sprintf("/api/threads/big/facts?from=%d", f.head("big")), "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"kind": "user.message"`)
}

// TestDisconnectMidStream: a client that goes away in the middle of a
// stream ends it: nothing keeps watching, no goroutine is left, and the
// next client streams as the first did.
func TestDisconnectMidStream(t *testing.T) {
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	before := goleak.IgnoreCurrent()
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/threads/t1/stream", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		require.NoError(t, err)
		evs := readEvents(t, bufio.NewReader(resp.Body), 3)
		require.Equal(t, "3", evs[2].id)
		cancel()
		resp.Body.Close()
		eventually(t, "the stream ends", func() bool { return f.srv.Watchers("t1") == 0 })
	}
	tr.CloseIdleConnections()
	f.http.CloseClientConnections()
	goleak.VerifyNone(t, before)
}
