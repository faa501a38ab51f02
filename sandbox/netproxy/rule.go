package netproxy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one entry of an allow-list: a host name ("github.com"), every
// name under a domain ("*.example.com": a.example.com and a.b.example.com,
// not example.com itself), or an address ("127.0.0.1", "[::1]"), with an
// optional port ("github.com:443"); without one, any port.
type Rule struct {
	// Host is the name in lower case without a trailing dot, the domain
	// of a wildcard (without "*."), or the address as netip writes it.
	Host string
	// Wildcard: Host is a domain, and every name under it matches.
	Wildcard bool
	// Addr is the address when the rule names one: only such a rule lets
	// a connection reach a loopback, private or link-local address.
	Addr netip.Addr
	// Port is the one port allowed; 0 is any.
	Port int
}

// ParseRule reads one allow-list entry: HOST, HOST:PORT, *.DOMAIN,
// *.DOMAIN:PORT, an IPv4 address, or an IPv6 address in brackets (with
// or without a port). A scheme, a path, a user, a wildcard anywhere but
// the whole first label, or a name that is not a DNS name are refused.
func ParseRule(s string) (Rule, error) {
	orig := s
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("%w: %q: %s", ErrRule, orig, why)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return bad("empty")
	}
	if strings.ContainsAny(s, "/@?#") {
		return bad("want a host with an optional port, not a URL")
	}
	var r Rule
	host, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return bad("an IPv6 address without its closing bracket")
		}
		host, port = s[1:end], s[end+1:]
		if port != "" {
			if !strings.HasPrefix(port, ":") {
				return bad("text after the address")
			}
			port = port[1:]
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return bad("not an IPv6 address")
		}
		r.Addr, r.Host = a, a.String()
	default:
		if i := strings.LastIndex(s, ":"); i >= 0 {
			if strings.Count(s, ":") > 1 {
				return bad("an IPv6 address goes in brackets")
			}
			host, port = s[:i], s[i+1:]
		}
		if a, err := netip.ParseAddr(host); err == nil {
			r.Addr, r.Host = a.Unmap(), a.Unmap().String()
			break
		}
		if rest, ok := strings.CutPrefix(host, "*."); ok {
			r.Wildcard, host = true, rest
		}
		name, ok := Name(host)
		if !ok {
			return bad("not a host name")
		}
		if r.Wildcard && !strings.Contains(name, ".") {
			return bad("a wildcard needs a domain of two labels at least (*.example.com)")
		}
		r.Host = name
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
			return bad("the port is not a number from 1 to 65535")
		}
		r.Port = n
	}
	return r, nil
}

// ParseRules reads each entry of list (see ParseRule).
func ParseRules(list []string) ([]Rule, error) {
	out := make([]Rule, 0, len(list))
	for _, s := range list {
		r, err := ParseRule(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Name is host as rules compare it: lower case, without a trailing dot;
// ok is false when host is not a DNS name of letters, digits, hyphens and
// underscores in labels of 1 to 63 bytes, 253 at most in all (an address
// is not a name).
func Name(host string) (string, bool) {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return "", false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	// A name whose last label begins with a digit is an address in some
	// other spelling (2130706433, 0x7f.1, 1.0x7f, as inet_aton reads
	// them); no top-level domain begins with one.
	if last := h[strings.LastIndex(h, ".")+1:]; last[0] >= '0' && last[0] <= '9' {
		return "", false
	}
	return h, true
}

// String is the rule as ParseRule reads it.
func (r Rule) String() string {
	h := r.Host
	switch {
	case r.Wildcard:
		h = "*." + h
	case r.Addr.Is6():
		h = "[" + h + "]"
	}
	if r.Port != 0 {
		return h + ":" + strconv.Itoa(r.Port)
	}
	return h
}

// matchesHost reports whether the rule allows the name or address host
// (as Name or netip write it) on port.
func (r Rule) matches(host string, addr netip.Addr, port int) bool {
	if r.Port != 0 && r.Port != port {
		return false
	}
	if addr.IsValid() {
		return r.Addr.IsValid() && r.Addr == addr
	}
	if r.Addr.IsValid() {
		return false
	}
	if r.Wildcard {
		return strings.HasSuffix(host, "."+r.Host)
	}
	return host == r.Host
}

// Covers reports whether everything o allows r allows too.
func (r Rule) Covers(o Rule) bool {
	if r.Port != 0 && r.Port != o.Port {
		return false
	}
	switch {
	case r.Addr.IsValid() || o.Addr.IsValid():
		return r.Addr == o.Addr
	case r.Wildcard:
		return strings.HasSuffix(o.Host, "."+r.Host) || (o.Wildcard && o.Host == r.Host)
	default:
		return !o.Wildcard && o.Host == r.Host
	}
}

// Covered reports whether some rule of list covers r (see Rule.Covers).
func Covered(list []Rule, r Rule) bool {
	for _, l := range list {
		if l.Covers(r) {
			return true
		}
	}
	return false
}
