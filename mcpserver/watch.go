package mcpserver

import (
	"context"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/thread"
)

// Peeker is a Workspace whose store can be read while the server holds
// none of it and other processes append to it (drive.Peek; the stock
// session's Peeker). A subscription watches the threads through it. A
// Workspace that is not one is read through Open, as for a request.
type Peeker interface {
	// Peek returns how to read the store for a watch, and done, which
	// ends it.
	Peek(ctx context.Context) (peek drive.Peek, done func(), err error)
}

// watchEvery is how often a subscription's threads are looked at: as
// often as drive.WatchAnswer looks for an answer given elsewhere. A look
// opens the store only when its files changed (Peeker).
const watchEvery = 200 * time.Millisecond

// maxSubscriptions bounds the resources one session may subscribe to.
const maxSubscriptions = 256

// watcher sends notifications/resources/updated to the sessions
// subscribed to a thread's resources when a fact is appended to it,
// by this server (appended) or by any other process (seen by a look
// through the workspace's Peek). One goroutine looks while there is a
// subscription, and ends with the last (unsubscribed, or its session
// closed).
type watcher struct {
	srv *sdk.Server
	ws  Workspace

	mu sync.Mutex // guards the fields below
	// subs are the subscribed URIs, each with its thread and sessions.
	subs map[string]*subscription
	// heads are the seq each watched thread was last seen at.
	heads map[string]uint64
	// running is set while the goroutine looks.
	running bool
}

type subscription struct {
	thread   string
	sessions map[*sdk.ServerSession]bool
}

func newWatcher(ws Workspace) *watcher {
	return &watcher{ws: ws, subs: map[string]*subscription{}, heads: map[string]uint64{}}
}

// subscribe subscribes ss to uri, a resource of thread id at seq head.
func (w *watcher) subscribe(ss *sdk.ServerSession, uri, id string, head uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, s := range w.subs {
		if s.sessions[ss] {
			n++
		}
	}
	sub := w.subs[uri]
	if (sub == nil || !sub.sessions[ss]) && n >= maxSubscriptions {
		return ErrTooManySubscriptions
	}
	if sub == nil {
		sub = &subscription{thread: id, sessions: map[*sdk.ServerSession]bool{}}
		w.subs[uri] = sub
	}
	sub.sessions[ss] = true
	if _, ok := w.heads[id]; !ok {
		w.heads[id] = head
	}
	if !w.running {
		w.running = true
		go w.watch()
	}
	return nil
}

// unsubscribe ends ss's subscription to uri.
func (w *watcher) unsubscribe(ss *sdk.ServerSession, uri string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if sub := w.subs[uri]; sub != nil {
		delete(sub.sessions, ss)
		w.prune()
	}
}

// prune drops the subscriptions of no session, and the heads of threads
// nobody watches. w.mu is held.
func (w *watcher) prune() {
	watched := map[string]bool{}
	for uri, sub := range w.subs {
		if len(sub.sessions) == 0 {
			delete(w.subs, uri)
			continue
		}
		watched[sub.thread] = true
	}
	for id := range w.heads {
		if !watched[id] {
			delete(w.heads, id)
		}
	}
}

// appended tells the watcher that this server appended to thread id, up
// to seq: its subscribers are told at once.
func (w *watcher) appended(id string, seq uint64) {
	w.mu.Lock()
	last, ok := w.heads[id]
	if !ok || seq <= last {
		w.mu.Unlock()
		return
	}
	w.heads[id] = seq
	uris := w.urisOf(id)
	w.mu.Unlock()
	w.notify(uris)
}

// urisOf are the subscribed URIs of thread id. w.mu is held.
func (w *watcher) urisOf(id string) []string {
	var uris []string
	for uri, sub := range w.subs {
		if sub.thread == id {
			uris = append(uris, uri)
		}
	}
	return uris
}

func (w *watcher) notify(uris []string) {
	for _, uri := range uris {
		// A session gone meanwhile misses it; the log keeps the fact.
		_ = w.srv.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// watch looks at the watched threads' heads every watchEvery through the
// workspace's Peek, and tells the subscribers of those that moved, until
// nobody is subscribed.
func (w *watcher) watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	peek, done := w.peeker(ctx)
	defer done()
	// A fact appended between a subscription's read of the head and the
	// peek's start is seen by a look of its own.
	w.look(ctx, w.opened)
	t := time.NewTimer(watchEvery)
	defer t.Stop()
	for {
		<-t.C
		if !w.live() {
			return
		}
		w.look(ctx, peek)
		t.Reset(watchEvery)
	}
}

// look reads the watched threads' heads through peek, and tells the
// subscribers of those that moved.
func (w *watcher) look(ctx context.Context, peek drive.Peek) {
	var moved []string
	_ = peek(ctx, func(s thread.Store) error {
		w.mu.Lock()
		ids := make([]string, 0, len(w.heads))
		for id := range w.heads {
			ids = append(ids, id)
		}
		w.mu.Unlock()
		for _, id := range ids {
			h, err := s.Head(ctx, id)
			if err != nil {
				continue
			}
			w.mu.Lock()
			if last, ok := w.heads[id]; ok && h.Seq > last {
				w.heads[id] = h.Seq
				moved = append(moved, w.urisOf(id)...)
			}
			w.mu.Unlock()
		}
		return nil
	})
	w.notify(moved)
}

// live drops the subscriptions of sessions that ended, and reports
// whether any is left; when none is, the goroutine is done.
func (w *watcher) live() bool {
	open := map[*sdk.ServerSession]bool{}
	for ss := range w.srv.Sessions() {
		open[ss] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, sub := range w.subs {
		for ss := range sub.sessions {
			if !open[ss] {
				delete(sub.sessions, ss)
			}
		}
	}
	w.prune()
	if len(w.subs) == 0 {
		w.running = false
		return false
	}
	return true
}

// peeker is how the watch reads the store: the workspace's Peek, or a
// request's Open.
func (w *watcher) peeker(ctx context.Context) (drive.Peek, func()) {
	if p, ok := w.ws.(Peeker); ok {
		if peek, done, err := p.Peek(ctx); err == nil {
			return peek, done
		}
	}
	return w.opened, func() {}
}

// opened reads the store as a request does (Workspace.Open).
func (w *watcher) opened(ctx context.Context, look func(thread.Store) error) error {
	o, err := w.ws.Open(ctx, OpenRequest{})
	if err != nil {
		return nil // held by another process: look again later
	}
	defer o.Close()
	return look(o.Runtime.Store)
}
