package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// table resolves the names of a test: public-looking addresses for the
// hosts, and 127.0.0.1 for the one that rebinds.
type table map[string]string

func (tb table) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	// The proxy asks for names fully qualified (no search domains).
	a, ok := tb[strings.TrimSuffix(host, ".")]
	if !ok || !strings.HasSuffix(host, ".") {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// proxied runs line in spec with the allow-list, the table's names, and
// the documentation addresses (203.0.113.0/24) dialed on this machine's
// loopback, where the test's servers are.
func proxied(t *testing.T, spec sandbox.Spec, line string) (string, sandbox.Exit, *facts.Network) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	var d net.Dialer
	c := &sandbox.Cmd{Spec: spec, Line: line, Stdout: w, Stderr: w,
		Resolver: table{"allowed.test": "203.0.113.10", "other.test": "203.0.113.11", "rebind.test": "127.0.0.1", "meta.test": "169.254.169.254"},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if rest, ok := strings.CutPrefix(addr, "203.0.113."); ok {
				_, port, _ := strings.Cut(rest, ":")
				addr = "127.0.0.1:" + port
			}
			return d.DialContext(ctx, network, addr)
		}}
	err = c.Start(context.Background())
	w.Close()
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	e, err := c.Wait()
	require.NoError(t, err)
	return string(out), e, c.Network()
}

// A command with an allow-list reaches the listed hosts through the
// harness's proxy, over plain HTTP and CONNECT, and nothing else: not
// another host (a 403 that says why), not a listed name that resolves to
// loopback or link-local, not a direct connection; each connection is in
// its record.
func TestNetworkAllowList(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	defer srv.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secret hello")
	}))
	defer tls.Close()
	port := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Port() }
	p, tp := port(srv), port(tls)

	spec := defaultSpec(t)
	spec.NetworkAllow = []string{"allowed.test", "rebind.test", "meta.test", "127.0.0.1:" + tp}
	require.True(t, spec.Proxied())
	rec := spec.Record()
	require.Equal(t, spec.NetworkAllow, rec.NetworkAllow)
	require.False(t, rec.Network)

	out, e, n := proxied(t, spec, "curl -sS http://allowed.test:"+p+"/a")
	require.Equal(t, 0, e.Code, out)
	require.Equal(t, "hello from allowed.test:"+p, out)
	require.Len(t, n.Connections, 1)
	c := n.Connections[0]
	require.Equal(t, facts.Connection{Host: "allowed.test", Port: atoi(t, p), Method: "GET", Verdict: "allowed",
		Addr: "203.0.113.10:" + p, Sent: c.Sent, Received: c.Received}, c)
	require.Positive(t, c.Sent)
	require.Greater(t, c.Received, int64(len(out)))

	// CONNECT: TLS through the tunnel, the proxy sees bytes only.
	out, e, n = proxied(t, spec, "curl -sS -f -k https://allowed.test:"+tp+"/")
	require.Equal(t, 0, e.Code, out)
	require.Equal(t, "secret hello", out)
	require.Equal(t, "CONNECT", n.Connections[0].Method)
	require.Equal(t, "allowed", n.Connections[0].Verdict)
	require.Greater(t, n.Connections[0].Received, int64(1000)) // the certificate, at least

	// Another host: a 403 whose body says why, over HTTP and CONNECT.
	out, e, n = proxied(t, spec, "curl -sS http://other.test:"+p+"/; echo; curl -sS -k https://other.test:"+tp+"/")
	require.NotEqual(t, 0, e.Code)
	require.Contains(t, out, "harness network allow-list: other.test:"+p+" is not in the network allow-list")
	require.Contains(t, out, "403")
	require.Len(t, n.Connections, 2)
	for _, c := range n.Connections {
		require.Equal(t, "refused", c.Verdict)
		require.Empty(t, c.Addr)
		require.Zero(t, c.Sent)
	}

	// A listed name that resolves to loopback or link-local: refused;
	// the address itself, listed, passes.
	out, _, n = proxied(t, spec, "curl -sS http://rebind.test:"+p+"/; curl -sS http://meta.test/; curl -sS -f -k https://127.0.0.1:"+tp+"/")
	require.Contains(t, out, "rebind.test resolves to 127.0.0.1 (loopback), which only a rule naming the address allows")
	require.Contains(t, out, "meta.test resolves to 169.254.169.254 (link-local)")
	require.True(t, strings.HasSuffix(out, "secret hello"), out)
	require.Equal(t, []string{"refused", "refused", "allowed"}, verdicts(n))

	// No route around the proxy: not to the harness's loopback, not out.
	out, e, n = proxied(t, spec, "curl -sS --noproxy '*' http://127.0.0.1:"+p+"/; curl -sS --noproxy '*' --connect-timeout 3 http://203.0.113.10:"+p+"/")
	require.NotEqual(t, 0, e.Code)
	require.NotContains(t, out, "hello")
	require.Empty(t, n.Connections)

	// A Host header that is not the target; a request that is not a
	// proxy's; the variables.
	out, _, n = proxied(t, spec, "curl -sS -H 'Host: other.test' http://allowed.test:"+p+"/; echo; printf 'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' | curl -sS --noproxy '*' telnet://"+sandbox.ProxyAddr+" ; echo; env | grep -i _proxy= | sort")
	require.Contains(t, out, "the Host header \"other.test\" is not the target allowed.test:"+p)
	require.Contains(t, out, "this is a proxy")
	for _, v := range sandbox.ProxyEnv {
		require.Contains(t, out, v+"="+sandbox.ProxyURL+"\n")
	}
	require.Equal(t, []string{"refused", "refused"}, verdicts(n))
}

// Without an allow-list nothing changes: no proxy, no variables, no
// record.
func TestNoAllowListNoProxy(t *testing.T) {
	spec := defaultSpec(t)
	spec.Env = []string{"HTTP_PROXY"}
	require.False(t, spec.Proxied())
	out, _, n := proxied(t, spec, "echo ${HTTP_PROXY:-none}; exec 3<>/dev/tcp/127.0.0.1/3128 && echo open")
	require.Nil(t, n)
	require.NotContains(t, out, "open")
	spec.Network, spec.NetworkAllow = true, []string{"allowed.test"}
	require.False(t, spec.Proxied())
}

func verdicts(n *facts.Network) []string {
	var out []string
	for _, c := range n.Connections {
		out = append(out, c.Verdict)
	}
	return out
}

func atoi(t *testing.T, s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}
