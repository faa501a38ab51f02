package netproxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
)

func TestParseRule(t *testing.T) {
	for in, want := range map[string]string{
		"GitHub.com.":        "github.com",
		"*.example.com:443":  "*.example.com:443",
		"127.0.0.1:8080":     "127.0.0.1:8080",
		"[::1]":              "[::1]",
		"[::ffff:127.0.0.1]": "[::ffff:127.0.0.1]",
		"a_b.test":           "a_b.test",
	} {
		r, err := netproxy.ParseRule(in)
		require.NoError(t, err, in)
		require.Equal(t, want, r.String(), in)
	}
	for _, in := range []string{"", "http://github.com", "github.com/x", "u@github.com", "*.com", "a.*.com", "*", "::1",
		"github.com:0", "github.com:65536", "github.com:+1", "github.com:08", "-a.com", "a..com", "2130706433", "0x7f.1", "1.0x7f", "é.com",
		"[::1", "[fe80::1%eth0]", "[127.0.0.1]"} {
		_, err := netproxy.ParseRule(in)
		require.ErrorIs(t, err, netproxy.ErrRule, in)
	}
}

func TestInternal(t *testing.T) {
	for a, want := range map[string]string{
		"127.0.0.1": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback", "10.1.2.3": "private",
		"192.168.0.1": "private", "172.16.0.1": "private", "fd00::1": "private", "169.254.169.254": "link-local",
		"fe80::1": "link-local", "0.0.0.0": "unspecified", "::": "unspecified", "100.100.100.200": "reserved",
		"64:ff9b::7f00:1": "reserved", "::7f00:1": "reserved", "::ffff:0:7f00:1": "reserved", "255.255.255.255": "reserved", "239.1.1.1": "multicast", "224.0.0.1": "link-local",
		"8.8.8.8": "", "2606:4700::1111": "",
	} {
		require.Equal(t, want, netproxy.Internal(netip.MustParseAddr(a)), a)
	}
}

type table map[string][]string

func (tb table) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	// The proxy asks for names fully qualified (no search domains).
	if _, err := netip.ParseAddr(host); err != nil && !strings.HasSuffix(host, ".") {
		return nil, fmt.Errorf("%s is not fully qualified", host)
	}
	var out []netip.Addr
	for _, a := range tb[strings.TrimSuffix(host, ".")] {
		out = append(out, netip.MustParseAddr(a))
	}
	if out == nil {
		return nil, fmt.Errorf("no such host")
	}
	return out, nil
}

// serve starts a proxy with rules on a loopback listener; public.test's
// documentation address is dialed at the test's server.
func serve(t *testing.T, rules ...string) (*netproxy.Proxy, string, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host=%s uri=%s proxy-auth=%q", r.Host, r.RequestURI, r.Header.Get("Proxy-Authorization"))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	rs, err := netproxy.ParseRules(rules)
	require.NoError(t, err)
	var d net.Dialer
	p := &netproxy.Proxy{Rules: rs,
		Resolver: table{"public.test": {"203.0.113.7"}, "mixed.test": {"127.0.0.1", "203.0.113.7"}, "rebind.test": {"10.0.0.1", "::1"}},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if strings.HasPrefix(addr, "203.0.113.7:") {
				addr = "127.0.0.1:" + u.Port()
			}
			return d.DialContext(ctx, network, addr)
		}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = p.Serve(ln) }()
	t.Cleanup(p.Close)
	return p, ln.Addr().String(), u.Port()
}

// send writes raw to the proxy and returns all it answers.
func send(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, raw)
	require.NoError(t, err)
	b, _ := io.ReadAll(bufio.NewReader(c))
	return string(b)
}

func TestProxyRefuses(t *testing.T) {
	p, addr, port := serve(t, "public.test", "mixed.test", "rebind.test")
	for _, c := range []struct{ raw, want string }{
		{"GET http://public.test:" + port + "/x HTTP/1.1\r\nHost: public.test:" + port + "\r\nProxy-Authorization: Basic eA==\r\nConnection: close\r\n\r\n",
			"host=public.test:" + port + " uri=/x proxy-auth=\"\""},
		{"GET http://mixed.test:" + port + "/ HTTP/1.0\r\n\r\n", "host=mixed.test:" + port},
		{"GET http://public.test:" + port + "/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", "400 Bad Request"},
		{"GET http://public.test:" + port + "/ HTTP/1.1\r\nHost: public.test:" + port + "\r\nHost: evil.test\r\n\r\n", "400 Bad Request"},
		{"CONNECT public.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", "the Host header \"evil.test:443\" is not the target public.test:443"},
		{"CONNECT public.test HTTP/1.1\r\n\r\n", "400 Bad Request"},
		{"GET /x HTTP/1.1\r\nHost: public.test\r\n\r\n", "this is a proxy"},
		{"GET https://public.test/ HTTP/1.1\r\n\r\n", "this is a proxy"},
		{"GET http://evil.test/ HTTP/1.1\r\n\r\n", "403 Forbidden"},
		{"GET http://rebind.test/ HTTP/1.1\r\n\r\n", "rebind.test resolves to 10.0.0.1 (private), ::1 (loopback)"},
		{"GET http://127.0.0.1:" + port + "/ HTTP/1.1\r\n\r\n", "127.0.0.1:" + port + " is not in the network allow-list"},
		{"GET http://[::ffff:127.0.0.1]:" + port + "/ HTTP/1.1\r\n\r\n", "127.0.0.1:" + port + " is not in the network allow-list"},
		{"GET http://2130706433/ HTTP/1.1\r\n\r\n", "400 Bad Request"},
		{"GET http://public.test:" + port + "/ HTTP/1.1\r\nX: " + strings.Repeat("a", netproxy.MaxHeader) + "\r\n\r\n", "400 Bad Request"},
	} {
		out := send(t, addr, c.raw)
		require.Contains(t, out, c.want, c.raw[:min(len(c.raw), 80)])
	}
	p.Close()
	log, dropped := p.Log()
	require.Zero(t, dropped)
	require.Len(t, log, 14)
	require.Equal(t, netproxy.Allowed, log[0].Verdict)
	require.Equal(t, "203.0.113.7:"+port, log[0].Addr)
	require.Equal(t, "203.0.113.7:"+port, log[1].Addr) // never the loopback address mixed.test also gives
	for _, c := range log[2:] {
		require.Equal(t, netproxy.Refused, c.Verdict, c)
		require.Zero(t, c.Sent)
	}
}

// TestProxyKeepAlive: plain HTTP requests one after another on one
// connection are each checked and recorded on their own — two to an
// allowed host share the connection to it, another allowed host gets its
// own, and a refused one is answered 403 and ends the connection.
func TestProxyKeepAlive(t *testing.T) {
	p, addr, port := serve(t, "public.test", "mixed.test")
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	get := func(raw string) (int, string) {
		_, err := io.WriteString(c, raw)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	code, body := get("GET http://public.test:" + port + "/one HTTP/1.1\r\n\r\n")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "uri=/one")
	code, body = get("GET http://public.test:" + port + "/two HTTP/1.1\r\nHost: public.test:" + port + "\r\n\r\n")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "uri=/two")
	code, body = get("GET http://mixed.test:" + port + "/three HTTP/1.1\r\n\r\n")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "host=mixed.test:"+port+" uri=/three")
	code, body = get("GET http://evil.test/ HTTP/1.1\r\n\r\n")
	require.Equal(t, http.StatusForbidden, code, body, "the same connection, checked again")
	require.Contains(t, body, "evil.test:80 is not in the network allow-list")
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF, "a refusal ends the connection")

	p.Close()
	log, _ := p.Log()
	require.Len(t, log, 4)
	for i, want := range []struct{ host, verdict string }{
		{"public.test", netproxy.Allowed}, {"public.test", netproxy.Allowed}, {"mixed.test", netproxy.Allowed},
		{"evil.test", netproxy.Refused},
	} {
		require.Equal(t, want.host, log[i].Host, i)
		require.Equal(t, want.verdict, log[i].Verdict, i)
	}
	for _, c := range log[:3] {
		require.Equal(t, "203.0.113.7:"+port, c.Addr)
		require.Positive(t, c.Sent)
		require.Positive(t, c.Received)
	}
}
