package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Verdicts of a connection.
const (
	Allowed = "allowed"
	Refused = "refused"
)

// Limits of a Proxy.
const (
	// MaxLog is how many connections Log keeps; past it, only a count.
	MaxLog = 256
	// MaxOpen is how many connections may be open at once; more are
	// answered 503 and closed (and logged).
	MaxOpen = 64
	// MaxHeader bounds a request's line and headers.
	MaxHeader = 64 << 10
	// HeaderTimeout bounds the wait for a request's line and headers.
	HeaderTimeout = 30 * time.Second
	// DialTimeout bounds resolving a name and connecting to it.
	DialTimeout = 30 * time.Second
)

// Resolver resolves host names: net.DefaultResolver's method, or a table
// in tests.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Conn is one connection the command made to the proxy, as the proxy
// handled it.
type Conn struct {
	// Host and Port are what the command asked for (the CONNECT target or
	// the URL's host); Method is CONNECT or the HTTP method.
	Host   string
	Port   int
	Method string
	// Verdict is Allowed or Refused; Reason says why a connection was
	// refused, or why an allowed one failed.
	Verdict string
	Reason  string
	// Addr is the address dialed ("" when none was).
	Addr string
	// Sent and Received are the bytes from the command to the host and
	// from the host to the command (what the proxy relayed).
	Sent, Received int64
}

// Proxy serves the connections of one command (see the package's doc).
// Its fields are set before Serve; the zero value of each is the system's
// own.
type Proxy struct {
	// Rules are the allow-list.
	Rules []Rule
	// Resolver resolves names; nil is net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address ("tcp", "1.2.3.4:443"); nil is a
	// net.Dialer's. It is only ever given an address the rules allow.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex // guards log, dropped, open, closed, ln
	log     []Conn
	dropped int
	open    map[net.Conn]struct{}
	closed  bool
	ln      net.Listener
	wg      sync.WaitGroup
}

// Serve accepts connections on l until Close, serving each. It returns
// nil after Close, else the listener's error.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	p.ln = l
	p.wg.Add(1) // the accept loop itself: Close waits for it
	p.mu.Unlock()
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return nil
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return err
		}
		if !p.track(c) {
			c.Close()
			continue
		}
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			p.handle(c)
		}()
	}
}

// track notes c as open (and adds to wg), or answers it 503 when too many
// are: false then, and c is to be closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if len(p.open) >= MaxOpen {
		p.record(Conn{Verdict: Refused, Reason: fmt.Sprintf("more than %d connections open at once", MaxOpen)})
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		answer(c, http.StatusServiceUnavailable, fmt.Sprintf("more than %d connections open at once", MaxOpen))
		return false
	}
	if p.open == nil {
		p.open = map[net.Conn]struct{}{}
	}
	p.open[c] = struct{}{}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.open, c)
	p.mu.Unlock()
}

// watch notes an upstream connection as open, so Close closes it too.
func (p *Proxy) watch(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.open == nil {
		p.open = map[net.Conn]struct{}{}
	}
	p.open[c] = struct{}{}
	return true
}

// Close stops accepting, closes every open connection and waits until
// each is done. Log is complete after it.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	if p.ln != nil {
		p.ln.Close()
	}
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Log is the connections served so far, in the order they were decided,
// and how many more there were past MaxLog.
func (p *Proxy) Log() ([]Conn, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Conn(nil), p.log...), p.dropped
}

// record keeps c; p.mu is held.
func (p *Proxy) record(c Conn) {
	if len(p.log) >= MaxLog {
		p.dropped++
		return
	}
	p.log = append(p.log, c)
}

func (p *Proxy) keep(c Conn) {
	p.mu.Lock()
	p.record(c)
	p.mu.Unlock()
}

// handle serves one connection: requests one after another — each
// checked and recorded on its own — until one is a CONNECT (then the
// tunnel), either side asks to close, or a request is refused.
// Consecutive plain HTTP requests to one host and port reuse the
// connection to it.
func (p *Proxy) handle(c net.Conn) {
	br := bufio.NewReaderSize(c, MaxHeader+headSlack)
	var up *upstream // the host connection plain requests share
	defer func() {
		if up != nil {
			p.untrack(up.c)
		}
	}()
	for first := true; ; first = false {
		_ = c.SetReadDeadline(time.Now().Add(HeaderTimeout))
		head, err := readHead(br)
		if err != nil {
			// A connection that ends between requests is done; one
			// that sends something else is refused.
			if !errors.Is(err, io.EOF) && !(errors.Is(err, os.ErrDeadlineExceeded) && !first) && !errors.Is(err, net.ErrClosed) {
				p.keep(Conn{Verdict: Refused, Reason: "not an HTTP request: " + clip(err.Error())})
				answer(c, http.StatusBadRequest, "not an HTTP proxy request")
			}
			return
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			p.keep(Conn{Verdict: Refused, Reason: "not an HTTP request: " + clip(err.Error())})
			answer(c, http.StatusBadRequest, "not an HTTP proxy request")
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		rec, target, ok := p.check(c, req, head)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), DialTimeout)
		if up == nil || up.target != target || req.Method == http.MethodConnect {
			if up != nil {
				p.untrack(up.c)
				up = nil
			}
			var addrs []netip.Addr
			var why string
			if addrs, why = p.decide(ctx, rec.Host, rec.Port); why != "" {
				cancel()
				rec.Verdict, rec.Reason = Refused, why
				p.keep(rec)
				answer(c, http.StatusForbidden, why)
				return
			}
			conn, addr, err := p.dial(ctx, addrs, rec.Port)
			rec.Verdict, rec.Addr = Allowed, addr
			if err != nil {
				cancel()
				rec.Reason = "cannot connect: " + clip(err.Error())
				p.keep(rec)
				answer(c, http.StatusBadGateway, rec.Reason)
				return
			}
			if !p.watch(conn) {
				cancel()
				conn.Close()
				return
			}
			up = &upstream{c: conn, target: target, addr: addr, br: bufio.NewReaderSize(conn, MaxHeader+headSlack)}
		}
		cancel()
		rec.Verdict, rec.Addr = Allowed, up.addr
		if req.Method == http.MethodConnect {
			rec.Sent, rec.Received = p.tunnel(c, br, up.c)
			p.keep(rec)
			return
		}
		var again bool
		rec.Sent, rec.Received, again, err = p.forward(c, req, up)
		if err != nil {
			rec.Reason = clip(err.Error())
		}
		p.keep(rec)
		if !again {
			return
		}
	}
}

// headSlack is room in a connection's buffer past MaxHeader, so that the
// head of a request MaxHeader long can be seen whole before it is parsed.
const headSlack = 4096

// readHead waits until br holds a whole request head (the request line
// and headers, to the empty line), at most MaxHeader bytes, and returns
// it, unread: http.ReadRequest reads it next. io.EOF is a connection that
// ended before a request began.
func readHead(br *bufio.Reader) ([]byte, error) {
	for {
		if k := br.Buffered(); k > 0 {
			b, _ := br.Peek(k)
			if i := headEnd(b); i >= 0 {
				if i > MaxHeader {
					return nil, errHeaderTooLong
				}
				return b[:i], nil
			}
			if k > MaxHeader {
				return nil, errHeaderTooLong
			}
		}
		// At least one more byte (all there is to read, in one read).
		if _, err := br.Peek(br.Buffered() + 1); err != nil {
			switch {
			case errors.Is(err, bufio.ErrBufferFull):
				return nil, errHeaderTooLong
			case errors.Is(err, io.EOF) && br.Buffered() > 0:
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// headEnd is the length of the head at the start of b, through the empty
// line that ends it ("\r\n\r\n" or "\n\n"), or -1 when b holds no end yet.
func headEnd(b []byte) int {
	for i := 0; i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		switch {
		case i+1 < len(b) && b[i+1] == '\n':
			return i + 2
		case i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n':
			return i + 3
		}
	}
	return -1
}

// check reads a request as a proxy takes it: a CONNECT host:port, or an
// absolute http:// URL, with no Host header that names another target.
// It returns the record so far and the target ("host:port"); a request
// it refuses is answered, recorded and ok is false.
func (p *Proxy) check(c net.Conn, req *http.Request, head []byte) (rec Conn, target string, ok bool) {
	rec = Conn{Method: clip(req.Method)}
	refuse := func(code int, why string) (Conn, string, bool) {
		rec.Verdict, rec.Reason = Refused, why
		p.keep(rec)
		answer(c, code, why)
		return rec, "", false
	}
	defPort := 80
	switch {
	case req.Method == http.MethodConnect:
		target, defPort = req.URL.Host, 443
		if req.URL.Scheme != "" || req.URL.Host == "" || req.URL.Path != "" || req.URL.RawQuery != "" || strings.HasPrefix(req.RequestURI, "/") {
			return refuse(http.StatusBadRequest, "CONNECT wants host:port")
		}
	case req.URL.IsAbs() && req.URL.Scheme == "http" && req.URL.Host != "":
		target = req.URL.Host
	default:
		return refuse(http.StatusBadRequest, "this is a proxy: it takes CONNECT host:port, or a request for an absolute http:// URL")
	}
	host, port, ok := authority(target, defPort, req.Method == http.MethodConnect)
	rec.Host, rec.Port = host, port
	if !ok {
		rec.Host = clip(strconv.Quote(target))
		return refuse(http.StatusBadRequest, "not a host and port: "+strconv.Quote(target))
	}
	// The Host headers as sent: net/http keeps none of a request for an
	// absolute URL.
	switch hs := hostHeaders(head); {
	case len(hs) > 1:
		return refuse(http.StatusBadRequest, "more than one Host header")
	case len(hs) == 1:
		if h, pt, ok := authority(hs[0], defPort, false); !ok || h != host || pt != port {
			return refuse(http.StatusBadRequest, fmt.Sprintf("the Host header %s is not the target %s", strconv.Quote(clip(hs[0])), net.JoinHostPort(host, strconv.Itoa(port))))
		}
	}
	return rec, net.JoinHostPort(host, strconv.Itoa(port)), true
}

// upstream is a connection to a host that plain HTTP requests of one
// client connection share while they go to the same host and port.
type upstream struct {
	c      net.Conn
	target string // host:port as asked
	addr   string // the address dialed
	br     *bufio.Reader
}

// decide says which addresses host may be reached at on port, or why it
// may not.
func (p *Proxy) decide(ctx context.Context, host string, port int) ([]netip.Addr, string) {
	hp := net.JoinHostPort(host, strconv.Itoa(port))
	if a, err := netip.ParseAddr(host); err == nil {
		for _, r := range p.Rules {
			if r.matches("", a, port) {
				return []netip.Addr{a}, ""
			}
		}
		return nil, hp + " is not in the network allow-list"
	}
	allowed := false
	for _, r := range p.Rules {
		if r.matches(host, netip.Addr{}, port) {
			allowed = true
			break
		}
	}
	if !allowed {
		return nil, hp + " is not in the network allow-list"
	}
	var res Resolver = net.DefaultResolver
	if p.Resolver != nil {
		res = p.Resolver
	}
	// The name as given, fully qualified: the resolver's search domains
	// must not turn an allowed name that does not exist into another
	// (x.example.com.corp.lan).
	fq := host
	// (localhost is the hosts file's, which Go's resolver does not read
	// for the name with its dot.)
	if _, err := netip.ParseAddr(host); err != nil && !strings.HasSuffix(fq, ".") && fq != "localhost" && !strings.HasSuffix(fq, ".localhost") {
		fq += "."
	}
	found, err := res.LookupNetIP(ctx, "ip", fq)
	if err != nil {
		return nil, "cannot resolve " + host + ": " + clip(err.Error())
	}
	var out []netip.Addr
	var inside []string
	for _, a := range found {
		a = a.Unmap()
		if what := Internal(a); what != "" {
			inside = append(inside, a.String()+" ("+what+")")
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		if len(inside) == 0 {
			return nil, "cannot resolve " + host + ": no address"
		}
		return nil, fmt.Sprintf("%s resolves to %s, which only a rule naming the address allows", host, strings.Join(inside, ", "))
	}
	return out, ""
}

// dial connects to the first of addrs that answers on port.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, string, error) {
	dial := p.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	var last error
	for _, a := range addrs {
		addr := netip.AddrPortFrom(a, uint16(port)).String()
		c, err := dial(ctx, "tcp", addr)
		if err == nil {
			return c, addr, nil
		}
		last = err
	}
	return nil, netip.AddrPortFrom(addrs[0], uint16(port)).String(), last
}

// tunnel answers a CONNECT and relays bytes both ways until both ends
// are done.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, up net.Conn) (sent, received int64) {
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return 0, 0
	}
	done := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(c, up)
		closeWrite(c)
		done <- n
	}()
	// What the client sent after the request, then the rest straight
	// from the connection (spliced in the kernel where it can be).
	if k := br.Buffered(); k > 0 {
		b, _ := br.Peek(k)
		n, _ := up.Write(b)
		sent += int64(n)
	}
	n, _ := io.Copy(up, c)
	sent += n
	closeWrite(up)
	received = <-done
	return sent, received
}

// forward sends one plain HTTP request on to the host and relays its
// response (and any informational ones before it) to the command. again
// says whether both sides may go on with another request on their
// connections.
func (p *Proxy) forward(c net.Conn, req *http.Request, up *upstream) (sent, received int64, again bool, err error) {
	for _, h := range hopByHop {
		req.Header.Del(h)
	}
	closing := req.Close
	cw := &counter{w: up.c}
	if err := req.Write(cw); err != nil {
		answer(c, http.StatusBadGateway, "cannot send the request: "+clip(err.Error()))
		return cw.n, 0, false, fmt.Errorf("cannot send the request: %w", err)
	}
	out := &counter{w: c}
	for {
		// The host's head is bounded as a request's is: read whole
		// within MaxHeader before it is parsed.
		_, err := readHead(up.br)
		var resp *http.Response
		if err == nil {
			resp, err = http.ReadResponse(up.br, req)
		}
		if err != nil {
			if out.n == 0 {
				answer(c, http.StatusBadGateway, "no response: "+clip(err.Error()))
			}
			return cw.n, out.n, false, fmt.Errorf("no response: %w", err)
		}
		for _, h := range hopByHop {
			resp.Header.Del(h)
		}
		informational := resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols
		if resp.StatusCode == http.StatusSwitchingProtocols {
			// Upgrade was taken off the request: a host that switches
			// anyway is not followed.
			resp.Body.Close()
			answer(c, http.StatusBadGateway, "the host switched protocols")
			return cw.n, out.n, false, errors.New("the host switched protocols")
		}
		resp.Close = resp.Close || closing
		var werr error
		if n := resp.ContentLength; n > 0 && len(resp.TransferEncoding) == 0 && !informational {
			// The body is relayed from the connection itself, past
			// resp.Body (which is not closed: that would read on).
			werr = relayBody(out, resp, up)
		} else if !informational && chunkedBody(req, resp) {
			werr = relayChunked(out, resp, up)
		} else {
			// Through a buffer: Response.Write writes each piece (a
			// header line, a chunk's size, its data) as it comes.
			bw := getSmallWriter(out)
			if werr = resp.Write(bw); werr == nil {
				werr = bw.Flush()
			}
			putWriter(bw)
			resp.Body.Close()
		}
		if errors.Is(werr, errShortBody) {
			return cw.n, out.n, false, werr
		}
		if errors.Is(werr, errBadChunk) {
			if out.n == 0 {
				answer(c, http.StatusBadGateway, "the host's response: "+clip(werr.Error()))
			}
			return cw.n, out.n, false, werr
		}
		if werr != nil {
			return cw.n, out.n, false, nil // the command went away
		}
		if informational {
			continue
		}
		return cw.n, out.n, !resp.Close, nil
	}
}

// relayBody writes resp's head to the command, then its body of
// resp.ContentLength bytes from the host's connection (see relayData),
// counting it all on out.
func relayBody(out *counter, resp *http.Response, up *upstream) error {
	resp.Header.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	if resp.Close {
		resp.Header.Set("Connection", "close")
	}
	bw := getWriter(out)
	defer putWriter(bw)
	fmt.Fprintf(bw, "HTTP/%d.%d %s\r\n", resp.ProtoMajor, resp.ProtoMinor, resp.Status)
	if err := resp.Header.Write(bw); err != nil {
		return err
	}
	_, _ = bw.WriteString("\r\n")
	err := relayData(out, bw, up, resp.ContentLength, errShortBody)
	if err == nil || errors.Is(err, errShortBody) {
		// Cut short, what came goes out: the command sees a head and a
		// body that ends early, not a connection closed without either.
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

// hopByHop are the headers of one connection, not passed on.
var hopByHop = []string{"Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate", "Keep-Alive", "Connection", "Upgrade", "Te", "Trailer"}

// authority splits a host[:port] (an IPv6 address in brackets); the
// port is def when absent, unless needPort. The host is as Name writes
// it, or an address as netip does.
func authority(s string, def int, needPort bool) (string, int, bool) {
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	} else if strings.Contains(s, ":") {
		return "", 0, false
	}
	n := def
	if port != "" {
		var err error
		if n, err = strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '+' {
			return "", 0, false
		}
	} else if needPort {
		return "", 0, false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "", 0, false
		}
		return a.Unmap().String(), n, true
	}
	name, ok := Name(host)
	return name, n, ok
}

// internalPrefixes are the special-purpose ranges Internal names
// "reserved", parsed at first use, not at start-up.
var internalPrefixes = sync.OnceValue(func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // this network
		"100.64.0.0/10",   // shared address space (carrier NAT; some clouds' metadata)
		"192.0.0.0/24",    // protocol assignments
		"198.18.0.0/15",   // benchmarking
		"240.0.0.0/4",     // reserved, and broadcast
		"64:ff9b::/96",    // NAT64: an IPv4 address inside
		"64:ff9b:1::/48",  // local NAT64
		"fec0::/10",       // site-local (deprecated)
		"2001:db8::/32",   // documentation
		"100::/64",        // discard
		"2001:10::/28",    // ORCHID
		"::/128",          // unspecified
		"::/96",           // IPv4-compatible (deprecated): an IPv4 address inside
		"::ffff:0:0:0/96", // IPv4-translated: an IPv4 address inside
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
})

// Internal says why a is not an address on the public internet
// ("loopback", "private", "link-local", ...), or "" when it is one.
func Internal(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, p := range internalPrefixes() {
		if p.Contains(a) {
			return "reserved"
		}
	}
	return ""
}

// answer writes an HTTP response of code with why as its body, saying
// the connection closes.
func answer(w io.Writer, code int, why string) {
	body := "harness network allow-list: " + why + "\n"
	_, _ = fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

// closeWrite ends c's sending side, or c when it cannot half-close.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	c.Close()
}

// clip bounds s, written from what the command sent, for the record.
func clip(s string) string {
	const max = 256
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// hostHeaders are the values of the Host header lines of the request
// head (a request line, header lines, an empty line) at the start of
// b. A header continued on the next line (obsolete folding) is refused
// by net/http before this.
func hostHeaders(b []byte) []string {
	var out []string
	lines := strings.Split(string(b), "\n")
	for _, l := range lines[min(1, len(lines)):] {
		l = strings.TrimSuffix(l, "\r")
		if l == "" {
			break
		}
		name, v, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(name, "Host") {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// counter counts what is written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(b []byte) (int, error) {
	k, err := c.w.Write(b)
	c.n += int64(k)
	return k, err
}
