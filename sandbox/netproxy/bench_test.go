package netproxy_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
)

// BenchmarkProxy1MiB fetches a 1 MiB response through the proxy, plain
// HTTP and CONNECT, and directly, in the same run, and reports the
// ratios (goal: at most 1.5). Every client keeps its connection: the
// proxy serves plain HTTP requests one after another on one connection
// (and on one to the host), as it does CONNECT's tunnel.
func BenchmarkProxy1MiB(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
	defer srv.Close()
	tsrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
	defer tsrv.Close()
	rs, _ := netproxy.ParseRules([]string{"127.0.0.1"})
	p := &netproxy.Proxy{Rules: rs}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = p.Serve(ln) }()
	defer p.Close()
	purl, _ := url.Parse("http://" + ln.Addr().String())

	fetch := func(c *http.Client, u string) {
		resp, err := c.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != 1<<20 {
			b.Fatalf("got %d bytes", n)
		}
	}
	direct := &http.Client{}
	proxied := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(purl)}}
	tdirect := tsrv.Client()
	tt := tsrv.Client().Transport.(*http.Transport).Clone()
	tt.Proxy = http.ProxyURL(purl)
	tproxied := &http.Client{Transport: tt}
	// Interleaved, so that the machine's load weighs on both alike.
	var d, pr, td, tp time.Duration
	// Each fetch's time too, for medians: on a shared machine a sum is
	// swayed by the few fetches another process's burst fell on.
	var ds, ps []time.Duration
	timed := func(into *time.Duration, c *http.Client, u string) {
		start := time.Now()
		fetch(c, u)
		took := time.Since(start)
		*into += took
		switch into {
		case &d:
			ds = append(ds, took)
		case &pr:
			ps = append(ps, took)
		}
	}
	b.ResetTimer()
	for range b.N {
		timed(&d, direct, srv.URL)
		timed(&pr, proxied, srv.URL)
		timed(&td, tdirect, tsrv.URL)
		timed(&tp, tproxied, tsrv.URL)
	}
	b.StopTimer()
	b.ReportMetric(float64(pr)/float64(d), "http-ratio")
	b.ReportMetric(float64(median(ps))/float64(median(ds)), "http-median-ratio")
	b.ReportMetric(float64(tp)/float64(td), "connect-ratio")
	b.ReportMetric(float64(d.Microseconds())/float64(b.N), "direct-µs/op")
	b.ReportMetric(float64(pr.Microseconds())/float64(b.N), "proxied-µs/op")
}

// median is the middle of ts (which it sorts).
func median(ts []time.Duration) time.Duration {
	slices.Sort(ts)
	return ts[len(ts)/2]
}
