package netproxy_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
)

// BenchmarkProxy1MiB fetches a 1 MiB response through the proxy, plain
// HTTP and CONNECT, and directly, in the same run, and reports the
// ratios (goal: at most 1.5).
//
// The two sides are measured alike: the same loopback, clients cloned
// from one transport, each keeping its connection (the proxy serves
// plain HTTP requests one after another on one connection, and on one to
// the host, as it does CONNECT's tunnel), and a direct fetch and a
// proxied one side by side in each iteration, in alternating order, so
// that neither always runs right after the other. On a shared machine
// wall time is swayed by the few fetches another process's burst fell
// on: besides the ratio of sums (http-ratio), http-pair-ratio is the
// median of each iteration's proxied/direct, and http-cpu-ratio the
// ratio of the process's CPU time (getrusage: user and system, of the
// client, the server and, proxied, the proxy, all in this process),
// which the machine's load does not stretch.
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
	// One transport's settings for every client; the TLS ones trust the
	// test server's certificate.
	base := http.DefaultTransport.(*http.Transport).Clone()
	direct := &http.Client{Transport: base.Clone()}
	pt := base.Clone()
	pt.Proxy = http.ProxyURL(purl)
	proxied := &http.Client{Transport: pt}
	tlsBase := base.Clone()
	tlsBase.TLSClientConfig = tsrv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tdirect := &http.Client{Transport: tlsBase.Clone()}
	tt := tlsBase.Clone()
	tt.Proxy = http.ProxyURL(purl)
	tproxied := &http.Client{Transport: tt}
	// The connections are made before the clock starts: every fetch
	// measured reuses one.
	for _, c := range []struct {
		c *http.Client
		u string
	}{{direct, srv.URL}, {proxied, srv.URL}, {tdirect, tsrv.URL}, {tproxied, tsrv.URL}} {
		fetch(c.c, c.u)
	}

	// side is what one kind of fetch took, summed and each.
	type side struct {
		wall, cpu time.Duration
		walls     []time.Duration
	}
	timed := func(s *side, c *http.Client, u string) time.Duration {
		cpu0 := cpuTime(b)
		start := time.Now()
		fetch(c, u)
		took := time.Since(start)
		s.cpu += cpuTime(b) - cpu0
		s.wall += took
		s.walls = append(s.walls, took)
		return took
	}
	var d, pr, td, tp side
	var pairs []float64
	b.ResetTimer()
	for i := range b.N {
		var dt, pt time.Duration
		if i%2 == 0 {
			dt = timed(&d, direct, srv.URL)
			pt = timed(&pr, proxied, srv.URL)
		} else {
			pt = timed(&pr, proxied, srv.URL)
			dt = timed(&d, direct, srv.URL)
		}
		pairs = append(pairs, float64(pt)/float64(dt))
		if i%2 == 0 {
			timed(&td, tdirect, tsrv.URL)
			timed(&tp, tproxied, tsrv.URL)
		} else {
			timed(&tp, tproxied, tsrv.URL)
			timed(&td, tdirect, tsrv.URL)
		}
	}
	b.StopTimer()
	slices.Sort(pairs)
	b.ReportMetric(float64(pr.wall)/float64(d.wall), "http-ratio")
	b.ReportMetric(float64(median(pr.walls))/float64(median(d.walls)), "http-median-ratio")
	b.ReportMetric(pairs[len(pairs)/2], "http-pair-ratio")
	b.ReportMetric(float64(pr.cpu)/float64(d.cpu), "http-cpu-ratio")
	b.ReportMetric(float64(tp.wall)/float64(td.wall), "connect-ratio")
	b.ReportMetric(float64(tp.cpu)/float64(td.cpu), "connect-cpu-ratio")
	b.ReportMetric(float64(d.wall.Microseconds())/float64(b.N), "direct-µs/op")
	b.ReportMetric(float64(pr.wall.Microseconds())/float64(b.N), "proxied-µs/op")
	b.ReportMetric(float64(d.cpu.Microseconds())/float64(b.N), "direct-cpu-µs/op")
	b.ReportMetric(float64(pr.cpu.Microseconds())/float64(b.N), "proxied-cpu-µs/op")
}

// cpuTime is the CPU time the process has used so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// median is the middle of ts (which it sorts).
func median(ts []time.Duration) time.Duration {
	slices.Sort(ts)
	return ts[len(ts)/2]
}
