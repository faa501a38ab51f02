package netproxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
)

// TestProxySizedBody: a body of a Content-Length is relayed whole and no
// further — a 1 MiB one past the buffers, a small one through them — so
// the next response on the same connections is the host's next one (a
// host that sends more than it said gets the rest read as that next
// response, never relayed as part of this one), and a host that ends
// early cuts the command's body short (its record says so).
func TestProxySizedBody(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	sized := func(body string) string {
		return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	host := rawHost(t, map[string]string{
		"big":        sized(big) + sized("next"), // a second response sent before it is asked for
		"small":      sized("hello"),
		"shortBig":   "HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n" + big,
		"shortSmall": "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello",
	})
	p := proxyTo(t, host)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = p.Serve(ln) }()
	defer p.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	br := bufio.NewReader(c)
	get := func(name string) string {
		_, err := io.WriteString(c, "GET http://public.test/"+name+" HTTP/1.1\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, name)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err, name)
		return string(b)
	}
	require.Equal(t, big, get("big"))
	require.Equal(t, "next", get("small"), "the host's second response, read as the answer to the next request")
	require.Equal(t, "hello", get("small"))
	// The proxy records a request once its last byte is relayed, which
	// may be just after the command has read it: wait for the three
	// records of this connection before the next ones are made.
	require.Eventually(t, func() bool { log, _ := p.Log(); return len(log) >= 3 }, 10*time.Second, 5*time.Millisecond)

	for _, name := range []string{"shortBig", "shortSmall"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
		_, err = io.WriteString(c, "GET http://public.test/"+name+" HTTP/1.1\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, name)
		_, err = io.ReadAll(resp.Body)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s: the command sees a cut body", name)
		c.Close()
	}
	p.Close()
	log, _ := p.Log()
	require.Len(t, log, 5)
	head := int64(len("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n"))
	require.Equal(t, head+int64(len(big)), log[0].Received, "the head and the body, counted, and nothing more")
	for _, r := range log {
		require.Equal(t, netproxy.Allowed, r.Verdict, r)
	}
	for _, r := range log[3:] {
		require.Contains(t, r.Reason, "the host's response body ended early", r)
	}
}

// proxyTo is a proxy that allows public.test and dials host for it.
func proxyTo(t *testing.T, host string) *netproxy.Proxy {
	t.Helper()
	rs, err := netproxy.ParseRules([]string{"public.test"})
	require.NoError(t, err)
	var d net.Dialer
	return &netproxy.Proxy{Rules: rs, Resolver: table{"public.test": {"203.0.113.7"}},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, host)
		}}
}
