package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// Options configure Connect.
type Options struct {
	// Workspace is the workspace root: where a local server runs, the
	// root every server is offered (MCP roots), and where declared checks
	// look. Absolute.
	Workspace string
	// Sandbox is where local servers run: the sandbox of the harness's
	// commands (its Workspace must be Workspace). In mode off a server
	// runs as the user; the environment is the allow-list in every mode.
	Sandbox sandbox.Spec
	// Environ is the environment the allow-list is applied to, and the
	// one ${VAR} in the settings is read from; nil is os.Environ().
	Environ []string
	// ConnectTimeout bounds starting a server and listing its tools; 0 is
	// 30 seconds.
	ConnectTimeout time.Duration
	// Version names the harness to the servers.
	Version string
	// HTTPClient is what remote servers are reached with; nil is
	// http.DefaultClient's transport.
	HTTPClient *http.Client
	// Tokens is where the tokens of remote servers a person logged in to
	// are kept (Login). A remote server whose settings give no
	// Authorization header is sent its kept token, refreshed when it
	// expires; one that asks for authorization without a usable token
	// fails, saying how to log in. Nil: no OAuth.
	Tokens *TokenStore
}

// State is where a server stands.
type State string

// The states of a server.
const (
	// Connected: the server answered and listed its tools.
	Connected State = "connected"
	// Failed: the server could not be started or reached, or did not list
	// its tools; its tools are not offered.
	Failed State = "failed"
	// Exited: a local server's process ended after it connected; calls
	// of its tools fail, saying how it ended.
	Exited State = "exited"
	// Closed: the client was closed.
	Closed State = "closed"
)

// Status is a server as the client sees it now.
type Status struct {
	Name      string
	Transport string
	// Endpoint is the command line of a local server or the URL of a
	// remote one (no header or environment value: they hold secrets).
	Endpoint string
	State    State
	// Error says why the server failed, or how it exited.
	Error string
	// Trusted is the settings' word that the server's readOnlyHint may
	// lower a tool to read only.
	Trusted bool
	// Tools are the tools offered to the model, in the server's order.
	Tools []ToolInfo
	// Skipped are the tools that are not offered, each with why.
	Skipped []string
	// Changed says the server's tool list, read again when it said it
	// changed (notifications/tools/list_changed), differs from the one
	// offered: a tool is gone, new, or defined otherwise. The calls of a
	// tool that is gone or defined otherwise fail.
	Changed bool
	// Protocol is the MCP protocol revision the server agreed to (harness
	// asks for ProtocolVersion).
	Protocol string
	// Restarts counts the times a local server that ended was started
	// again (at most MaxRestarts); LastExit says how it last ended.
	Restarts int
	LastExit string
	// Resources: the server declared resources, which the model may read
	// (ReadResourceTool). Sampling: the settings allow it a model turn
	// (Server.Sampling).
	Resources bool
	Sampling  bool
}

// ToolInfo is one tool of a server, as offered to the model.
type ToolInfo struct {
	// Name is the name the model calls: mcp__<server>__<tool>.
	Name string `json:"name"`
	// Remote is the tool's own name on the server.
	Remote      string `json:"remote"`
	Description string `json:"description,omitempty"`
	// Capability is read for a trusted server's read-only tool, else
	// execute; Confirm says whether a call asks a person (unless a
	// pattern or the approval mode answers for them).
	Capability action.Capability `json:"capability"`
	Confirm    bool              `json:"confirm"`
	// ReadOnlyHint is the server's annotation, as it said it.
	ReadOnlyHint bool `json:"read_only_hint,omitempty"`
	// Digest is the digest of the definition offered (DefinitionDigest).
	Digest string `json:"digest"`
}

// Client is the harness's connections to the MCP servers of its settings.
// Its Tools go in a toolbox beside the built-in tools; each call of one is
// an action through the effect boundary, like any other.
type Client struct {
	opts    Options
	servers []*conn
	blobs   atomic.Pointer[blobsRef]
}

type blobsRef struct{ b action.Blobs }

// Connect starts (or reaches) every server and lists its tools. Settings
// that cannot work are an error wrapping ErrConfig, and nothing is
// started; a server that cannot be started or reached is not: its Status
// says why, and its tools are not offered. The caller closes the client.
func Connect(ctx context.Context, servers Servers, opts Options) (*Client, error) {
	if err := servers.Validate(); err != nil {
		return nil, err
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 30 * time.Second
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Sandbox.Workspace == "" {
		opts.Sandbox.Workspace = opts.Workspace
	}
	lookup := lookupIn(opts.Environ)
	c := &Client{opts: opts}
	for _, name := range servers.Names() {
		cfg := servers[name]
		ex, err := cfg.expanded(name, lookup)
		if err != nil {
			return nil, err
		}
		life, end := context.WithCancel(context.Background())
		c.servers = append(c.servers, &conn{client: c, name: name, cfg: ex, transport: ex.Transport(),
			endpoint: endpointOf(ex), timeout: ex.CallTimeout(), current: map[string]string{}, life: life, end: end})
	}
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
			defer cancel()
			if err := s.connect(cctx); err != nil {
				s.fail(err)
			}
		}()
	}
	wg.Wait()
	return c, nil
}

// lookupIn looks variables up in env (NAME=value lines).
func lookupIn(env []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
}

// endpointOf is where the server is, for the record and for people.
func endpointOf(s Server) string {
	if s.Transport() == facts.MCPHTTP {
		if u, err := url.Parse(s.URL); err == nil {
			u.User, u.RawQuery, u.Fragment = nil, "", ""
			return u.String()
		}
		return s.URL
	}
	return strings.TrimPrefix(commandLine(s.Command, s.Args), "exec ")
}

// KeepBlobs makes the client keep large results in b (a store's blobs):
// the report then names them by digest instead of holding them.
func (c *Client) KeepBlobs(b action.Blobs) {
	c.blobs.Store(&blobsRef{b})
}

func (c *Client) blobStore() action.Blobs {
	if r := c.blobs.Load(); r != nil {
		return r.b
	}
	return nil
}

// Tool is one tool of a connected server, an adapter for the runtime's
// toolbox (it is a harness.ToolAdapter, with every optional method the
// runtime asks of one): it names the capability it needs, asks a person
// unless it is a trusted server's read-only tool, says where a local
// server runs and what a call records of its server, that a remote
// server's effects cannot be observed, and the check the settings declare.
type Tool interface {
	action.Adapter
	Schema() facts.ToolSchema
	Capability() action.Capability
	Confirm() bool
	Sandbox() *facts.Sandbox
	Unobserved() bool
	MCPCall(args string, offered *facts.ToolSchema) *facts.MCPCall
	Check(args json.RawMessage) (*facts.CheckSpec, error)
}

// Tools returns the tools of the connected servers, for the runtime's
// toolbox: server by server in name order, each server's tools in its own
// order.
func (c *Client) Tools() []Tool {
	var out []Tool
	for _, s := range c.servers {
		s.mu.Lock()
		for _, t := range s.tools {
			out = append(out, t)
		}
		s.mu.Unlock()
	}
	if r := c.resourceTool(); r != nil {
		out = append(out, r)
	}
	return out
}

// Status returns every server's status, in name order.
func (c *Client) Status() []Status {
	out := make([]Status, len(c.servers))
	for i, s := range c.servers {
		out[i] = s.status()
	}
	return out
}

// Close ends every server: a local one's stdin is closed and, if it does
// not end within a few seconds, it is killed; a remote session is ended.
func (c *Client) Close() error {
	var errs []error
	for _, s := range c.servers {
		if err := s.close(); err != nil {
			errs = append(errs, fmt.Errorf("mcp server %q: %w", s.name, err))
		}
	}
	return errors.Join(errs...)
}

// conn is one server.
type conn struct {
	client    *Client
	name      string
	cfg       Server
	transport string
	endpoint  string
	timeout   time.Duration

	tools   []*tool // as offered, fixed at connect
	skipped []string
	// calls are the calls being made, for the server's questions.
	calls calls
	// life ends when the client is closed (end): a question put to a
	// person is no longer waited for.
	life context.Context
	end  context.CancelFunc

	// reviving is held while a local server that ended is started again
	// (revive); listing while the tool list is read (again), and while
	// the session is opened.
	reviving sync.Mutex
	listing  sync.Mutex
	// mu guards session, tap, proc, protocol, restarts, lastExit,
	// current, stale, changed, err, closed, resources and prompts.
	mu      sync.Mutex
	session *sdk.ClientSession
	// tap watches a remote server's HTTP exchanges (see session.go);
	// nil for a local server.
	tap  *tap
	proc *process // a local server
	// protocol is the protocol revision the server agreed to.
	protocol string
	// restarts counts the times a local server that ended was started
	// again; lastExit says how it last ended.
	restarts int
	lastExit string
	// current is the server's listing now: the definition digest of each
	// tool by its remote name. stale says a list_changed notification came
	// since it was read.
	current map[string]string
	stale   bool
	changed bool
	err     error
	closed  bool
	// resources: the server declared resources when it connected (see
	// ReadResourceTool).
	resources bool
	// prompts: the server declared prompts (see Client.Prompts).
	prompts bool
}

func (s *conn) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
	if s.proc != nil {
		_ = s.proc.close(2 * time.Second)
	}
	if s.session != nil {
		_ = s.session.Close()
	}
	s.tools = nil
}

// connect starts or reaches the server, and lists its tools.
func (s *conn) connect(ctx context.Context) error {
	// A list_changed notification may come as soon as the session is up:
	// its reading again waits until the tools are offered.
	s.listing.Lock()
	defer s.listing.Unlock()
	if err := s.open(ctx); err != nil {
		return err
	}
	listed, err := s.list(ctx)
	if err != nil {
		return s.explain("list its tools", err)
	}
	s.offer(listed)
	return nil
}

// open starts (a local server) or reaches (a remote one) the server and
// initializes a session with it, speaking ProtocolVersion; s.proc and
// s.session are the new ones. s.listing is held.
func (s *conn) open(ctx context.Context) error {
	opts := s.client.opts
	var transport sdk.Transport
	switch s.transport {
	case facts.MCPStdio:
		p, err := startProcess(ctx, s.cfg, opts.Sandbox, opts.Environ)
		if err != nil {
			return fmt.Errorf("start %s: %w", s.endpoint, err)
		}
		s.mu.Lock()
		s.proc = p
		s.mu.Unlock()
		transport = &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}
	case facts.MCPHTTP:
		tp := newTap(s.roundTripper())
		s.mu.Lock()
		s.tap = tp
		s.mu.Unlock()
		hc := &http.Client{Transport: tp}
		t := &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: 2}
		if opts.Tokens != nil && !hasHeader(s.cfg.Headers, "Authorization") {
			a, err := newStoredAuth(s.name, s.cfg.URL, *opts.Tokens, oauthClient(opts.HTTPClient))
			if err != nil {
				return err
			}
			t.OAuthHandler = a
		}
		transport = t
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	var sample func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error)
	if s.cfg.Sampling {
		// Declared (sampling, without tools or context) only to a server
		// the settings allow a model turn.
		sample = s.sample
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "harness", Version: version}, &sdk.ClientOptions{
		ElicitationHandler:   s.elicit,
		CreateMessageHandler: sample,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.mu.Lock()
			s.stale = true
			s.mu.Unlock()
			// Read the list again, off the connection's own goroutine
			// (which must go on reading to get the answer).
			go s.refresh()
		},
	})
	cl.AddReceivingMiddleware(s.refuseSampling, keptDefaults)
	if opts.Workspace != "" {
		// The workspace is the one root a server is offered: a server that
		// honours roots (server-filesystem does) works there.
		cl.AddRoots(&sdk.Root{URI: (&url.URL{Scheme: "file", Path: opts.Workspace}).String(), Name: "workspace"})
	}
	session, err := cl.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		return s.explain("connect", err)
	}
	s.mu.Lock()
	s.session = session
	if r := session.InitializeResult(); r != nil {
		s.protocol = r.ProtocolVersion
		s.resources = r.Capabilities != nil && r.Capabilities.Resources != nil
		s.prompts = r.Capabilities != nil && r.Capabilities.Prompts != nil
	}
	s.mu.Unlock()
	return nil
}

// roundTripper is how a remote server is reached: the HTTP client of the
// options (or the default), the settings' headers added, each response
// bounded.
func (s *conn) roundTripper() http.RoundTripper {
	opts := s.client.opts
	base := http.DefaultTransport
	if opts.HTTPClient != nil && opts.HTTPClient.Transport != nil {
		base = opts.HTTPClient.Transport
	}
	return headers{s.cfg.Headers, base}
}

// explain wraps err from doing what, saying how a local server ended if
// it did, or what it said so far, and why a package runner cannot work
// in the sandbox.
func (s *conn) explain(what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v", s.client.opts.ConnectTimeout)
	}
	if s.proc == nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	select {
	case <-s.proc.done:
	case <-time.After(200 * time.Millisecond):
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	if _, ok := s.proc.exited(); ok {
		msg += "; " + s.proc.describeExit()
	} else if t := s.proc.stderr.String(); t != "" {
		msg += "; its stderr so far: " + oneLine(t, 400)
	}
	switch filepath.Base(s.cfg.Command) {
	case "npx", "uvx", "bunx", "pnpx":
		if s.client.opts.Sandbox.Mode != sandbox.Off {
			msg += fmt.Sprintf("; %s fetches the server when it starts, which the sandbox does not let it (no network; its cache is read-only): install the server first and name its command", filepath.Base(s.cfg.Command))
		}
	}
	return errors.New(msg)
}

// list reads the server's whole tool list.
func (s *conn) list(ctx context.Context) ([]*sdk.Tool, error) {
	s.mu.Lock()
	session := s.session
	s.mu.Unlock()
	var out []*sdk.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// offer makes the adapters of the tools listed: each named
// mcp__<server>__<tool>, with its input schema; a tool whose name or
// schema cannot be offered is skipped, saying why.
func (s *conn) offer(listed []*sdk.Tool) {
	var tools []*tool
	var skipped []string
	current := map[string]string{}
	seen := map[string]bool{}
	// A hint lowers a tool only where the settings trust the server and
	// its program is not one the model can rewrite (looked at once).
	hintsTaken := s.cfg.Trusted && s.programOutside()
	for _, t := range listed {
		schema, err := offeredSchema(s.name, t)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", t.Name, err))
			continue
		}
		if seen[schema.Name] {
			skipped = append(skipped, fmt.Sprintf("%s: its name is %s once unsafe characters are replaced, as another tool's", t.Name, schema.Name))
			continue
		}
		seen[schema.Name] = true
		hint := t.Annotations != nil && t.Annotations.ReadOnlyHint
		tl := &tool{c: s, name: schema.Name, remote: t.Name, schema: schema, digest: DefinitionDigest(schema),
			readOnlyHint: hint, readOnly: hint && hintsTaken, check: s.cfg.Checks[t.Name]}
		if s.transport == facts.MCPStdio {
			spec := s.client.opts.Sandbox.Clone()
			spec.Network = spec.Network || s.cfg.Network
			spec.NetworkAllow = nil // as startProcess runs it
			for k := range s.cfg.Env {
				spec.Env = append(spec.Env, k)
			}
			slices.Sort(spec.Env)
			r := spec.Record()
			tl.sandbox = &r
		}
		tools = append(tools, tl)
		current[t.Name] = tl.digest
	}
	s.mu.Lock()
	s.tools, s.skipped, s.current = tools, skipped, current
	s.mu.Unlock()
}

// offeredSchema is the schema a model is shown of a server's tool: named
// mcp__<server>__<tool> (characters a model's tool name cannot hold
// replaced by '_'), its description, its input schema as an object schema.
func offeredSchema(server string, t *sdk.Tool) (facts.ToolSchema, error) {
	if t.Name == "" {
		return facts.ToolSchema{}, errors.New("the tool has no name")
	}
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return facts.ToolSchema{}, fmt.Errorf("its input schema cannot be encoded: %v", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return facts.ToolSchema{}, fmt.Errorf("its input schema is not a JSON object: %s", shorten(string(raw), 80))
	}
	if typ, ok := obj["type"]; ok && typ != "object" {
		return facts.ToolSchema{}, fmt.Errorf("its input schema's type is %v, not object", typ)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return facts.ToolSchema{Name: ToolName(server, t.Name), Description: desc, Schema: canonical(raw)}, nil
}

// ToolName is the name a model calls a server's tool by:
// mcp__<server>__<tool>, with every character of tool that is not a
// letter, a digit, '_' or '-' replaced by '_'.
func ToolName(server, tool string) string {
	b := []byte(tool)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return "mcp__" + server + "__" + string(b)
}

// canonical is raw as a log keeps a JSON document: compact, with <, > and
// & escaped (see facts.RawJSON), so that a definition read back from
// system.configured has the same digest as the one offered.
func canonical(raw []byte) facts.RawJSON {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return facts.RawJSON(raw)
	}
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, compact.Bytes())
	return facts.RawJSON(escaped.Bytes())
}

// DefinitionDigest is the digest of a tool's definition as offered to a
// model — its name, its description and its input schema (in the form a
// log keeps) — the one facts.MCPCall.Offered records.
func DefinitionDigest(s facts.ToolSchema) string {
	h := sha256.New()
	h.Write([]byte(s.Name))
	h.Write([]byte{0})
	h.Write([]byte(s.Description))
	h.Write([]byte{0})
	h.Write(canonical(s.Schema))
	return hex.EncodeToString(h.Sum(nil))
}

// refresh reads the tool list again after the server said it changed.
func (s *conn) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), s.client.opts.ConnectTimeout)
	defer cancel()
	_ = s.relist(ctx)
}

// relist reads the server's tool list, if it said the list changed since
// it was last read, and notes whether it now differs from the one offered.
func (s *conn) relist(ctx context.Context) error {
	s.listing.Lock()
	defer s.listing.Unlock()
	s.mu.Lock()
	stale := s.stale && s.session != nil && s.err == nil
	s.stale = false
	s.mu.Unlock()
	if !stale {
		return nil
	}
	listed, err := s.list(ctx)
	if err != nil {
		s.mu.Lock()
		s.stale = true
		s.mu.Unlock()
		return err
	}
	now := map[string]string{}
	for _, t := range listed {
		if schema, err := offeredSchema(s.name, t); err == nil {
			now[t.Name] = DefinitionDigest(schema)
		}
	}
	s.mu.Lock()
	offered := map[string]string{}
	for _, t := range s.tools {
		offered[t.remote] = t.digest
	}
	s.current = now
	s.changed = !maps.Equal(now, offered)
	s.mu.Unlock()
	return nil
}

// definition is the digest of the server's tool remote now: a new listing
// is read first when the server said its list changed. ok is false when
// the server no longer lists it.
func (s *conn) definition(ctx context.Context, remote string) (digest string, ok bool, err error) {
	if err := s.relist(ctx); err != nil {
		return "", false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	digest, ok = s.current[remote]
	return digest, ok, nil
}

func (s *conn) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.name, Transport: s.transport, Endpoint: s.endpoint, State: Connected, Trusted: s.cfg.Trusted,
		Skipped: slices.Clone(s.skipped), Changed: s.changed, Protocol: s.protocol, Restarts: s.restarts, LastExit: s.lastExit,
		Resources: s.resources, Sampling: s.cfg.Sampling}
	switch {
	case s.err != nil:
		st.State, st.Error = Failed, s.err.Error()
	case s.closed:
		st.State = Closed
	case s.proc != nil:
		if _, ok := s.proc.exited(); ok {
			st.State, st.Error = Exited, s.proc.describeExit()
		}
	}
	for _, t := range s.tools {
		st.Tools = append(st.Tools, ToolInfo{Name: t.name, Remote: t.remote, Description: t.schema.Description,
			Capability: t.Capability(), Confirm: t.Confirm(), ReadOnlyHint: t.readOnlyHint, Digest: t.digest})
	}
	return st
}

func (s *conn) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	session, proc := s.session, s.proc
	s.mu.Unlock()
	s.end()
	var err error
	if session != nil {
		err = session.Close()
	}
	if proc != nil {
		_ = proc.close(3 * time.Second)
		err = nil // a local server's end is its process's: closing stdin is how it is told
	}
	return err
}

// hasHeader reports whether h sets the header name (any case).
func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// headers adds a remote server's headers to every request.
type headers struct {
	h    map[string]string
	base http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.h {
			r.Header.Set(k, v)
		}
	}
	res, err := h.base.RoundTrip(r)
	if err == nil && res.Body != nil {
		// The SDK reads a JSON answer whole: a server sends at most this
		// much in one response.
		res.Body = &bounded{rc: res.Body, left: MaxResponseBytes}
	}
	return res, err
}

// MaxResponseBytes bounds one HTTP response of a remote MCP server (a
// stream's too); past it the read fails and the call with it.
const MaxResponseBytes = 64 << 20

// bounded is a response body that fails past its bound.
type bounded struct {
	rc   io.ReadCloser
	left int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the bound: the end of the body is fine, one byte more is not.
		var one [1]byte
		if n, err := b.rc.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("the MCP server's response is over %d bytes", MaxResponseBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *bounded) Close() error { return b.rc.Close() }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // not in the middle of a character
	}
	return s[:n] + "…"
}

// serverWord is a server's word as one line of a report, at most n bytes:
// control characters (a line break would read as another entry) are
// spaces.
func serverWord(s string, n int) string {
	return shorten(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s), n)
}

// programOutside reports whether a local server's command line names no
// file inside the workspace: its command and each argument, taken
// against the workspace (where the server runs), must not be a file
// there. A program the workspace holds is one the model can rewrite (a
// write the approval mode lets through), and a server's trust is trust in
// the settings that declare it, not in that file: its read-only hints
// are not taken (rev-trust14: a rewritten tools/mcpsrv.py read a file
// outside the workspace as a "read"). A remote server's are.
func (s *conn) programOutside() bool {
	ws := s.client.opts.Workspace
	if s.transport != facts.MCPStdio || ws == "" {
		return true
	}
	for _, a := range append([]string{s.cfg.Command}, s.cfg.Args...) {
		if a == "" || strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			continue
		}
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v // --script=tools/server.py
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && inside(p, ws) {
			return false
		}
	}
	return true
}

// inside reports whether p, resolved, lies in the directory dir, resolved.
func inside(p, dir string) bool {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
