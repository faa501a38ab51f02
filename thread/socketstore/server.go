package socketstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Listen makes the socket of the store directory storeDir (see Path), in
// the store's runtime directory (made if need be, see RunDir), and
// listens on it. Only the process that holds the store may call it: a
// socket file already there was left by a server that is gone (it held
// the store, which is now this process's), and is replaced; so is one an
// older server left in the store directory itself. The socket's mode is
// 0600, and the server refuses a process of another user or of another
// user namespace (a sandboxed command) all the same (see Server.Serve).
func Listen(storeDir string) (net.Listener, error) {
	dir, err := RunDir(storeDir)
	if err != nil {
		return nil, fmt.Errorf("listen for %s: %w", storeDir, err)
	}
	p := filepath.Join(dir, SocketName)
	for _, old := range []string{p, filepath.Join(storeDir, SocketName)} {
		if err := removeSocket(old); err != nil {
			return nil, fmt.Errorf("listen for %s: remove the old socket: %w", storeDir, err)
		}
	}
	// The socket is made with the umask's mode: make it private from the
	// start, so no other user ever connects between bind and chmod.
	ln, err := listenPrivate(p)
	if err != nil {
		return nil, fmt.Errorf("listen for %s: %w", storeDir, err)
	}
	return ln, nil
}

// removeSocket removes the socket file at p, if there is one; anything
// else there is left alone.
func removeSocket(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Server serves one store to the clients that dial its socket.
type Server struct {
	store   thread.Store
	hold    HoldFunc
	blobs   Blobs
	checker blobChecker
	meta    metaSpace
	info    Info
	sink    ProgressSink
	leases  leases
	work    *Work

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex // guards closed, lns, conns and last
	closed  bool
	lns     map[net.Listener]struct{}
	conns   map[*serverConn]struct{}
	last    time.Time // when the last connection ended, or the server began
	handled sync.WaitGroup
}

// Option configures a Server.
type Option func(*Server)

// WithURL is the URL the server's process serves HTTP at, for the clients
// to tell a person (no token in it).
func WithURL(url string) Option { return func(s *Server) { s.info.URL = url } }

// WithBlobs serves b as the held store's blobs (and meta space, if b has
// one) where the store itself does not say it keeps them: a store that
// wraps another.
func WithBlobs(b Blobs) Option {
	return func(s *Server) { s.setBlobs(b) }
}

// HoldFunc holds thread id of store in the server's process until the
// context it returns ends or release is called. The server leases a
// thread to a client with it, so a server passes the function its
// process's runtimes hold threads with (harness.Hold): then a client's
// lease and the process's own runtimes meet in one lock.
type HoldFunc func(ctx context.Context, store thread.Store, id string) (held context.Context, release func(), err error)

// Blobs is a store's content-addressed blobs as the server serves them:
// the methods of action.Blobs, which every such store has, declared here
// so that a store package imports nothing above thread.
type Blobs interface {
	PutBlob(ctx context.Context, data []byte) (digest string, err error)
	GetBlob(ctx context.Context, digest string) ([]byte, error)
}

// blobChecker is action.BlobChecker, as served.
type blobChecker interface {
	HasBlob(ctx context.Context, digest string) (bool, error)
}

// metaSpace is action.Meta, as served.
type metaSpace interface {
	GetMeta(ctx context.Context, ns string, key []byte) ([]byte, error)
	PutMeta(ctx context.Context, ns string, kv iter.Seq2[[]byte, []byte]) error
}

// holdNone is the HoldFunc of a server made without one: it holds
// nothing.
func holdNone(context.Context, thread.Store, string) (context.Context, func(), error) {
	return nil, nil, ErrNoHold
}

// NewServer returns a server of store that leases threads to its clients
// with hold (see HoldFunc). The store's blobs and meta space (Blobs, and
// action.Meta and action.BlobChecker, if it or its backing store keeps
// them) are served too.
func NewServer(store thread.Store, hold HoldFunc, opts ...Option) *Server {
	s := &Server{store: store, hold: hold, lns: map[net.Listener]struct{}{}, conns: map[*serverConn]struct{}{}, last: time.Now()}
	s.info = Info{Version: Version, PID: os.Getpid()}
	for _, cand := range []any{store, store.Backing()} {
		if b, ok := cand.(Blobs); ok && s.blobs == nil {
			s.setBlobs(b)
		}
	}
	for _, o := range opts {
		o(s)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

func (s *Server) setBlobs(b Blobs) {
	s.blobs = b
	s.checker, _ = b.(blobChecker)
	s.meta, _ = b.(metaSpace)
	s.info.Blobs, s.info.Meta = b != nil, s.meta != nil
}

// Serve accepts connections on ln until ln or the server is closed, and
// serves each. It returns nil once the server is closed.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("serve the store: %w", err)
		}
		sc := &serverConn{s: s, c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
		sc.cr = &callReader{r: sc.r, rd: sc.r}
		sc.dec = msgpack.NewDecoder(sc.cr)
		sc.enc = msgpack.NewEncoder(sc.w)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return nil
		}
		s.conns[sc] = struct{}{}
		s.handled.Add(1)
		s.mu.Unlock()
		go sc.serve()
	}
}

// Clients is the number of connections open now, and since when there
// have been none (the zero time while there are some): for a server that
// stops when nobody has used it for a while.
func (s *Server) Clients() (open int, idleSince time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) > 0 {
		return len(s.conns), time.Time{}
	}
	return 0, s.last
}

// Close stops the server: it stops accepting, ends every lease it holds
// for a client (the client's lease context ends with
// thread.ErrLeaseLost), lets each call in progress finish, closes every
// connection, and waits for them. It does not close the store.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.closeIfIdle()
	}
	s.mu.Unlock()
	s.cancel()
	s.handled.Wait()
	return nil
}

// serverConn is one client's connection.
type serverConn struct {
	s   *Server
	c   net.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	cr  *callReader // what dec reads, through each call's budget
	dec *msgpack.Decoder
	enc *msgpack.Encoder

	mu   sync.Mutex // guards busy
	busy bool
	// pid is the client's process (0 where the system does not say).
	pid int
}

// closeIfIdle closes the connection unless a call is in progress, which
// closes it when it ends.
func (c *serverConn) closeIfIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.busy {
		c.c.Close()
	}
}

func (c *serverConn) serve() {
	s := c.s
	defer func() {
		c.c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		if len(s.conns) == 0 {
			s.last = time.Now()
		}
		s.mu.Unlock()
		s.handled.Done()
	}()
	if err := checkPeer(c.c); err != nil {
		// Read its first call before saying no: a connection closed with
		// a call unread resets, and the client would never see why.
		c.c.SetDeadline(time.Now().Add(5 * time.Second))
		decodeRequest(c.dec, c.cr, maxSmallCall)
		c.send(response{Err: errOut(err)})
		c.w.Flush()
		return
	}
	c.pid = peerPID(c.c)
	for {
		req, err := decodeRequest(c.dec, c.cr, maxCallBytes)
		if err != nil {
			// The client closed, or sent what is not a request, or one
			// too large (see callBudget): say why, unread, and hang up.
			if errors.Is(err, ErrProtocol) {
				c.send(response{Err: errOut(err)})
				c.w.Flush()
			}
			return
		}
		// Busy first, then closed: Close, which looks at them the other
		// way round under the server's lock, either sees this call busy
		// (and leaves it to finish) or this call sees the server closed.
		c.mu.Lock()
		c.busy = true
		c.mu.Unlock()
		if s.isClosed() {
			return
		}
		keep := c.handle(req)
		if err := c.w.Flush(); err != nil {
			keep = false
		}
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
		if !keep || s.isClosed() {
			return
		}
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// send writes one response; the caller flushes.
func (c *serverConn) send(r response) error { return c.enc.Encode(&r) }

// handle answers one request and reports whether the connection goes on.
func (c *serverConn) handle(req request) bool {
	s := c.s
	ctx := s.ctx
	fail := func(err error) bool { return c.send(response{Err: errOut(err)}) == nil }
	if req.Version != 0 && req.Version != Version {
		fail(fmt.Errorf("%w: the client speaks version %d, this server %d", ErrProtocol, req.Version, Version))
		return false
	}
	switch req.Op {
	case opHello:
		info := s.info
		if s.work != nil {
			info.Work = true
			info.Drives, info.Workers = s.work.info()
		}
		return c.send(response{Hello: &info}) == nil
	case opAppend:
		ds := make([]facts.Draft, len(req.Drafts))
		for i, d := range req.Drafts {
			ds[i] = facts.Draft{Kind: facts.Kind(d.Kind), Cause: d.Cause, Data: d.Data}
		}
		h, err := s.store.Append(ctx, req.Thread, req.Seq, ds...)
		if err != nil {
			return fail(err)
		}
		wh := headOut(h)
		return c.send(response{Head: &wh}) == nil
	case opRead:
		return c.read(ctx, req)
	case opHead:
		h, err := s.store.Head(ctx, req.Thread)
		if err != nil {
			return fail(err)
		}
		wh := headOut(h)
		return c.send(response{Head: &wh}) == nil
	case opHasCause:
		ok, err := s.store.HasCause(ctx, req.Thread, req.Text)
		if err != nil {
			return fail(err)
		}
		return c.send(response{Bool: ok}) == nil
	case opThreads:
		hs, err := s.store.Threads(ctx, thread.ThreadsPage{After: req.Text, Limit: req.Limit})
		if err != nil {
			return fail(err)
		}
		out := make([]wireHead, len(hs))
		for i, h := range hs {
			out[i] = headOut(h)
		}
		return c.send(response{Heads: out, End: true}) == nil
	case opVerify:
		if err := s.store.Verify(ctx, req.Thread); err != nil {
			return fail(err)
		}
		return c.send(response{Bool: true}) == nil
	case opPutBlob:
		if s.blobs == nil {
			return fail(errUnsupported)
		}
		d, err := s.blobs.PutBlob(ctx, req.Data)
		if err != nil {
			return fail(err)
		}
		return c.send(response{Text: d}) == nil
	case opGetBlob:
		if s.blobs == nil {
			return fail(fmt.Errorf("get blob %s: %w: %w", req.Text, errUnsupported, errNotKept))
		}
		b, err := s.blobs.GetBlob(ctx, req.Text)
		if err != nil {
			return fail(err)
		}
		return c.send(response{Data: b}) == nil
	case opHasBlob:
		if s.checker == nil {
			return fail(errUnsupported)
		}
		ok, err := s.checker.HasBlob(ctx, req.Text)
		if err != nil {
			return fail(err)
		}
		return c.send(response{Bool: ok}) == nil
	case opGetMeta:
		if s.meta == nil {
			return fail(fmt.Errorf("get meta %s: %w: %w", req.Text, errUnsupported, errNotKept))
		}
		v, err := s.meta.GetMeta(ctx, req.Text, req.Data)
		if err != nil {
			return fail(err)
		}
		return c.send(response{Data: v}) == nil
	case opPutMeta:
		if s.meta == nil {
			return fail(errUnsupported)
		}
		if len(req.Keys) != len(req.Values) || len(req.Keys) != len(req.Deletes) {
			return fail(fmt.Errorf("%w: put meta of %d keys, %d values", ErrProtocol, len(req.Keys), len(req.Values)))
		}
		err := s.meta.PutMeta(ctx, req.Text, func(yield func([]byte, []byte) bool) {
			for i, k := range req.Keys {
				v := req.Values[i]
				if req.Deletes[i] {
					v = nil
				} else if v == nil {
					v = []byte{}
				}
				if !yield(k, v) {
					return
				}
			}
		})
		if err != nil {
			return fail(err)
		}
		return c.send(response{Bool: true}) == nil
	case opLease:
		c.lease(req.Thread)
		return false
	case opWork:
		c.serveWork()
		return false
	case opProgress:
		s.takeProgress(c.pid, req.Progress)
		return c.send(response{Bool: true}) == nil
	}
	fail(fmt.Errorf("%w: unknown call %q", ErrProtocol, req.Op))
	return false
}

// errNotKept makes a missing capability read as nothing kept.
var errNotKept = fmt.Errorf("none kept: %w", os.ErrNotExist)

// read streams the facts of a read, then End. The stream stops when the
// client stops reading (its connection closes).
func (c *serverConn) read(ctx context.Context, req request) bool {
	for f, err := range c.s.store.Read(ctx, req.Thread, req.Seq) {
		if err != nil {
			return c.send(response{Err: errOut(err), End: true}) == nil
		}
		b, err := facts.Encode(f)
		if err != nil {
			return c.send(response{Err: errOut(err), End: true}) == nil
		}
		if c.send(response{Fact: b}) != nil {
			return false
		}
		if c.w.Buffered() > 32<<10 && c.w.Flush() != nil {
			return false
		}
	}
	return c.send(response{End: true}) == nil
}

// lease holds the thread for the client with the server's HoldFunc, as
// the runtimes of this process hold it, until the client releases it
// (sends release, or closes the connection) or the server closes. The client learns it holds the
// thread from one response, and that it let go from a second.
func (c *serverConn) lease(id string) {
	if err := thread.ValidateID(id); err != nil {
		c.send(response{Err: errOut(fmt.Errorf("lease: %w", err))})
		return
	}
	ctx, cancel := context.WithCancel(c.s.ctx)
	defer cancel()
	// The connection's next message (release), or its end, lets go.
	released := make(chan struct{})
	go func() {
		defer close(released)
		decodeRequest(c.dec, c.cr, maxSmallCall)
		cancel()
	}()
	hold := c.s.hold
	if hold == nil {
		hold = holdNone
	}
	held, release, err := hold(ctx, c.s.store, id)
	if err != nil {
		c.send(response{Err: errOut(fmt.Errorf("lease %s: %w", id, err))})
		c.w.Flush()
		<-released
		return
	}
	// Counted in before the client is told: it may send the thread's
	// progress (on another connection) as soon as it has the lease, and
	// the server takes progress only of the threads its clients hold.
	s := c.s
	s.leaseIn(id, c.pid)
	if c.send(response{Bool: true}) != nil || c.w.Flush() != nil {
		s.leaseOut(id, c.pid)
		release()
		cancel()
		c.c.Close()
		<-released
		return
	}
	<-held.Done()
	s.leaseOut(id, c.pid)
	release()
	// Tell the client the thread is free again (it may wait for this, so
	// that what it does next finds the thread free), then hang up.
	c.send(response{End: true})
	c.w.Flush()
	c.c.Close()
	<-released
}
