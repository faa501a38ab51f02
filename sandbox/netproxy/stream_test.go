package netproxy_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// streamHost is a host that answers each request on a connection with
// head (the status line and headers, through the empty line), then first,
// then waits on release before it sends rest.
func streamHost(t *testing.T, head, first, rest string, release <-chan struct{}) string {
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
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				_, _ = io.WriteString(c, head+first)
				select {
				case <-release:
				case <-time.After(20 * time.Second):
				}
				_, _ = io.WriteString(c, rest)
			}()
		}
	}()
	return ln.Addr().String()
}

// The proxy passes on what the host sent without waiting for what it has
// yet to send: the start of a chunked body, and of one of known length,
// reach the command while the host holds the rest back (a stream, a
// download's progress); then the rest arrives, whole.
func TestProxyStreams(t *testing.T) {
	big := strings.Repeat("y", 200<<10) // more than the proxy's buffers hold
	for name, c := range map[string]struct{ head, first, rest, want string }{
		"chunked":      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "6\r\nfirst\n\r\n", "5\r\nrest\n\r\n0\r\n\r\n", "first\nrest\n"},
		"chunked tail": {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "6\r\nfirst\n", "\r\n5\r\nrest\n\r\n0\r\n\r\n", "first\nrest\n"},
		"sized":        {"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", "first\n", "rest\n", "first\nrest\n"},
		"large chunk":  {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", strconv.FormatInt(int64(len(big)+5), 16) + "\r\n" + big, "rest\n\r\n0\r\n\r\n", big + "rest\n"},
		"large sized":  {"HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(big)+5) + "\r\n\r\n", big, "rest\n", big + "rest\n"},
	} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			host := streamHost(t, c.head, c.first, c.rest, release)
			p := proxyTo(t, host)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			go func() { _ = p.Serve(ln) }()
			t.Cleanup(p.Close)

			conn, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, "GET http://public.test/ HTTP/1.1\r\nHost: public.test\r\n\r\n")
			require.NoError(t, err)
			// What the host sent first, head and all, comes through
			// while it holds the rest (the deadline only ends a proxy
			// that holds it too).
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "the head, before the host sends the rest")
			defer resp.Body.Close()
			firstBody := c.want[:len(c.want)-len("rest\n")]
			got := make([]byte, len(firstBody))
			_, err = io.ReadFull(resp.Body, got)
			require.NoError(t, err, "the start of the body, before the host sends the rest")
			require.Equal(t, firstBody, string(got))
			close(release)
			rest, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, "rest\n", string(rest))
		})
	}
}
