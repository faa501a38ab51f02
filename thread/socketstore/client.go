package socketstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Client is a thread.Store served by the process that holds it (see
// Server): every call goes through the socket. It also keeps the held
// store's blobs and meta space (action.Blobs, action.BlobChecker,
// action.Meta), and leases threads (thread.Leaser) so that the runtimes
// of the clients and the server never act on one thread at once. It is
// safe for concurrent use.
type Client struct {
	path string
	info Info

	mu     sync.Mutex // guards idle, leases and closed
	idle   []*clientConn
	leases map[*clientConn]struct{}
	closed bool
	ops    sync.WaitGroup

	// progress is the queue of Progress.
	progress progressQueue
}

var (
	_ thread.Store  = (*Client)(nil)
	_ thread.Leaser = (*Client)(nil)
)

// maxIdle is how many connections a client keeps open between calls.
const maxIdle = 4

// Dial connects to the server of the store directory storeDir. It fails
// with ErrNoServer when nobody serves it — no socket, or one left by a
// server that is gone — and with ErrRefused or ErrProtocol when the
// server will not serve this process.
func Dial(ctx context.Context, storeDir string) (*Client, error) {
	return dialAt(ctx, Path(storeDir))
}

// dialAt connects to the server listening at the socket path.
func dialAt(ctx context.Context, path string) (*Client, error) {
	c := &Client{path: path, leases: map[*clientConn]struct{}{}}
	cc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	var info *Info
	err, _ = cc.roundTrip(ctx, request{Op: opHello, Version: Version}, func(r *response) (int, error) {
		if r.Err != nil {
			return doneOK, r.Err.err()
		}
		info = r.Hello
		return doneOK, nil
	})
	if err == nil && (info == nil || info.Version != Version) {
		err = fmt.Errorf("%w: the server at %s speaks another version", ErrProtocol, c.path)
	}
	if err != nil {
		cc.c.Close()
		if errors.Is(err, ErrServerGone) {
			// It accepted and hung up: a server that is stopping.
			return nil, fmt.Errorf("%w at %s (it is stopping)", ErrNoServer, c.path)
		}
		return nil, fmt.Errorf("connect to the harness server at %s: %w", c.path, err)
	}
	c.info = *info
	c.put(cc)
	return c, nil
}

// Info is what the server said of itself.
func (c *Client) Info() Info { return c.info }

// Path is the socket the client connects to.
func (c *Client) Path() string { return c.path }

func (c *Client) dial(ctx context.Context) (*clientConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
		return nil, fmt.Errorf("%w at %s", ErrNoServer, c.path)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		return nil, fmt.Errorf("connect to the harness server at %s: %w", c.path, err)
	}
	// The listener must be this user's (or root's) too: a socket another
	// user put at the path (the fallback directory in /tmp, say) would
	// take the appends and answer with facts of its choosing.
	if err := checkListener(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("the harness server at %s: %w", c.path, err)
	}
	cc := &clientConn{c: conn, r: bufio.NewReader(conn), w: bufio.NewWriter(conn)}
	cc.dec = msgpack.NewDecoder(cc.r)
	cc.enc = msgpack.NewEncoder(cc.w)
	return cc, nil
}

// checkListener is how a client checks the listener it reached.
var checkListener = checkPeer

// get returns an idle connection, or a new one.
func (c *Client) get(ctx context.Context) (*clientConn, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		cc := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cc, nil
	}
	c.mu.Unlock()
	cc, err := c.dial(ctx)
	if errors.Is(err, ErrNoServer) {
		return nil, fmt.Errorf("%w: %w", ErrServerGone, err)
	}
	return cc, err
}

// put keeps a connection whose call ended cleanly for the next call.
func (c *Client) put(cc *clientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.idle) >= maxIdle {
		cc.c.Close()
		return
	}
	c.idle = append(c.idle, cc)
}

// enter counts a call in, or refuses it on a closed client.
func (c *Client) enter() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return thread.ErrClosed
	}
	c.ops.Add(1)
	return nil
}

// What a response handler says of the call.
const (
	more    = iota // another response follows
	doneOK         // the call is over; the connection can be used again
	doneBad        // the call is over; the connection is not in a state to reuse
)

// call makes one call on a connection of the pool: fn sees each response
// until it says the call is over. A call the server would refuse as too
// large fails before anything of it is written (see checkCall).
func (c *Client) call(ctx context.Context, op, id string, req request, fn func(*response) (int, error)) error {
	if err := c.enter(); err != nil {
		return fmt.Errorf("%s %s: %w", op, id, err)
	}
	defer c.ops.Done()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %s: %w", op, id, err)
	}
	cc, err := c.get(ctx)
	if err != nil {
		return errorf(op, id, err)
	}
	req.Version = Version
	err, reusable := cc.roundTrip(ctx, req, fn)
	if !reusable {
		cc.c.Close()
	} else {
		c.put(cc)
	}
	var ce *connError
	if errors.As(err, &ce) {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", op, id, ctx.Err())
		}
		return errorf(op, id, ce.err)
	}
	return err
}

// one is a handler of a call answered by one response.
func one(fn func(*response) error) func(*response) (int, error) {
	return func(r *response) (int, error) {
		if r.Err != nil {
			return doneOK, r.Err.err()
		}
		return doneOK, fn(r)
	}
}

// clientConn is one connection to the server.
type clientConn struct {
	c   net.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	dec *msgpack.Decoder
	enc *msgpack.Encoder
}

// connError is an error after which the connection is not reused.
type connError struct{ err error }

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// aLongTimeAgo is a deadline in the past: setting it unblocks a read or
// write in progress.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip sends req and hands each response to fn until fn says the
// call is over. A cancelled ctx ends the call at once. An error of the
// connection itself is a *connError; reusable reports whether the
// connection can carry another call.
func (cc *clientConn) roundTrip(ctx context.Context, req request, fn func(*response) (int, error)) (err error, reusable bool) {
	if err := checkCall(&req); err != nil {
		return fmt.Errorf("%s: %w", req.Op, err), true // nothing written
	}
	stop := context.AfterFunc(ctx, func() { cc.c.SetDeadline(aLongTimeAgo) })
	defer func() {
		if !stop() {
			// ctx ended during the call: the deadline may be set. The
			// call's own result stands if it had one.
			reusable = false
		}
	}()
	if err := cc.enc.Encode(&req); err != nil {
		return &connError{err: fmt.Errorf("%w: %w", ErrServerGone, err)}, false
	}
	if err := cc.w.Flush(); err != nil {
		return &connError{err: fmt.Errorf("%w: %w", ErrServerGone, err)}, false
	}
	for {
		var r response
		if err := cc.dec.Decode(&r); err != nil {
			if ctx.Err() != nil {
				return &connError{err: ctx.Err()}, false
			}
			return &connError{err: fmt.Errorf("%w: %w", ErrServerGone, err)}, false
		}
		state, err := fn(&r)
		switch state {
		case doneOK:
			return err, true
		case doneBad:
			return &connError{err: err}, false
		}
	}
}

// Append appends through the server (see thread.Store.Append).
func (c *Client) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	ds := make([]draft, len(drafts))
	for i, d := range drafts {
		ds[i] = draft{Kind: string(d.Kind), Cause: d.Cause, Data: d.Data}
	}
	var h thread.Head
	err := c.call(ctx, "append to", id, request{Op: opAppend, Thread: id, Seq: after, Drafts: ds}, one(func(r *response) error {
		if r.Head == nil {
			return fmt.Errorf("%w: an append answered without a head", ErrProtocol)
		}
		h = r.Head.head()
		return nil
	}))
	return h, err
}

// errStopped: the caller of a read stopped it.
var errStopped = errors.New("read stopped")

// Read reads through the server (see thread.Store.Read).
func (c *Client) Read(ctx context.Context, id string, from uint64) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		err := c.call(ctx, "read", id, request{Op: opRead, Thread: id, Seq: from}, func(r *response) (int, error) {
			if r.Err != nil {
				return doneOK, r.Err.err()
			}
			if r.End {
				return doneOK, nil
			}
			f, err := facts.DecodeFact(id, r.Fact)
			if err != nil {
				return doneBad, fmt.Errorf("%w: a fact of %s that does not decode: %w", ErrProtocol, id, err)
			}
			f.Thread = id
			if err := ctx.Err(); err != nil {
				// Facts already buffered are not read past a cancel.
				return doneBad, err
			}
			if !yield(f, nil) {
				return doneBad, errStopped
			}
			return more, nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			yield(facts.Fact{}, err)
		}
	}
}

// Head asks the server (see thread.Store.Head).
func (c *Client) Head(ctx context.Context, id string) (thread.Head, error) {
	var h thread.Head
	err := c.call(ctx, "head of", id, request{Op: opHead, Thread: id}, one(func(r *response) error {
		if r.Head == nil {
			return fmt.Errorf("%w: a head answered without one", ErrProtocol)
		}
		h = r.Head.head()
		return nil
	}))
	return h, err
}

// HasCause asks the server (see thread.Store.HasCause).
func (c *Client) HasCause(ctx context.Context, id, cause string) (bool, error) {
	var ok bool
	err := c.call(ctx, "look up a cause of", id, request{Op: opHasCause, Thread: id, Text: cause}, one(func(r *response) error {
		ok = r.Bool
		return nil
	}))
	return ok, err
}

// Threads asks the server (see thread.Store.Threads).
func (c *Client) Threads(ctx context.Context, page thread.ThreadsPage) ([]thread.Head, error) {
	var out []thread.Head
	err := c.call(ctx, "list the threads", "", request{Op: opThreads, Text: page.After, Limit: page.Limit}, one(func(r *response) error {
		out = make([]thread.Head, len(r.Heads))
		for i, h := range r.Heads {
			out[i] = h.head()
		}
		return nil
	}))
	return out, err
}

// Verify asks the server to verify the thread (see thread.Store.Verify).
func (c *Client) Verify(ctx context.Context, id string) error {
	return c.call(ctx, "verify", id, request{Op: opVerify, Thread: id}, one(func(*response) error { return nil }))
}

// Backing is the client itself: the runtimes of this process that use it
// hold a thread by it, and lease it through it.
func (c *Client) Backing() thread.Store { return c }

// Close waits for the calls and reads in progress, ends the leases still
// held (their contexts end with thread.ErrLeaseLost) and closes the
// connections. The server and its store go on.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return thread.ErrClosed
	}
	c.closed = true
	c.mu.Unlock()
	c.stopProgress()
	c.ops.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cc := range c.idle {
		cc.c.Close()
	}
	c.idle = nil
	for cc := range c.leases {
		cc.c.Close()
	}
	return nil
}

// PutBlob keeps data in the held store's blobs (see action.Blobs).
func (c *Client) PutBlob(ctx context.Context, data []byte) (string, error) {
	var d string
	if data == nil {
		data = []byte{}
	}
	err := c.call(ctx, "put blob", "", request{Op: opPutBlob, Data: data}, one(func(r *response) error {
		d = r.Text
		return nil
	}))
	return d, err
}

// GetBlob returns the bytes kept under digest, or an error matching
// fs.ErrNotExist.
func (c *Client) GetBlob(ctx context.Context, digest string) ([]byte, error) {
	var b []byte
	err := c.call(ctx, "get blob", digest, request{Op: opGetBlob, Text: digest}, one(func(r *response) error {
		b = r.Data
		return nil
	}))
	if err == nil {
		if sum, perr := thread.ParseBlobDigest(digest); perr == nil {
			if cerr := thread.CheckBlob(sum, b); cerr != nil {
				return nil, fmt.Errorf("get blob %s: %w", digest, cerr)
			}
		}
	}
	return b, err
}

// HasBlob reports whether the held store keeps bytes under digest.
func (c *Client) HasBlob(ctx context.Context, digest string) (bool, error) {
	if !c.info.Blobs {
		return false, nil
	}
	var ok bool
	err := c.call(ctx, "look up blob", digest, request{Op: opHasBlob, Text: digest}, one(func(r *response) error {
		ok = r.Bool
		return nil
	}))
	if errors.Is(err, errUnsupported) {
		return false, nil
	}
	return ok, err
}

// GetMeta returns a value of the held store's meta space (see
// action.Meta), or an error matching fs.ErrNotExist.
func (c *Client) GetMeta(ctx context.Context, ns string, key []byte) ([]byte, error) {
	if !c.info.Meta {
		return nil, fmt.Errorf("get meta %s: none kept: %w", ns, fs.ErrNotExist)
	}
	var v []byte
	err := c.call(ctx, "get meta", ns, request{Op: opGetMeta, Text: ns, Data: key}, one(func(r *response) error {
		v = r.Data
		if v == nil {
			v = []byte{}
		}
		return nil
	}))
	return v, err
}

// PutMeta sets values of the held store's meta space, all at once (see
// action.Meta). Where the held store keeps none, it does nothing.
func (c *Client) PutMeta(ctx context.Context, ns string, kv iter.Seq2[[]byte, []byte]) error {
	if !c.info.Meta {
		return nil
	}
	req := request{Op: opPutMeta, Text: ns}
	for k, v := range kv {
		req.Keys = append(req.Keys, k)
		req.Values = append(req.Values, v)
		req.Deletes = append(req.Deletes, v == nil)
	}
	if len(req.Keys) == 0 {
		return nil
	}
	return c.call(ctx, "put meta", ns, req, one(func(*response) error { return nil }))
}

// releaseWait bounds how long a release waits for the server to say the
// thread is free.
const releaseWait = 5 * time.Second

// Lease holds the thread in the server's process, as harness.Hold holds it
// there, for as long as the caller keeps it (see thread.Leaser): it waits
// while a runtime of the server, or another client, holds the thread. The
// context it returns ends with thread.ErrLeaseLost if the server goes
// away; release lets go, and returns once the server has.
func (c *Client) Lease(ctx context.Context, id string) (context.Context, func(), error) {
	if err := c.enter(); err != nil {
		return nil, nil, fmt.Errorf("lease %s: %w", id, err)
	}
	defer c.ops.Done()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("lease %s: %w", id, err)
	}
	cc, err := c.dial(ctx)
	if err != nil {
		if errors.Is(err, ErrNoServer) {
			err = fmt.Errorf("%w: %w", ErrServerGone, err)
		}
		return nil, nil, errorf("lease", id, err)
	}
	err, reusable := cc.roundTrip(ctx, request{Op: opLease, Version: Version, Thread: id}, one(func(*response) error { return nil }))
	if err == nil && !reusable {
		// Held just as ctx ended: let go at once.
		err = &connError{err: ctx.Err()}
	}
	if err != nil {
		cc.c.Close()
		var ce *connError
		if errors.As(err, &ce) && ctx.Err() != nil {
			return nil, nil, fmt.Errorf("lease %s: %w", id, ctx.Err())
		}
		if errors.As(err, &ce) {
			return nil, nil, errorf("lease", id, ce.err)
		}
		return nil, nil, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cc.c.Close()
		return nil, nil, fmt.Errorf("lease %s: %w", id, thread.ErrClosed)
	}
	c.leases[cc] = struct{}{}
	c.mu.Unlock()

	held, cancel := context.WithCancelCause(ctx)
	var releasing atomic.Bool
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		// The server says nothing more until it lets go: anything, or the
		// connection's end, before release is a lease lost.
		var r response
		cc.dec.Decode(&r)
		if !releasing.Load() {
			cancel(fmt.Errorf("%w: the harness server let go of %s", thread.ErrLeaseLost, id))
		}
	}()
	release := sync.OnceFunc(func() {
		releasing.Store(true)
		cc.c.SetWriteDeadline(time.Now().Add(releaseWait))
		if cc.enc.Encode(&request{Op: opRelease}) == nil && cc.w.Flush() == nil {
			select {
			case <-ended:
			case <-time.After(releaseWait):
			}
		}
		cc.c.Close()
		<-ended
		c.mu.Lock()
		delete(c.leases, cc)
		c.mu.Unlock()
		cancel(nil)
	})
	return held, release, nil
}
