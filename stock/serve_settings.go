package stock

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// Served reports whether store is a client of a server that holds the
// store (see OpenStore), and what the server says of itself.
func Served(store thread.Store) (socketstore.Info, bool) {
	c, ok := store.(*socketstore.Client)
	if !ok {
		return socketstore.Info{}, false
	}
	return c.Info(), true
}

// ServeSettings configure the server of a workspace:
//
//	"serve": {
//	  "addr": "127.0.0.1:8470",
//	  "tokens": [{"name": "ana", "token": "a long random secret"}],
//	  "auto": true
//	}
type ServeSettings struct {
	// Addr is where the server listens for HTTP: a loopback address
	// (127.0.0.1:PORT, [::1]:PORT, localhost:PORT). An address beyond
	// loopback is for the command line alone, never for a file.
	Addr string `json:"addr,omitempty"`
	// Tokens are who may use the server's page and API: each token, and
	// the name that what is done with it (an approval, an answer) records.
	Tokens []ServeToken `json:"tokens,omitempty"`
	// Auto asks the first command that needs the store to start a server
	// in the background, so that the commands after it share the store.
	Auto bool `json:"auto,omitempty"`
}

// ServeToken is one token of the server and the person it names.
type ServeToken struct {
	Name  string `json:"name"`
	Token string `json:"token"`
}

// MinTokenLen is the shortest token the server accepts.
const MinTokenLen = 16

// validate checks serve settings as a file gives them.
func (s *ServeSettings) validate() error {
	if s == nil {
		return nil
	}
	if s.Addr != "" {
		if err := LoopbackAddr(s.Addr); err != nil {
			return fmt.Errorf("serve.addr: %w", err)
		}
	}
	seen := map[string]bool{}
	for i, t := range s.Tokens {
		switch {
		case strings.TrimSpace(t.Name) == "":
			return fmt.Errorf("serve.tokens[%d]: no name (the person the token names)", i)
		case len(t.Token) < MinTokenLen:
			return fmt.Errorf("serve.tokens[%d] (%s): a token of %d characters; want at least %d", i, t.Name, len(t.Token), MinTokenLen)
		case seen[t.Token]:
			return fmt.Errorf("serve.tokens[%d] (%s): the same token as another", i, t.Name)
		}
		seen[t.Token] = true
	}
	return nil
}

// ErrNotLoopback: an address beyond the machine's loopback where only a
// loopback one may be given.
var ErrNotLoopback = errors.New("not a loopback address")

// LoopbackAddr returns nil if addr (host:port) listens on loopback only:
// a loopback IP, or localhost.
func LoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("address %q: %w", addr, ErrNotLoopback)
}
