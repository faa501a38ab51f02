package facts

import "fmt"

// The verdicts of a Connection.
const (
	ConnectionAllowed = "allowed"
	ConnectionRefused = "refused"
)

// Network is what a command with a network allow-list did on the
// network: each connection to the harness's proxy, its only route out
// (see package sandbox/netproxy). It is kept on the command's report
// (Report.Network) by the harness, which ran the proxy outside the
// sandbox: the command cannot write it, and it is as much the runtime's
// evidence as the exit code. It lies beside the output it explains (a
// 403 a command printed), one per command, a check's too; a thread's
// connections are its reports' in order.
type Network struct {
	// Connections are in the order the proxy decided them; at most 256
	// are kept, and Dropped counts the rest.
	Connections []Connection `msgpack:"connections,omitempty" json:"connections,omitempty"`
	Dropped     int          `msgpack:"dropped,omitempty" json:"dropped,omitempty"`
}

// Connection is one connection a command made through the proxy.
type Connection struct {
	// Host and Port are what the command asked for (a CONNECT target, a
	// URL's host); Method is CONNECT or the plain HTTP method.
	Host   string `msgpack:"host,omitempty" json:"host,omitempty"`
	Port   int    `msgpack:"port,omitempty" json:"port,omitempty"`
	Method string `msgpack:"method,omitempty" json:"method,omitempty"`
	// Verdict is allowed or refused; Reason says why it was refused, or
	// why an allowed connection failed.
	Verdict string `msgpack:"verdict,omitempty" json:"verdict,omitempty"`
	Reason  string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Addr is the address the proxy dialed, after resolving Host itself.
	Addr string `msgpack:"addr,omitempty" json:"addr,omitempty"`
	// Sent and Received are the bytes relayed from the command and to it.
	Sent     int64 `msgpack:"sent,omitempty" json:"sent,omitempty"`
	Received int64 `msgpack:"received,omitempty" json:"received,omitempty"`
}

// Validate requires a known verdict of each connection, and no negative
// count.
func (n Network) Validate() error {
	if n.Dropped < 0 {
		return fmt.Errorf("dropped %d is negative", n.Dropped)
	}
	for i, c := range n.Connections {
		if err := oneOf("verdict", c.Verdict, ConnectionAllowed, ConnectionRefused); err != nil {
			return fmt.Errorf("connections[%d]: %w", i, err)
		}
		if c.Sent < 0 || c.Received < 0 || c.Port < 0 || c.Port > 65535 {
			return fmt.Errorf("connections[%d]: a negative count or a port out of range", i)
		}
	}
	return nil
}
