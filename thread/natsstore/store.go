package natsstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seed-7cc7a084/harness/facts"
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

	leases   jetstream.KeyValue    // the leases bucket, see lease.go
	leaseTTL time.Duration         // how long a lease lasts unrenewed
	leasePre string                // the subject of a lease's key, before the key
	blobs    jetstream.ObjectStore // the blobs bucket, see blobs.go
	settled  settledCache          // see single.go

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
)

// MaxBatch is the most messages nats-server accepts in one atomic batch by
// default (its max_batch_size). An append publishes one message per draft
// and one per cause it uses first, and is refused beforehand if those are
// more than MaxBatch.
const MaxBatch = 1000

// ErrTooLarge: an append that cannot be one atomic batch, because it has
// more than MaxBatch messages or a fact larger than the server's
// max_payload.
var ErrTooLarge = errors.New("append too large for one JetStream batch")

// schemaKey is the stream metadata key naming the layout version, and
// schemaVersion the layout this code reads and writes.
const (
	schemaKey     = "harness.schema"
	schemaVersion = "1"
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
	s, err := Open(ctx, nc, opts...)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// ctxDialer dials the connection's first server within ctx, and cuts a
// connection it made when ctx ends before Dial is done with it; once
// connected, it dials reconnections without ctx.
type ctxDialer struct {
	mu    sync.Mutex
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
// does not exist (file storage, atomic publish allowed, deletes and purges
// denied). An existing stream must have been created for a store of the
// same layout, with atomic publish allowed, and is refused if its settings
// could lose facts or answer gets from a replica (see Durability in the
// package comment). nc should buffer nothing while reconnecting
// (nats.ReconnectBufSize(-1)), as Dial's does, so that a request given up
// on is not sent late. Open also binds the leases and
// blobs buckets named after the stream, creating those that do not exist
// (see the package comment); an existing leases bucket must have limit
// markers. The caller keeps nc and closes it after Close.
func Open(ctx context.Context, nc *nats.Conn, opts ...Option) (*Store, error) {
	o := options{stream: DefaultStream, prefix: DefaultSubjects, replicas: 1, clock: time.Now, timeout: DefaultTimeout, leaseTTL: DefaultLeaseTTL}
	for _, opt := range opts {
		opt(&o)
	}
	if err := validateStreamName(o.stream); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := validatePrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("open store %s: %w", o.stream, err)
	}
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(o.timeout))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", o.stream, err)
	}
	l := layout{prefix: o.prefix}
	stream, err := bindStream(ctx, js, o, l)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", o.stream, err)
	}
	leases, err := bindLeases(ctx, js, o)
	if err != nil {
		return nil, fmt.Errorf("open store %s: leases: %w", o.stream, err)
	}
	blobs, err := bindBlobs(ctx, js, o)
	if err != nil {
		return nil, fmt.Errorf("open store %s: blobs: %w", o.stream, err)
	}
	closing, shut := context.WithCancel(context.Background())
	return &Store{
		nc: nc, js: js, stream: stream, name: o.stream, l: l, clock: o.clock, wall: time.Now, timeout: o.timeout,
		leases: leases, leaseTTL: o.leaseTTL, leasePre: "$KV." + leases.Bucket() + ".", blobs: blobs,
		closing: closing, shut: shut,
	}, nil
}

func bindStream(ctx context.Context, js jetstream.JetStream, o options, l layout) (jetstream.Stream, error) {
	stream, err := js.Stream(ctx, o.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		stream, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:               o.stream,
			Description:        "harness thread store: durable, append-only fact logs",
			Subjects:           l.streamSubjects(),
			Storage:            jetstream.FileStorage,
			Retention:          jetstream.LimitsPolicy,
			Replicas:           o.replicas,
			DenyDelete:         true,
			DenyPurge:          true,
			AllowAtomicPublish: true,
			Metadata:           map[string]string{schemaKey: schemaVersion},
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			stream, err = js.Stream(ctx, o.stream) // created meanwhile by another store
		}
	}
	if err != nil {
		return nil, err
	}
	cfg := stream.CachedInfo().Config
	switch {
	case cfg.Metadata[schemaKey] != schemaVersion:
		return nil, fmt.Errorf("stream has layout %q (metadata %s); this program reads layout %s", cfg.Metadata[schemaKey], schemaKey, schemaVersion)
	case !slices.Equal(cfg.Subjects, l.streamSubjects()):
		return nil, fmt.Errorf("stream binds subjects %v, not %v (see WithSubjects)", cfg.Subjects, l.streamSubjects())
	case !cfg.AllowAtomicPublish:
		return nil, errors.New("stream does not allow atomic publish (needs nats-server 2.12 or later and AllowAtomicPublish)")
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
		return bad("DenyDelete off (facts and markers could be deleted)")
	case !cfg.DenyPurge:
		return bad("DenyPurge off (facts and markers could be purged)")
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

// get returns the last message on subject, or nil if there is none.
func (s *Store) get(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	ctx, cancel := s.requestContext(ctx)
	defer cancel()
	m, err := s.stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%v)", cerr, err)
		}
		return nil, err
	}
	return m, nil
}

// decodeFact reads the fact of id in m and checks that it is where it
// belongs.
func (s *Store) decodeFact(id string, m *jetstream.RawStreamMsg) (facts.Fact, error) {
	sid, seq, err := s.l.parseFactSubject(m.Subject)
	if err != nil {
		return facts.Fact{}, &thread.CorruptError{Thread: id, Err: err}
	}
	if sid != id {
		return facts.Fact{}, &thread.CorruptError{Thread: id, Seq: seq, Err: fmt.Errorf("fact of thread %q under this thread's subject", sid)}
	}
	f, err := facts.DecodeFact(id, m.Data)
	if err != nil {
		return facts.Fact{}, &thread.CorruptError{Thread: id, Seq: seq, Err: err}
	}
	if f.Seq != seq {
		return facts.Fact{}, &thread.CorruptError{Thread: id, Seq: seq, Err: fmt.Errorf("record under seq %d says seq %d", seq, f.Seq)}
	}
	return f, nil
}

// last returns the last fact of id, or false if id has none.
func (s *Store) last(ctx context.Context, id string) (facts.Fact, bool, error) {
	f, _, ok, err := s.lastFact(ctx, id)
	return f, ok, err
}

// fact returns the fact of id at seq, which must exist.
func (s *Store) fact(ctx context.Context, id string, seq uint64) (facts.Fact, error) {
	f, _, err := s.factMsg(ctx, id, seq)
	return f, err
}

// factMsg returns the fact of id at seq, which must exist, and whether it
// was appended alone, its marker after it (see single.go).
func (s *Store) factMsg(ctx context.Context, id string, seq uint64) (facts.Fact, bool, error) {
	m, err := s.get(ctx, s.l.factSubject(id, seq))
	if err != nil {
		return facts.Fact{}, false, err
	}
	if m == nil {
		return facts.Fact{}, false, &thread.CorruptError{Thread: id, Seq: seq, Err: errors.New("fact is missing")}
	}
	f, err := s.decodeFact(id, m)
	return f, m.Header.Get(markerHeader) == markerAfter, err
}

func headOf(id string, f facts.Fact) thread.Head {
	return thread.Head{Thread: id, Seq: f.Seq, Hash: f.Hash(), Kind: f.Kind, At: f.At}
}

// causeSeq returns the seq of the first fact of id with cause, or false.
func (s *Store) causeSeq(ctx context.Context, id, cause string) (uint64, bool, error) {
	m, err := s.get(ctx, s.l.causeSubject(id, cause))
	if err != nil || m == nil {
		return 0, false, err
	}
	seq, err := decodeMarker(m.Data, cause)
	if err != nil {
		return 0, false, &thread.CorruptError{Thread: id, Err: fmt.Errorf("cause %q: %w", cause, err)}
	}
	return seq, true, nil
}

// duplicate returns a *DuplicateCauseError for the first of causes that id
// already has, an error of the append if it could not look, or nil.
func (s *Store) duplicate(ctx context.Context, id string, causes []string) error {
	for _, c := range causes {
		seq, ok, err := s.causeSeq(ctx, id, c)
		if err != nil {
			return fmt.Errorf("append to %s: %w", id, err)
		}
		if ok {
			return &thread.DuplicateCauseError{Thread: id, Cause: c, Seq: seq}
		}
	}
	return nil
}

// Append appends drafts to id if its head is still after; see thread.Store.
//
// The facts and the markers of the causes they use first are one atomic
// batch (one draft is a single message and then its marker: see
// single.go), and every message in it expects its subject to be empty. That one
// condition, checked by the server as it applies the batch, keeps every
// invariant: a fact subject is written only when the fact before it exists
// (Append read it, and facts are never deleted) and nobody has written the
// seq yet, so seqs have no gaps and there is one winner per seq; a marker
// is written only with the first fact of its cause, so a cause is marked
// exactly when a fact carries it. The server applies the batch whole or not
// at all, whatever else is published meanwhile.
func (s *Store) Append(ctx context.Context, id string, after uint64, drafts ...facts.Draft) (thread.Head, error) {
	if err := thread.ValidateID(id); err != nil {
		return thread.Head{}, fmt.Errorf("append: %w", err)
	}
	if len(drafts) == 0 {
		return thread.Head{}, fmt.Errorf("append to %s: %w", id, thread.ErrEmptyAppend)
	}
	causes := make([]string, 0, 1) // distinct, in order of first appearance
	for i, d := range drafts {
		if err := d.Validate(); err != nil {
			return thread.Head{}, fmt.Errorf("append to %s: draft %d: %w", id, i, err)
		}
		if !slices.Contains(causes, d.Cause) {
			causes = append(causes, d.Cause)
		}
	}
	if n := len(drafts) + len(causes); n > MaxBatch {
		return thread.Head{}, fmt.Errorf("append to %s: %d drafts and %d causes are %d messages, more than %d: %w", id, len(drafts), len(causes), n, MaxBatch, ErrTooLarge)
	}
	if err := s.begin(ctx, "append to", id); err != nil {
		return thread.Head{}, err
	}
	defer s.leave()

	var err error // why the last attempt was tried again
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			// Wait a little before trying again, and not forever.
			if attempt > 20 {
				return thread.Head{}, fmt.Errorf("append to %s after seq %d: gave up after %d attempts: %w", id, after, attempt, err)
			}
			select {
			case <-ctx.Done():
				return thread.Head{}, fmt.Errorf("append to %s: %w", id, ctx.Err())
			case <-time.After(time.Duration(attempt) * time.Millisecond):
			}
		}
		var head thread.Head
		head, err = s.settledHead(ctx, id)
		if errors.Is(err, errMarkerInFlight) {
			continue
		}
		if err != nil {
			return thread.Head{}, fmt.Errorf("append to %s: %w", id, err)
		}
		if head.Seq != after {
			// A duplicate is the final answer even if the head moved.
			if err := s.duplicate(ctx, id, causes); err != nil {
				return thread.Head{}, err
			}
			return thread.Head{}, &thread.ConflictError{Thread: id, Expected: after, Actual: head}
		}
		var (
			next    thread.Head
			publish func() error
		)
		if len(drafts) == 1 {
			// One message, no batch: see single.go. The cause is checked
			// now, against the settled head.
			if err := s.duplicate(ctx, id, causes); err != nil {
				return thread.Head{}, err
			}
			m, f, err := s.single(id, head, drafts[0])
			if err != nil {
				return thread.Head{}, err
			}
			next = headOf(id, f)
			publish = func() error {
				if err := s.publishOne(ctx, m); err != nil {
					return err
				}
				// The fact is appended; its marker completes it. If this
				// fails, the next append settles it.
				_ = s.settle(ctx, id, f)
				return nil
			}
		} else {
			msgs, n, err := s.batch(id, head, drafts, causes)
			if err != nil {
				return thread.Head{}, err
			}
			next, publish = n, func() error { return s.publish(ctx, msgs) }
		}
		// Last chance to give up: once the batch is sent, the append may
		// happen, and Append waits to learn whether it did.
		if err := ctx.Err(); err != nil {
			return thread.Head{}, fmt.Errorf("append to %s: %w", id, err)
		}
		err = publish()
		var refused *refusedError
		switch {
		case err == nil:
			return next, nil
		case !errors.As(err, &refused):
			return thread.Head{}, fmt.Errorf("append to %s after seq %d: %w", id, after, err)
		case refused.busy():
			// The server has too many batches in flight: wait and retry.
		case refused.expectation():
			// Someone else wrote one of the subjects: a cause or the next
			// seq. Say which; the duplicate first, as the final answer
			// (after settling the head, which may be that someone's).
			now, serr := s.settledHead(ctx, id)
			if errors.Is(serr, errMarkerInFlight) {
				err = serr
				continue // the head's marker is being written: look again
			}
			if serr != nil {
				return thread.Head{}, fmt.Errorf("append to %s: %w", id, serr)
			}
			if err := s.duplicate(ctx, id, causes); err != nil {
				return thread.Head{}, err
			}
			if now.Seq != after {
				return thread.Head{}, &thread.ConflictError{Thread: id, Expected: after, Actual: now}
			}
			// Neither: a batch on one of our subjects was in flight and
			// failed. Try again.
		default:
			return thread.Head{}, fmt.Errorf("append to %s after seq %d: %w", id, after, err)
		}
	}
}

// headerRoom is what the headers of a batch message take at most, beside
// its subject: the batch id, sequence and commit, the expected sequence.
const headerRoom = 256

// batch returns the messages of an append of drafts after head, and the
// head after it.
func (s *Store) batch(id string, head thread.Head, drafts []facts.Draft, causes []string) ([]*nats.Msg, thread.Head, error) {
	at := s.clock().UTC().Round(0)
	limit := int(s.nc.MaxPayload())
	msgs := make([]*nats.Msg, 0, len(drafts)+len(causes))
	add := func(subject string, data []byte) *nats.Msg {
		m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
		msgs = append(msgs, m)
		return m
	}
	f := facts.Fact{Thread: id, Seq: head.Seq, Prev: head.Hash, At: at}
	marked := 0 // causes[:marked] have their marker in msgs
	for i, d := range drafts {
		f.Seq++
		f.Kind, f.Cause, f.Data = d.Kind, d.Cause, d.Data
		v, err := facts.Encode(f)
		if err != nil {
			return nil, thread.Head{}, fmt.Errorf("append to %s: draft %d: %w", id, i, err)
		}
		subject := s.l.factSubject(id, f.Seq)
		if size := len(v) + len(subject) + headerRoom; limit > 0 && size > limit {
			return nil, thread.Head{}, fmt.Errorf("append to %s: draft %d is a %d-byte message, larger than the server's max_payload of %d bytes: %w", id, i, size, limit, ErrTooLarge)
		}
		add(subject, v)
		// causes lists each cause in order of its first draft, so the next
		// cause to mark is the one this draft may be first to carry.
		if marked < len(causes) && d.Cause == causes[marked] {
			add(s.l.causeSubject(id, d.Cause), encodeMarker(f.Seq, d.Cause))
			marked++
		}
		f.Prev = f.Hash()
	}
	return msgs, thread.Head{Thread: id, Seq: f.Seq, Hash: f.Prev, Kind: f.Kind, At: at}, nil
}

// Batch publish headers (nats-server 2.12 and later).
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// pubAck is the server's answer to a batch's commit message.
type pubAck struct {
	Stream string `json:"stream"`
	Seq    uint64 `json:"seq"`
	Batch  string `json:"batch"`
	Count  int    `json:"count"`
	Error  *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// refusedError is a batch the server answered with an error: nothing of it
// was stored.
type refusedError struct {
	code, errCode int
	description   string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("batch refused: %s (code %d, error code %d)", e.description, e.code, e.errCode)
}

// JetStream error codes the store tells apart.
const (
	errWrongLastSeq         = 10071 // an expected sequence did not hold
	errWrongLastSeqConstant = 10164 // the same, or the subject was busy in another batch
	errTooManyInflight      = 10211 // too many batches in flight
)

func (e *refusedError) expectation() bool {
	return e.errCode == errWrongLastSeq || e.errCode == errWrongLastSeqConstant
}

func (e *refusedError) busy() bool { return e.errCode == errTooManyInflight }

// publish sends msgs as one atomic batch and waits for the server's answer.
// The messages before the last are published without waiting; the last
// commits the batch and its reply says whether the whole batch was stored.
// Once the batch is sent the wait is bounded by the store's timeout, not by
// ctx, so that the caller learns the outcome.
func (s *Store) publish(ctx context.Context, msgs []*nats.Msg) error {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	batchID := hex.EncodeToString(raw[:])
	for i, m := range msgs {
		m.Header.Set(batchIDHeader, batchID)
		m.Header.Set(batchSeqHeader, strconv.Itoa(i+1))
	}
	last := msgs[len(msgs)-1]
	last.Header.Set(batchCommitHeader, "1")
	for _, m := range msgs[:len(msgs)-1] {
		if err := s.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("publish %s: %w", m.Subject, err)
		}
	}
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	reply, err := s.nc.RequestMsgWithContext(wait, last)
	if err != nil {
		return fmt.Errorf("commit batch of %d messages (the outcome is unknown: read the head): %w", len(msgs), err)
	}
	var ack pubAck
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return fmt.Errorf("commit batch: reply %q: %w", reply.Data, err)
	}
	if ack.Error != nil {
		return &refusedError{code: ack.Error.Code, errCode: ack.Error.ErrCode, description: ack.Error.Description}
	}
	if ack.Batch != batchID || ack.Count != len(msgs) {
		return fmt.Errorf("commit batch %s of %d messages: the server acknowledged batch %q of %d", batchID, len(msgs), ack.Batch, ack.Count)
	}
	return nil
}

// Head returns id's head; see thread.Store.
func (s *Store) Head(ctx context.Context, id string) (thread.Head, error) {
	if err := s.begin(ctx, "head of", id); err != nil {
		return thread.Head{}, err
	}
	defer s.leave()
	f, ok, err := s.last(ctx, id)
	if err != nil {
		return thread.Head{}, fmt.Errorf("head of %s: %w", id, err)
	}
	if !ok {
		return thread.Head{}, fmt.Errorf("head of %s: %w", id, thread.ErrNotFound)
	}
	return headOf(id, f), nil
}

// HasCause reports whether a fact of id has cause; see thread.Store.
func (s *Store) HasCause(ctx context.Context, id, cause string) (bool, error) {
	if err := s.begin(ctx, "cause in", id); err != nil {
		return false, err
	}
	defer s.leave()
	if err := facts.ValidateCause(cause); err != nil {
		return false, fmt.Errorf("cause in %s: %w", id, err)
	}
	// The head first, then the marker. Only the head can lack its marker
	// (see single.go), and markers are never removed: if the cause is at
	// the head read, it is found there or its marker is found after. The
	// other order can miss it: the marker read before the head's was
	// written, the head read after the thread moved on.
	f, unsettled, _, err := s.lastFact(ctx, id)
	if err != nil {
		return false, fmt.Errorf("cause in %s: %w", id, err)
	}
	if unsettled && f.Cause == cause {
		return true, nil
	}
	_, ok, err := s.causeSeq(ctx, id, cause)
	if err != nil {
		return false, fmt.Errorf("cause in %s: %w", id, err)
	}
	return ok, nil
}

// Read yields id's facts from seq from; see thread.Store.
//
// Read takes the head first and reads up to it, so facts appended while it
// reads are not seen. It gets one fact at a time, by its subject, and
// checks each record's checksum and place; the hash chain is Verify's job.
func (s *Store) Read(ctx context.Context, id string, from uint64) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		if err := s.begin(ctx, "read", id); err != nil {
			yield(facts.Fact{}, err)
			return
		}
		defer s.leave()
		if err := s.read(ctx, id, from, yield); err != nil {
			yield(facts.Fact{}, fmt.Errorf("read %s: %w", id, err))
		}
	}
}

// read yields id's facts from seq from. It returns an error for the caller
// to yield, or nil when done or when yield said stop.
func (s *Store) read(ctx context.Context, id string, from uint64, yield func(facts.Fact, error) bool) error {
	last, ok, err := s.last(ctx, id)
	if err != nil || !ok {
		return err
	}
	for seq := max(from, 1); seq <= last.Seq; seq++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := last
		if seq < last.Seq {
			if f, err = s.fact(ctx, id, seq); err != nil {
				return err
			}
		}
		if !yield(f, nil) {
			return nil
		}
	}
	return nil
}

// Verify walks id's whole log and checks every link; see thread.Store.
func (s *Store) Verify(ctx context.Context, id string) error {
	if err := s.begin(ctx, "verify", id); err != nil {
		return err
	}
	defer s.leave()
	if err := s.verify(ctx, id); err != nil {
		return fmt.Errorf("verify %s: %w", id, err)
	}
	return nil
}

func (s *Store) verify(ctx context.Context, id string) error {
	last, unsettled, ok, err := s.lastFact(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return thread.ErrNotFound
	}
	var (
		prev      facts.Hash
		prevAt    time.Time
		prevAlone bool // the fact before was appended alone
		lastCause string
		// The facts since the start of the group are, as far as the log
		// tells, of one append: a single fact appended alone (see
		// single.go), or facts of a batch, which all have its At. causes
		// maps each cause of the group to its first fact.
		causes = map[string]uint64{}
	)
	for seq := uint64(1); seq <= last.Seq; seq++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, alone, err := s.factMsg(ctx, id, seq)
		if err != nil {
			return err
		}
		if f.Prev != prev {
			return &thread.CorruptError{Thread: id, Seq: seq, Err: fmt.Errorf("prev is %s, but seq %d hashes to %s", f.Prev, seq-1, prev)}
		}
		start := seq == 1 || alone || prevAlone || !f.At.Equal(prevAt)
		if start {
			clear(causes)
		}
		first, seen := causes[f.Cause]
		if !seen {
			first = seq
			causes[f.Cause] = seq
		}
		// A marker names the first fact with its cause, which must be of
		// this fact's append: this fact, if the append has not had the
		// cause before, else the append's first fact with it. Facts of one
		// append that share a cause usually follow each other, so only a
		// new append or a change of cause needs a lookup.
		if start || f.Cause != lastCause {
			// An unsettled head's marker may not be written yet.
			if err := s.checkCause(ctx, id, f, first, unsettled && seq == last.Seq); err != nil {
				return err
			}
		}
		prev, prevAt, prevAlone, lastCause = f.Hash(), f.At, alone, f.Cause
	}
	return nil
}

// checkCause checks that f's cause is marked at seq first, or, if
// mayBeUnmarked, not marked at all.
func (s *Store) checkCause(ctx context.Context, id string, f facts.Fact, first uint64, mayBeUnmarked bool) error {
	seq, ok, err := s.causeSeq(ctx, id, f.Cause)
	switch {
	case err != nil:
		return err
	case !ok && mayBeUnmarked:
		return nil
	case !ok:
		return &thread.CorruptError{Thread: id, Seq: f.Seq, Err: fmt.Errorf("cause %q has no marker", f.Cause)}
	case seq == first:
		return nil
	case seq > f.Seq:
		return &thread.CorruptError{Thread: id, Seq: f.Seq, Err: fmt.Errorf("the marker of cause %q names the later seq %d", f.Cause, seq)}
	}
	at, err := s.fact(ctx, id, seq)
	switch {
	case err != nil:
		return err
	case at.Cause == f.Cause:
		return &thread.CorruptError{Thread: id, Seq: f.Seq, Err: fmt.Errorf("cause %q was already used at seq %d, by an earlier append", f.Cause, seq)}
	}
	return &thread.CorruptError{Thread: id, Seq: f.Seq, Err: fmt.Errorf("the marker of cause %q names seq %d, whose cause is %q", f.Cause, seq, at.Cause)}
}

// Threads returns a page of thread heads in id order; see thread.Store.
//
// It lists the subjects of every thread's first fact from the stream's
// state on every call, whatever the page, so each call's time and memory
// grow with the number of threads (a full listing in pages of k, with
// threads²/k), and then reads the heads of the page.
func (s *Store) Threads(ctx context.Context, page thread.ThreadsPage) ([]thread.Head, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	defer s.leave()
	limit := page.Limit
	if limit <= 0 {
		limit = thread.DefaultPageLimit
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	info, err := s.stream.Info(rctx, jetstream.WithSubjectFilter(s.l.firstFacts()))
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	ids := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		id, _, err := s.l.parseFactSubject(subj)
		if err != nil {
			return nil, fmt.Errorf("list threads: %w", err)
		}
		if id > page.After {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = ids[:min(len(ids), limit)]
	out := make([]thread.Head, 0, len(ids))
	for _, id := range ids {
		f, ok, err := s.last(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("list threads: %w", err)
		}
		if !ok {
			return nil, fmt.Errorf("list threads: %w", &thread.CorruptError{Thread: id, Err: errors.New("the first fact is listed but no fact reads back")})
		}
		out = append(out, headOf(id, f))
	}
	return out, nil
}
