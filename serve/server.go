package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// Options configure a Server.
type Options struct {
	// Store is the store the server holds (or, on NATS, shares).
	Store thread.Store
	// Stock is the stock harness of the server's workspace: its actor
	// folds every thread; its tools and observer run the threads of this
	// workspace the server resumes.
	Stock *stock.Stock
	// Tokens are who may use the page and the API: at least one.
	Tokens []stock.ServeToken
	// Approval answers the confirmations it decides when the server
	// resumes a thread; the rest wait for a person.
	Approval drive.Approval
	// Policy, when set, decides instead of Approval: a Go policy (see
	// drive.Policy), its answers recorded by its name.
	Policy drive.Policy
	// LoadModel loads the model a thread recorded when the server resumes
	// it; nil is stock.LoadModel.
	LoadModel func(spec string) (model.Model, error)
	// Work, when set, is the queue of work of a store in a directory
	// (socketstore.Work): every append the server's store makes (its own
	// runtimes', its socket's clients') is told to it, and the socket
	// gives its jobs to the workers of other processes (harness worker).
	Work *socketstore.Work
	// Poll is how often the server looks for facts other processes
	// appended to the store without it (a shared store); 0 for a store
	// only this process appends to, itself or for its socket's clients.
	Poll time.Duration
	// Logf says what the server does (a resume, its end, an error); nil
	// says nothing.
	Logf func(format string, args ...any)
	// MaxBody bounds a post's body (default 64 KiB).
	MaxBody int64
	// WriteTimeout bounds each write to a client, so that one that stops
	// reading is let go (default 10s); KeepAlive is how often a quiet
	// stream says it is alive (default 15s).
	WriteTimeout, KeepAlive time.Duration
}

// Server serves a store's threads to people and programs. Its Handler is
// the page and the API; its Store is the store to give everything else
// the server's process runs (the socket's server, the runtimes it
// resumes threads with), so that the streams see every append.
type Server struct {
	opts   Options
	store  thread.Store // notifies the hub of every append
	blobs  action.Blobs
	hub    *hub
	live   *liveHub // the progress of the threads the server drives
	reader *harness.Runtime
	// session builds every runtime the server runs, on store.
	session *stock.Session
	*Guard
	mux *http.ServeMux

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards kept, runs, the fields of every run in runs, and closed:
	// the server's bookkeeping, never held across a read of the store or
	// a resume. A kept thread's fold has a lock of its own (cached.mu).
	mu     sync.Mutex
	kept   map[string]*cached
	runs   map[string]*run
	closed bool
}

// cached is a thread whose fold the server keeps between requests.
type cached struct {
	mu sync.Mutex // guards th and record: one request reads or answers through them at a time
	th *harness.Thread
	// record is the thread's verdict kept by the page's panel (see
	// panel.go), nil until a panel asks.
	record *audit.Follower
}

// ErrNoToken: a server with no token would let anyone act.
var ErrNoToken = errors.New("a server needs at least one token")

// New returns a server of opts.Store.
func New(opts Options) (*Server, error) {
	if opts.Store == nil || opts.Stock == nil {
		return nil, errors.New("serve: a store and a stock harness are needed")
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 64 << 10
	}
	guard, err := NewGuard(opts.Tokens, opts.MaxBody)
	if err != nil {
		return nil, err
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = 15 * time.Second
	}
	if opts.LoadModel == nil {
		opts.LoadModel = func(spec string) (model.Model, error) { return stock.LoadModel(spec) }
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	s := &Server{opts: opts, kept: map[string]*cached{}, runs: map[string]*run{}, Guard: guard}
	s.blobs = stock.BlobsOf(opts.Store)
	s.hub = newHub()
	s.live = newLiveHub()
	s.store = notifyAppends(opts.Store, s.hub, opts.Work)
	s.session = stock.SessionOf(s.store, opts.Stock)
	rt, _, err := s.session.Runtime(stock.WithoutObserver())
	if err != nil {
		return nil, err
	}
	s.reader = rt
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.routes()
	s.followNATS()
	s.wg.Add(1)
	go s.indexAppends()
	if opts.Poll > 0 {
		s.wg.Add(1)
		go s.poll(opts.Poll)
	}
	return s, nil
}

// NewToken returns a fresh random token for a server to print.
func NewToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // the system's randomness is gone
	}
	return hex.EncodeToString(b)
}

// Store is the store the server's process should use for everything it
// runs on the held store (the socket's server, its own runtimes): the
// held store, with every append seen by the server's streams.
func (s *Server) Store() thread.Store { return s.store }

// Handler is the page and the API.
func (s *Server) Handler() http.Handler { return s.mux }

// Close stops the server's resumes (a transition in progress is
// interrupted, its thread stays resumable), ends its streams and waits
// for them. It does not close the store.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// HTTPServer returns an http.Server of the handler with the timeouts a
// server facing slow or idle clients needs: a request's headers within
// 10s and its body within 30s, idle connections closed after 2 minutes.
// Writes are bounded per write (Options.WriteTimeout) rather than per
// response, so that a live stream may last.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
	}
}

// URL is the address a person opens: the server's page at addr, with the
// token that lets them in.
func URL(addr net.Addr, token string) string {
	host := addr.String()
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", fmt.Sprint(ta.Port))
	}
	u := url.URL{Scheme: "http", Host: host, Path: "/"}
	if token != "" {
		u.RawQuery = url.Values{"token": {token}}.Encode()
	}
	return u.String()
}

// cachedThread is the server's kept fold of the thread id; the id must be
// valid. A child is folded by the actor its delegation composes, as its
// own runtime folds it (harness.Runtime.Open).
func (s *Server) cachedThread(ctx context.Context, id string) *cached {
	s.mu.Lock()
	c := s.kept[id]
	s.mu.Unlock()
	if c != nil {
		return c
	}
	th, err := s.reader.Open(ctx, s.opts.Stock.Actor, id)
	if err != nil {
		// Not kept: a thread not there yet says so at its first read, and
		// the next call opens it again.
		return &cached{th: s.reader.Thread(s.opts.Stock.Actor, id)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.kept[id]; c != nil {
		return c
	}
	c = &cached{th: th}
	s.kept[id] = c
	return c
}

// forget drops the kept fold of a thread that turned out not to exist.
func (s *Server) forget(id string) {
	s.mu.Lock()
	delete(s.kept, id)
	s.mu.Unlock()
}

// inspect is drive.Inspect of the thread, from its kept fold.
func (s *Server) inspect(ctx context.Context, id string) (drive.State, error) {
	c := s.cachedThread(ctx, id)
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := drive.Inspect(ctx, c.th)
	if errors.Is(err, harness.ErrUnknownThread) {
		s.forget(id)
	}
	return st, err
}

// here reports whether a thread recorded as working in workspace works in
// the server's own (or recorded none): the server resumes only those.
func (s *Server) here(workspace string) bool {
	return workspace == "" || workspace == s.opts.Stock.Config.Workspace
}

// DefaultAddr is where a server listens for HTTP when nothing says
// otherwise.
const DefaultAddr = "127.0.0.1:8470"

// InfoFile is the file where a running server says where it is (its
// address with its token: mode 0600, as a Jupyter runtime file), and
// LogFile the log of a server started in the background. Both are in the
// store's runtime directory (socketstore.RunDir) beside the socket, never
// in the store or the workspace: the sandbox hides that directory from
// every command of every workspace. (Servers before this one wrote the
// info file in the store directory; Host removes what they left there.)
const (
	InfoFile = "serve.json"
	LogFile  = "serve.log"
)

// Hosted is a server a process runs on a place's store (see Host): its
// page and API listening, and, for a store in a directory, the socket
// every other process of the workspace goes through.
type Hosted struct {
	*Server
	// URL is the page's address with the first token; Socket the path
	// of the socket every other process of the workspace goes through
	// ("" for a NATS store, which they reach themselves).
	URL    string
	Socket string
	addr   net.Addr
	http   *http.Server
	sock   *socketstore.Server
	file   string // the info file, removed when it stops
	// last is when a request last ended (unix nanoseconds), active how
	// many are in progress: for IdleSince.
	last, active atomic.Int64
	done         chan error
}

// Host serves the store o.Store of the place p: the page and the API at
// addr ("" is DefaultAddr; with anyPort, an address that is taken is
// replaced by any free port of loopback), and, for a store in a
// directory, the socket every other process of the workspace reads and
// appends through (see package thread/socketstore), with the info file
// beside it. Its Store is the one the process is to use from now on. Stop
// stops it; the store stays open.
func Host(p stock.Place, o Options, addr string, anyPort bool) (*Hosted, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	srv, err := New(o)
	if err != nil {
		return nil, err
	}
	h := &Hosted{Server: srv, done: make(chan error, 2)}
	h.last.Store(time.Now().UnixNano())
	ln, err := net.Listen("tcp", addr)
	if err != nil && anyPort {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("serve: listen at %s: %w", addr, err)
	}
	h.addr, h.URL = ln.Addr(), URL(ln.Addr(), o.Tokens[0].Token)
	h.http = srv.HTTPServer()
	handler := h.http.Handler
	h.http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.active.Add(1)
		defer func() { h.active.Add(-1); h.last.Store(time.Now().UnixNano()) }()
		handler.ServeHTTP(w, r)
	})
	go func() { h.done <- h.http.Serve(ln) }()
	if p.Remote != "" {
		return h, nil
	}
	fail := func(err error) (*Hosted, error) {
		h.Stop()
		return nil, fmt.Errorf("serve: %w", err)
	}
	sl, err := socketstore.Listen(p.Store)
	if err != nil {
		return fail(err)
	}
	h.sock = socketstore.NewServer(srv.Store(), harness.Hold, socketstore.WithURL(URL(ln.Addr(), "")),
		socketstore.WithProgress(remoteProgress{srv.live}), socketstore.WithWork(o.Work))
	go func() { h.done <- h.sock.Serve(sl) }()
	// An older server's info file in the store directory is stale: this
	// process holds the store.
	os.Remove(filepath.Join(p.Store, InfoFile))
	run, err := socketstore.RunDir(p.Store)
	if err != nil {
		return fail(err)
	}
	h.file = filepath.Join(run, InfoFile)
	h.Socket = socketstore.Path(p.Store)
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "url": h.URL, "socket": h.Socket})
	if err := os.WriteFile(h.file, append(b, '\n'), 0o600); err != nil {
		return fail(err)
	}
	return h, nil
}

// Addr is where the page and the API listen.
func (h *Hosted) Addr() net.Addr { return h.addr }

// Done receives the error that stopped the page and the API, or the
// socket, if one does (http.ErrServerClosed once Stop stopped them).
func (h *Hosted) Done() <-chan error { return h.done }

// IdleSince is since when nobody has used the server — a request, a
// client of the socket — (the zero time while someone does).
func (h *Hosted) IdleSince() time.Time {
	if h.active.Load() > 0 {
		return time.Time{}
	}
	last := time.Unix(0, h.last.Load())
	if h.sock != nil {
		n, since := h.sock.Clients()
		if n > 0 {
			return time.Time{}
		}
		if since.After(last) {
			last = since
		}
	}
	return last
}

// Stop stops serving: the resumes and streams first, then the page and
// the API, then the socket; the info file is removed. The store stays
// open.
func (h *Hosted) Stop() {
	if h.file != "" {
		os.Remove(h.file)
	}
	h.Server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.http.Shutdown(ctx)
	if h.sock != nil {
		h.sock.Close()
	}
}
