package sandbox

import (
	"strconv"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox/internal/helper"
	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
)

// ProxyPort is the port, on the loopback of a command's own network
// namespace, where a command with an allow-list (Spec.NetworkAllow)
// reaches the harness's proxy. The namespace is the command's alone and
// the port is taken before the command starts, so nothing of the
// command's can hold it.
const ProxyPort = helper.ProxyPort

// ProxyAddr is ProxyPort's address, and ProxyURL the proxy's URL as the
// command's environment gives it.
var (
	ProxyAddr = "127.0.0.1:" + strconv.Itoa(ProxyPort)
	ProxyURL  = "http://" + ProxyAddr
)

// ProxyEnv are the variables that name the proxy for a command with an
// allow-list: set to ProxyURL, whatever the harness's environment says.
var ProxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// Proxied reports whether a command of s reaches the network only
// through the allow-list's proxy: an allow-list, no Network, not mode Off.
func (s Spec) Proxied() bool {
	return len(s.NetworkAllow) > 0 && !s.Network && s.Mode != Off
}

// Connections is the record of what a command's proxy served, in order:
// at most netproxy.MaxLog, and how many more there were.
func connectionsRecord(log []netproxy.Conn, dropped int) facts.Network {
	n := facts.Network{Dropped: dropped}
	for _, c := range log {
		n.Connections = append(n.Connections, facts.Connection{
			Host: c.Host, Port: c.Port, Method: c.Method, Verdict: c.Verdict, Reason: c.Reason,
			Addr: c.Addr, Sent: c.Sent, Received: c.Received,
		})
	}
	return n
}

// CheckAllow says why an allow-list entry cannot be read (see
// netproxy.ParseRule), or nil.
func CheckAllow(allow []string) error {
	_, err := netproxy.ParseRules(allow)
	return err
}

// AllowWithin reports whether every host next allows, cur allows too:
// each rule of next is covered by one of cur's. An entry that cannot be
// read is within nothing.
func AllowWithin(next, cur []string) bool {
	c, err := netproxy.ParseRules(cur)
	if err != nil {
		return false
	}
	for _, s := range next {
		r, err := netproxy.ParseRule(s)
		if err != nil || !netproxy.Covered(c, r) {
			return false
		}
	}
	return true
}
