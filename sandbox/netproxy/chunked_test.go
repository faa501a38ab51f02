package netproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
	"github.com/stretchr/testify/require"
)

// rawHost is a host that answers each request for /NAME with the raw
// response answers[NAME], on connections that stay open (closed after
// an answer named short…).
func rawHost(t *testing.T, answers map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					name := strings.TrimPrefix(req.URL.Path, "/")
					if _, err := io.WriteString(c, answers[name]); err != nil || strings.HasPrefix(name, "short") {
						return // a short answer ends with the connection
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// countedListener hands out connections that count the writes made to
// them.
type countedListener struct {
	net.Listener
	writes atomic.Int64
}

type countedConn struct {
	*net.TCPConn
	l *countedListener
}

func (c countedConn) Write(b []byte) (int, error) {
	c.l.writes.Add(1)
	return c.TCPConn.Write(b)
}

func (l *countedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countedConn{TCPConn: c.(*net.TCPConn), l: l}, nil
}

// TestProxyChunked: a chunked response is relayed chunk by chunk with
// its data as sent — a large chunk straight from the host's connection
// (a few writes to the command for a 1 MiB chunk, not one per 32 KiB) — its chunk extensions and trailer dropped, and the connection
// kept for the next request. A body that is not well-formed chunks is a
// 502 when nothing was sent yet, else ends the command's connection
// before a last chunk, so the command sees a cut body, never one the
// proxy read otherwise than it; the record says why.
func TestProxyChunked(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	chunked := func(body string) string {
		return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n" + body
	}
	answers := map[string]string{
		"small": chunked("5;name=\"v\"\r\nhello\r\n6 \r\n world\r\n0\r\nX-Sum: 1\r\n\r\n"),
		"big":   chunked(fmt.Sprintf("%x\r\n%s\r\n3\r\nend\r\n0\r\n\r\n", len(big), big)),
		"lf":    chunked("2\nok\r\n0\n\n"),
	}
	for name, body := range map[string]string{
		"notHex":      "zz\r\nhello\r\n0\r\n\r\n",
		"signed":      "+5\r\nhello\r\n0\r\n\r\n",
		"negative":    "-1\r\nx\r\n0\r\n\r\n",
		"prefixed":    "0x5\r\nhello\r\n0\r\n\r\n",
		"huge":        "8000000000000000\r\nx\r\n0\r\n\r\n",
		"noCRLF":      "5\r\nhelloXX0\r\n\r\n",
		"longLine":    "5;" + strings.Repeat("e", 5000) + "\r\nhello\r\n0\r\n\r\n",
		"longTrailer": "5\r\nhello\r\n0\r\n" + strings.Repeat("X-A: "+strings.Repeat("a", 1000)+"\r\n", 70) + "\r\n",
		"short":       "100\r\nhello",
	} {
		answers[name] = chunked(body)
	}
	host := rawHost(t, answers)
	p := proxyTo(t, host)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cl := &countedListener{Listener: ln}
	go func() { _ = p.Serve(cl) }()
	defer p.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	get := func(name string) (*http.Response, string, error) {
		_, err := io.WriteString(c, "GET http://public.test/"+name+" HTTP/1.1\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, name)
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}
	resp, body, err := get("small")
	require.NoError(t, err)
	require.Equal(t, "hello world", body)
	require.Equal(t, []string{"chunked"}, resp.TransferEncoding)
	require.Empty(t, resp.Trailer.Get("X-Sum"), "the trailer is not passed on")
	before := cl.writes.Load()
	_, body, err = get("big")
	require.NoError(t, err)
	require.Equal(t, big+"end", body)
	// Each write takes what the host's socket holds, up to 512 KiB: a
	// few (6 to 8 seen under load), never the 33 of 32 KiB pieces.
	require.LessOrEqual(t, cl.writes.Load()-before, int64(16), "1 MiB in a chunk: its data read and written in large pieces, not 32 KiB at a time")
	_, body, err = get("lf")
	require.NoError(t, err)
	require.Equal(t, "ok", body)
	// The proxy records a request once its last byte is relayed, which
	// may be just after the command has read it: wait for the record.
	var log []netproxy.Conn
	require.Eventually(t, func() bool { log, _ = p.Log(); return len(log) >= 3 }, 10*time.Second, 5*time.Millisecond)
	require.Len(t, log, 3, "one connection to the host, each request recorded")
	require.Greater(t, log[1].Received, int64(len(big)+3), "the bytes relayed past the buffer counted")

	for _, name := range []string{"notHex", "signed", "negative", "prefixed", "huge", "noCRLF", "longLine", "longTrailer", "short"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		_, err = io.WriteString(c, "GET http://public.test/"+name+" HTTP/1.1\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, name)
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusBadGateway {
			require.Contains(t, string(b), "malformed chunked response body", name)
		} else {
			require.Error(t, err, "%s: the command sees a cut body", name)
		}
		c.Close()
	}
	p.Close()
	log, _ = p.Log()
	require.Len(t, log, 12)
	for _, r := range log[3:] {
		require.Contains(t, r.Reason, "malformed chunked response body", r)
	}
}

// TestProxyBoundsAHostsHead: a host whose response head never ends (1 MiB
// of headers) gets a 502 naming the bound from the proxy, which reads no
// more of it than MaxHeader and a little.
func TestProxyBoundsAHostsHead(t *testing.T) {
	host := rawHost(t, map[string]string{
		"endless": "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-A: "+strings.Repeat("a", 1000)+"\r\n", 1024) + "\r\nbody",
	})
	p := proxyTo(t, host)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = p.Serve(ln) }()
	defer p.Close()
	got := send(t, ln.Addr().String(), "GET http://public.test/endless HTTP/1.1\r\nHost: public.test\r\nConnection: close\r\n\r\n")
	require.True(t, strings.HasPrefix(got, "HTTP/1.1 502"), "%.200s", got)
	require.Contains(t, got, "longer than")
}
