package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// ErrServed: a harness server holds the store already (NotServed).
var ErrServed = errors.New("a harness server already holds the store")

// NotServed checks that no harness server holds the place's store, as
// one must not when this process is to hold it: one that does is
// ErrServed, naming its pid and address. A NATS store is never held.
func NotServed(ctx context.Context, p stock.Place) error {
	if p.Remote != "" {
		return nil
	}
	c, err := socketstore.Dial(ctx, p.Store)
	if err != nil {
		return nil
	}
	info := c.Info()
	c.Close()
	url := ""
	if info.URL != "" {
		url = ", " + info.URL
	}
	return fmt.Errorf("%w %s (pid %d%s); every command goes through it", ErrServed, p.Store, info.PID, url)
}

// Hosting says how HostSession serves a session's store.
type Hosting struct {
	// Addr is the address the person named, which may be beyond
	// loopback. "" is the settings' serve.addr, which may name only
	// loopback (else stock.ErrNotLoopback: the settings refuse another
	// when they are read), else DefaultAddr, or any free port
	// of loopback when that one is taken.
	Addr string
	// Who is the person the fresh token names (the settings' serve
	// tokens are added to it).
	Who string
	// Approval decides for the threads the page starts and resumes.
	Approval drive.Approval
	// Work is the queue of submitted threads, for a store in a directory.
	Work *socketstore.Work
	// Logf is told what the server logs (Options.Logf).
	Logf func(format string, args ...any)
}

// HostSession serves the open store of the session s (Host): the page
// and the API at the address h says, and, for a store in a directory,
// the socket every other process of the workspace goes through. The
// session's store becomes the server's, so that the streams see what
// this process appends; a NATS store, which other processes append to
// directly, is polled.
func HostSession(s *stock.Session, h Hosting) (*Hosted, error) {
	addr := h.Addr
	if addr == "" && s.Settings().Serve != nil {
		addr = s.Settings().Serve.Addr
	}
	if addr == "" {
		addr = DefaultAddr
	}
	if err := stock.LoopbackAddr(addr); err != nil && h.Addr == "" {
		return nil, fmt.Errorf("serve %w", err)
	}
	poll := time.Duration(0)
	if s.Place.Remote != "" {
		poll = time.Second
	}
	hosted, err := Host(s.Place, Options{Store: s.Store, Stock: s.Stock, Tokens: Tokens(h.Who, s.Settings()), Approval: h.Approval,
		Poll: poll, Work: h.Work, Logf: h.Logf}, addr, h.Addr == "" && addr == DefaultAddr)
	if err != nil {
		return nil, err
	}
	s.Store = hosted.Store()
	return hosted, nil
}
