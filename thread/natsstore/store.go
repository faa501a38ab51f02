package natsstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/thread"
)

// Store is a thread.Store kept in a JetStream stream, with the layout
// documented in the package comment. It is safe for concurrent use, and any
// number of Stores, in any number of processes, may share one stream.
type Store struct {
	nc      *nats.Conn
	owned   bool // Close closes nc
	js      jetstream.JetStream
	stream  jetstream.Stream
	name    string
	l       layout
	clock   func() time.Time
	wall    func() time.Time // the clock a holder checks its lease by (tests jump it)
	timeout time.Duration
	// openWait bounds the wait for a leader when opening (WithOpenWait).
	openWait time.Duration

	leases   jetstream.KeyValue    // the leases bucket, see lease.go
	leaseTTL time.Duration         // how long a lease lasts unrenewed
	leasePre string                // the subject of a lease's key, before the key
	blobs    jetstream.ObjectStore // the blobs bucket, see blobs.go
	index    *index                // the threads bucket, see index.go
	cache    *cache                // the views of threads, see state.go
	progress progressOut           // the progress records to publish, see progress.go
	// progressWait is how long a follower keeps a record of a lease it
	// has not seen yet (followWaitFor unless a test sets it).
	progressWait time.Duration

	loseAnswers atomic.Int64 // tests: answers to publishes to drop
	stallAfter  atomic.Int64 // tests: stream seqs after which a consumer stalls

	// closing is cancelled by Close: waiting Leases give up and held ones
	// are released.
	closing context.Context
	shut    context.CancelFunc

	// mu guards closed. Every call registers in ops under mu's read lock
	// while the store is open, so Close, once it has set closed, can wait
	// for ops to drain knowing no call will start after.
	mu     sync.RWMutex
	closed bool
	ops    sync.WaitGroup
}

var (
	_ thread.Store  = (*Store)(nil)
	_ thread.Leaser = (*Store)(nil)
)

// Defaults of the options.
const (
	DefaultStream   = "HARNESS"
	DefaultSubjects = "harness"
	DefaultTimeout  = 10 * time.Second
	DefaultLeaseTTL = 15 * time.Second
	DefaultOpenWait = 20 * time.Second
)

// ErrTooLarge: an append whose record would not fit one message even with
// its facts in parts (more than about max_payload/45 parts).
var ErrTooLarge = errors.New("append too large for one record")

// ErrNoLeader: Open (or Work) found no leader to answer for the stream or
// one of its buckets within its wait (WithOpenWait): the cluster has lost
// more than half of the nodes holding it, or they cannot reach each other.
var ErrNoLeader = errors.New("no leader answered")

// ErrOldLayout: the stream holds threads in the layout of an older
// version of this package (a subject per fact, a marker per cause). Migrate
// copies them into this layout.
var ErrOldLayout = errors.New("stream in an older layout")

// MigrateHint is what an error matching ErrOldLayout tells a person to
// run (a front end adds how it spells that: the harness command's
// migrate).
var MigrateHint = "migrate it with natsstore.Migrate"

// schemaKey is the stream metadata key naming the layout version, and
// schemaVersion the layout this code reads and writes. Layout 1 is the
// one before; schemaMigrating marks a stream Migrate is copying.
const (
	schemaKey       = "harness.schema"
	schemaVersion   = "2"
	schemaV1        = "1"
	schemaMigrating = "2-migrating"
)

// Option configures Open and Dial.
type Option func(*options)

type options struct {
	stream   string
	prefix   string
	replicas int
	clock    func() time.Time
	timeout  time.Duration
	leaseTTL time.Duration
	openWait time.Duration
	cache    int
}

// WithStream names the stream holding the threads (default DefaultStream):
// letters, digits, '_' and '-'. The leases and blobs buckets are named
// after it (see the package comment).
func WithStream(name string) Option { return func(o *options) { o.stream = name } }

// WithSubjects sets the prefix of the stream's subjects (default
// DefaultSubjects): one or more subject tokens without wildcards. Two
// stores that share a server need different streams and prefixes.
func WithSubjects(prefix string) Option { return func(o *options) { o.prefix = prefix } }

// WithReplicas sets the replica count of a stream Open creates (default 1).
// A stream that already exists keeps its own.
func WithReplicas(n int) Option { return func(o *options) { o.replicas = n } }

// WithClock makes the store stamp facts with now() instead of time.Now().
func WithClock(now func() time.Time) Option { return func(o *options) { o.clock = now } }

// WithTimeout bounds how long the store waits for the server to answer a
// request whose context has no deadline (default DefaultTimeout). It also
// bounds the wait for an append's acknowledgement once the append was sent,
// which is not cut short by the context so that its outcome is known.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithOpenWait bounds how long Open, Dial and Work try again while the
// stream or one of its buckets has no leader — a cluster electing one after
// a node died, which takes a few seconds (nats-server's raft elects within
// 4 to 9 s of the last word from the old leader) — before they fail with an
// error matching ErrNoLeader (default DefaultOpenWait). A context deadline
// that comes first ends the wait too. d is at least 500ms.
func WithOpenWait(d time.Duration) Option {
	return func(o *options) { o.openWait = max(d, openAttempt) }
}

// WithLeaseTTL sets how long a thread's lease lasts if its holder stops
// renewing it (default DefaultLeaseTTL): how long a thread whose resumer
// died stays out of reach of the others. The holder renews it every third
// of that. The server counts message TTLs in whole seconds, so d is
// rounded up to a whole second, and is at least one.
func WithLeaseTTL(d time.Duration) Option {
	return func(o *options) {
		o.leaseTTL = max(time.Second, (d + time.Second - 1).Truncate(time.Second))
	}
}

// WithCache bounds the store's cache of threads (default DefaultCache): it
// keeps, for the threads it used last, every cause and where each append's
// record is, up to about n facts in all (about 100 bytes each), and always
// the thread in use. A thread not in the cache is read whole by the first
// Append or HasCause that needs it (see Cost in the package comment).
func WithCache(n int) Option { return func(o *options) { o.cache = max(n, 0) } }

// Dial connects to the NATS server at url and opens the store there; the
// store owns the connection and closes it on Close. url may list several
// servers separated by commas, as nats.Connect takes them. Dial gives up
// when ctx is done, during the connection too.
//
// The connection reconnects for as long as the store is open, and buffers
// nothing while it is disconnected: a publish then fails at once instead
// of being sent after the reconnection, when its caller may have given it
// up (a timed-out append or lease renewal must not happen late).
func Dial(ctx context.Context, url string, opts ...Option) (*Store, error) {
	nc, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	s, err := Open(ctx, nc, opts...)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// connect makes Dial's connection to url within ctx.
func connect(ctx context.Context, url string) (*nats.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", redactURLs(url), err)
	}
	d := &ctxDialer{ctx: ctx, net: net.Dialer{Timeout: nats.DefaultTimeout}}
	nc, err := nats.Connect(url, nats.Name("harness thread store"),
		nats.ReconnectBufSize(-1), nats.MaxReconnects(-1), nats.SetCustomDialer(d))
	if !d.connected() && err == nil {
		// ctx ended as the connection was made: it may be cut.
		nc.Close()
		err = ctx.Err()
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%v)", cerr, err)
		}
		return nil, fmt.Errorf("connect to NATS at %s: %w", redactURLs(url), err)
	}
	return nc, nil
}

// ctxDialer dials the connection's first server within ctx, and cuts a
// connection it made when ctx ends before Dial is done with it; once
// connected, it dials reconnections without ctx.
type ctxDialer struct {
	mu    sync.Mutex      // guards ctx and stops
	ctx   context.Context // nil once connected
	stops []func() bool
	net   net.Dialer
}

func (d *ctxDialer) Dial(network, address string) (net.Conn, error) {
	d.mu.Lock()
	ctx := d.ctx
	d.mu.Unlock()
	if ctx == nil {
		return d.net.Dial(network, address)
	}
	c, err := d.net.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	d.mu.Lock()
	d.stops = append(d.stops, stop)
	d.mu.Unlock()
	return c, nil
}

// connected ends the dialer's use of ctx, and reports whether no
// connection it made was cut because ctx ended.
func (d *ctxDialer) connected() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	ok := d.ctx.Err() == nil
	for _, stop := range d.stops {
		ok = stop() && ok
	}
	d.ctx, d.stops = nil, nil
	return ok
}

// redactURLs returns the server URLs of url with their passwords and
// tokens replaced by "xxxxx", for error messages.
func redactURLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "://") {
			p = "nats://" + p // as nats.Connect reads it
		}
		u, err := neturl.Parse(p)
		if err != nil {
			parts[i] = "(an address that does not parse)"
			continue
		}
		if u.User != nil {
			if _, ok := u.User.Password(); !ok {
				u.User = neturl.User("xxxxx") // a token
			}
		}
		parts[i] = u.Redacted()
	}
	return strings.Join(parts, ",")
}

// Open opens the store in the stream over nc, creating the stream if it
// does not exist (file storage, WithReplicas replicas, deletes and purges
// denied). An existing stream must have been created for a store of the
// same layout and is refused if its settings could lose facts or answer
// gets from a replica (see Durability in the package comment); a stream in
// the layout of an older version is refused with an error matching
// ErrOldLayout (see Migrate). nc should buffer nothing while reconnecting
// (nats.ReconnectBufSize(-1)), as Dial's does, so that a request given up
// on is not sent late. Open also binds the leases, blobs and threads
// buckets named after the stream, creating those that do not exist (see
// the package comment); an existing leases bucket must have limit markers.
// The caller keeps nc and closes it after Close.
func Open(ctx context.Context, nc *nats.Conn, opts ...Option) (*Store, error) {
	o, err := openOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(o.timeout))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", o.stream, err)
	}
	l := layout{prefix: o.prefix}
	since := time.Now()
	stream, err := untilLeader(ctx, since, o.openWait, "stream "+o.stream, func(ctx context.Context) (jetstream.Stream, error) {
		return bindStream(ctx, js, o, l)
	})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", o.stream, err)
	}
	return openOn(ctx, nc, js, stream, o, since)
}

// openOptions applies opts to the defaults and checks the names.
func openOptions(opts []Option) (options, error) {
	o := options{stream: DefaultStream, prefix: DefaultSubjects, replicas: 1, clock: time.Now, timeout: DefaultTimeout, leaseTTL: DefaultLeaseTTL, openWait: DefaultOpenWait, cache: DefaultCache}
	for _, opt := range opts {
		opt(&o)
	}
	if err := validateStreamName(o.stream); err != nil {
		return o, err
	}
	if err := validatePrefix(o.prefix); err != nil {
		return o, fmt.Errorf("stream %s: %w", o.stream, err)
	}
	return o, nil
}

// openOn binds the buckets of o's stream and makes the store; the open
// began at since (see WithOpenWait).
func openOn(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, stream jetstream.Stream, o options, since time.Time) (*Store, error) {
	leases, err := untilLeader(ctx, since, o.openWait, "bucket "+leaseBucket(o.stream), func(ctx context.Context) (jetstream.KeyValue, error) {
		return bindLeases(ctx, js, o)
	})
	if err != nil {
		return nil, fmt.Errorf("open store %s: leases: %w", o.stream, err)
	}
	blobs, err := untilLeader(ctx, since, o.openWait, "bucket "+blobBucket(o.stream), func(ctx context.Context) (jetstream.ObjectStore, error) {
		return bindBlobs(ctx, js, o)
	})
	if err != nil {
		return nil, fmt.Errorf("open store %s: blobs: %w", o.stream, err)
	}
	ix, err := untilLeader(ctx, since, o.openWait, "bucket "+indexBucket(o.stream), func(ctx context.Context) (*index, error) {
		return bindIndex(ctx, js, o)
	})
	if err != nil {
		return nil, fmt.Errorf("open store %s: threads: %w", o.stream, err)
	}
	closing, shut := context.WithCancel(context.Background())
	return &Store{
		nc: nc, js: js, stream: stream, name: o.stream, l: layout{prefix: o.prefix}, clock: o.clock, wall: time.Now, timeout: o.timeout, openWait: o.openWait,
		leases: leases, leaseTTL: o.leaseTTL, leasePre: "$KV." + leases.Bucket() + ".", blobs: blobs,
		index: ix, cache: newCache(o.cache),
		closing: closing, shut: shut,
	}, nil
}

// streamConfig is the configuration of a stream Open creates.
func streamConfig(o options, l layout) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        o.stream,
		Description: "harness thread store: durable, append-only fact logs, one subject per thread",
		Subjects:    l.streamSubjects(),
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Replicas:    o.replicas,
		DenyDelete:  true,
		DenyPurge:   true,
		Metadata:    map[string]string{schemaKey: schemaVersion},
	}
}

func bindStream(ctx context.Context, js jetstream.JetStream, o options, l layout) (jetstream.Stream, error) {
	stream, err := js.Stream(ctx, o.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		stream, err = js.CreateStream(ctx, streamConfig(o, l))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			stream, err = js.Stream(ctx, o.stream) // created meanwhile by another store
		}
	}
	if err != nil {
		return nil, err
	}
	if err := hasLeader(stream.CachedInfo()); err != nil {
		return nil, err
	}
	cfg := stream.CachedInfo().Config
	switch schema := cfg.Metadata[schemaKey]; {
	case schema == schemaV1:
		return nil, fmt.Errorf("stream holds threads in layout 1 (a subject per fact); this program reads layout %s: %s: %w", schemaVersion, MigrateHint, ErrOldLayout)
	case schema == schemaMigrating:
		return nil, fmt.Errorf("stream is being migrated from layout 1 (or a migration stopped halfway): run the migration to its end: %s: %w", MigrateHint, ErrOldLayout)
	case schema != schemaVersion:
		return nil, fmt.Errorf("stream has layout %q (metadata %s); this program reads layout %s", schema, schemaKey, schemaVersion)
	case !slices.Equal(cfg.Subjects, l.streamSubjects()):
		return nil, fmt.Errorf("stream binds subjects %v, not %v (see WithSubjects)", cfg.Subjects, l.streamSubjects())
	}
	if err := checkStreamConfig(cfg); err != nil {
		return nil, err
	}
	return stream, nil
}

// checkStreamConfig refuses an existing stream whose settings break what
// the store relies on: that a get is answered by the stream leader, so it
// sees every acknowledged append, and that no message is ever removed.
// With no limit set, no discard policy can drop a message.
func checkStreamConfig(cfg jetstream.StreamConfig) error {
	const fix = "; the store needs every fact kept and gets answered by the stream leader: change the setting (nats stream edit, where the server allows it) or use another stream (WithStream)"
	bad := func(setting string) error { return fmt.Errorf("stream has %s%s", setting, fix) }
	switch {
	case cfg.AllowDirect:
		return bad("AllowDirect on (gets could be answered by a replica that lags)")
	case cfg.MirrorDirect:
		return bad("MirrorDirect on (gets could be answered by a mirror that lags)")
	case !cfg.DenyDelete:
		return bad("DenyDelete off (facts could be deleted)")
	case !cfg.DenyPurge:
		return bad("DenyPurge off (facts could be purged)")
	case cfg.Retention != jetstream.LimitsPolicy:
		return bad(fmt.Sprintf("retention %s, not limits (messages would be removed once consumed)", cfg.Retention))
	case cfg.MaxAge > 0:
		return bad(fmt.Sprintf("MaxAge %s (old facts would be removed); want 0, no limit", cfg.MaxAge))
	case cfg.MaxMsgs > 0:
		return bad(fmt.Sprintf("MaxMsgs %d (facts would be removed or refused); want -1, no limit", cfg.MaxMsgs))
	case cfg.MaxBytes > 0:
		return bad(fmt.Sprintf("MaxBytes %d (facts would be removed or refused); want -1, no limit", cfg.MaxBytes))
	case cfg.MaxMsgsPerSubject > 0:
		return bad(fmt.Sprintf("MaxMsgsPerSubject %d; want -1, no limit", cfg.MaxMsgsPerSubject))
	case cfg.Sealed:
		return bad("Sealed on (nothing can be appended)")
	}
	return nil
}

// validateStreamName accepts the names a bucket may have too, since the
// leases and blobs buckets are named after the stream.
func validateStreamName(name string) error {
	ok := name != ""
	for _, r := range name {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}
	if !ok {
		return fmt.Errorf("stream name %q: want a non-empty name of letters, digits, '_' and '-'", name)
	}
	return nil
}

func validatePrefix(prefix string) error {
	for tok := range strings.SplitSeq(prefix, ".") {
		if tok == "" || strings.ContainsAny(tok, "*> \t\r\n") {
			return fmt.Errorf("subject prefix %q: want tokens separated by '.', without wildcards or spaces", prefix)
		}
	}
	return nil
}

// enter registers a call, or fails if the store is closed; leave ends it.
func (s *Store) enter() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return thread.ErrClosed
	}
	s.ops.Add(1)
	return nil
}

func (s *Store) leave() { s.ops.Done() }

// begin does what every call on a thread does first: check the id and the
// context and register the call. On success the caller must call s.leave.
func (s *Store) begin(ctx context.Context, op, id string) error {
	if err := thread.ValidateID(id); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %s: %w", op, id, err)
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("%s %s: %w", op, id, err)
	}
	return nil
}

// Backing is the store itself.
func (s *Store) Backing() thread.Store { return s }

// Close waits for running calls and reads to finish and releases the
// store, closing the connection if Dial made it.
//
// Close releases the leases the store holds, as their release functions
// would, except that it cancels their contexts with a cause matching both
// thread.ErrLeaseLost and thread.ErrClosed; Leases still waiting fail with
// thread.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("close store %s: %w", s.name, thread.ErrClosed)
	}
	s.closed = true
	s.mu.Unlock()
	s.shut()
	s.ops.Wait()
	if s.owned {
		s.nc.Close()
	}
	return nil
}

// requestContext bounds ctx by the store's timeout if it has no deadline.
func (s *Store) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// transient reports whether err means that the request reached nobody who
// could answer it for now — a stream or bucket with no leader yet (just
// made, or electing one), a node gone — so that it was not acted on and may
// be sent again.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, errNoAnswerYet) ||
		reconnecting(err) || // sent to no one: the connection was down and its buffer full
		errors.As(err, &apiErr) && (apiErr.Code == 503 || apiErr.ErrorCode == errJSNotAvailable)
}

// retry calls f until it succeeds, fails for good (see transient), or ctx
// is done.
func retry[T any](ctx context.Context, f func() (T, error)) (T, error) {
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 250*time.Millisecond) {
		v, err := f()
		if err == nil || !transient(err) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(pause):
		}
	}
}

// While opening, a request with no answer after openAttempt is sent again
// without giving up the first: up to openHedges attempts are out at once,
// each waiting up to openHedges×openAttempt for its answer.
//
// The requests of a healthy cluster are answered within milliseconds; one
// sent while a stream elects a leader is answered by nobody (the old
// leader is gone, the others wait for the new one), so the first sent
// after the election is what opens the store: opening lags the election
// by at most about openAttempt. A slow link or a slow creation still gets
// its answer, from an attempt still waiting.
const (
	openAttempt = 500 * time.Millisecond
	openHedges  = 8
)

// untilLeader calls f until one call succeeds or fails for good, while
// what f binds has no leader to answer: it calls f again when no call has
// an answer after openAttempt (see openHedges), or after a pause when a
// call fails with a transient error (see transient; a stream that answers
// with no leader is one). It gives up wait after since (when the open
// began: one wait bounds all its binds), or when ctx is done,
// with an error matching ErrNoLeader that says what it tried for how
// long, and what to check; a cancelled ctx ends it with ctx's error.
func untilLeader[T any](ctx context.Context, since time.Time, wait time.Duration, what string, f func(context.Context) (T, error)) (T, error) {
	wctx, cancel := context.WithDeadline(ctx, since.Add(wait))
	defer cancel() // ends the calls still out
	type result struct {
		v   T
		err error
	}
	var (
		zero     T
		last     error
		tries    int
		out      int
		results  = make(chan result, openHedges) // never blocks a call
		each     = openHedges * openAttempt
		pause    = 10 * time.Millisecond
		next     = time.NewTimer(0)
		canceled = func() error { return fmt.Errorf("%s: %w", what, ctx.Err()) }
	)
	defer next.Stop()
	for {
		select {
		case <-next.C:
			if out < openHedges {
				tries++
				out++
				go func() {
					actx, acancel := context.WithTimeout(wctx, each)
					defer acancel()
					v, err := f(actx)
					if err != nil && actx.Err() != nil && wctx.Err() == nil {
						err = fmt.Errorf("%w in %s: %w", errNoAnswerYet, each, err)
					}
					results <- result{v, err}
				}()
			}
			next.Reset(openAttempt)
		case r := <-results:
			out--
			switch {
			case r.err == nil:
				return r.v, nil
			case errors.Is(ctx.Err(), context.Canceled):
				return zero, canceled()
			case wctx.Err() == nil && !transient(r.err) && !reconnecting(r.err):
				return zero, r.err
			}
			// A call cut off by the end of the whole wait says nothing
			// of the cluster: "none answered", unless another did.
			if wctx.Err() == nil || last == nil && !errors.Is(r.err, context.DeadlineExceeded) {
				last = r.err
			}
			if out == 0 && wctx.Err() == nil {
				// Answered, with no leader yet: ask again after a pause.
				next.Reset(pause)
				pause = min(2*pause, 250*time.Millisecond)
			}
		case <-wctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return zero, canceled()
			}
			answer := "none answered"
			if last != nil {
				answer = "last: " + last.Error()
			}
			return zero, fmt.Errorf("%s: %w for %s (%d tries, one more every %s while none was answered; %s): a stream and its buckets answer through their leader, which a cluster elects only while more than half of its nodes are up and routed to each other (2 of 3): check the nodes (nats server report jetstream lists them and the leaders), then try again",
				what, ErrNoLeader, time.Since(since).Round(100*time.Millisecond), tries, openAttempt, answer)
		}
	}
}

// reconnecting reports whether err means the connection was down when a
// request was to be sent (its node went away): sent to no one.
func reconnecting(err error) bool {
	return errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrReconnectBufExceeded)
}

// hasLeader fails with a transient error if info says its stream has no
// leader: a node answers for a stream whose group lost its leader from
// what it knows, but nothing can be appended or got until one is elected.
// A stream of a server that is no cluster has the server for its leader.
func hasLeader(info *jetstream.StreamInfo) error {
	if info != nil && info.Cluster != nil && info.Cluster.Leader == "" {
		return fmt.Errorf("%w: stream %s has no leader", errNoAnswerYet, info.Config.Name)
	}
	return nil
}
