package stock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/anthropic"
	"github.com/seed-7cc7a084/harness/model/openai"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/natsstore"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
	"github.com/seed-7cc7a084/harness/tools"
	"github.com/seed-7cc7a084/harness/worktree"
)

// Where a workspace keeps its store, and how one is found.
//
// A workspace is a directory tree an agent works in. Its store lives in
// StoreDir at the workspace root:
//
//	<root>/.harness/            the store directory
//	<root>/.harness/db/         the Pebble store of the threads (thread.OpenPebble)
//	<root>/.harness/search/     the search index of the threads (search.Open),
//	                            derived from db/ (for a NATS store, from its
//	                            stream), rebuilt at will
//	<root>/.harness/config.json optional settings (Settings), this checkout's own
//	<root>/.harness/project.json optional settings, committed: the project's
//	<root>/.harness/.gitignore  so git ignores the store (but not project.json)
//
// Locate finds the root the way git finds .git: it walks up from the
// current directory to the first directory holding a store (a .harness
// directory with a db in it) or a .git. The search never passes a git
// repository's top directory, so a store in a directory above a repository
// (an old ~/.harness, say) does not capture it: the repository is its own
// workspace, its store created there on a first run. Where neither is found,
// the root is the current directory itself. An
// explicit store directory (--store, HARNESS_STORE) replaces the store's
// place, not the workspace's: the root is still found from the current
// directory.
const StoreDir = ".harness"

// Place is where a command works: a workspace root and its store.
type Place struct {
	// Root is the workspace: the directory the tools are confined to and
	// the observer watches. Absolute.
	Root string
	// Store is the store directory: <Root>/.harness unless overridden.
	// Absolute.
	Store string
	// Exists reports whether the store directory holds a store (always
	// true for a remote store, which is made on first use).
	Exists bool
	// Within, when set, is the top of a git repository that holds Root:
	// the store found is nested inside a repository rather than at its top.
	// A front end says which store it uses — a .harness planted in a
	// subdirectory (settings and all) is never adopted silently.
	Within string
	// Remote, when set, is the URL of a NATS server (nats://…, tls://…)
	// whose JetStream keeps the threads and the kept file contents instead
	// of a Pebble store in Store (see package thread/natsstore); Store then
	// holds only the settings file, if any.
	Remote string
	// Replicas is how many replicas the stream and buckets of a remote
	// store get when this place's OpenStore is the first to make them (0:
	// natsstore's default, one). A store that exists keeps its own.
	Replicas int
}

// IsRemoteStore reports whether a store named on the command line or in
// HARNESS_STORE is a NATS server's URL rather than a directory.
func IsRemoteStore(name string) bool {
	return strings.HasPrefix(name, "nats://") || strings.HasPrefix(name, "tls://")
}

// Where names the store for a person: the NATS URL (its password, if it
// has one, masked) or the directory.
func (p Place) Where() string {
	if p.Remote == "" {
		return p.Store
	}
	if u, err := url.Parse(p.Remote); err == nil {
		return u.Redacted()
	}
	return p.Remote
}

// Locate returns the place of the workspace that contains dir. override,
// when not empty, names the store directory instead of <root>/.harness
// (relative to dir), or a NATS server (see IsRemoteStore and
// Place.Remote). Locate creates nothing.
func Locate(dir, override string) (Place, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Place{}, fmt.Errorf("locate workspace: %w", err)
	}
	// The nearest directory with a store, or with .git: a repository is
	// a workspace of its own, whatever a directory above it holds.
	root, found := walkUp(dir, func(d string) bool {
		return isDir(filepath.Join(d, StoreDir, "db")) || exists(filepath.Join(d, ".git"))
	})
	if !found {
		root = dir
	}
	p := Place{Root: root, Store: filepath.Join(root, StoreDir)}
	if !exists(filepath.Join(root, ".git")) {
		// A store below a repository's top: say so (Place.Within).
		if top, ok := walkUp(filepath.Dir(root), func(d string) bool { return exists(filepath.Join(d, ".git")) }); ok && top != root {
			p.Within = top
		}
	}
	if IsRemoteStore(override) {
		p.Remote, p.Exists = override, true
		return p, nil
	}
	if override != "" {
		if !filepath.IsAbs(override) {
			override = filepath.Join(dir, override)
		}
		p.Store = filepath.Clean(override)
	}
	p.Exists = isDir(p.DB())
	return p, nil
}

// LocateFrom is Locate with the environment getenv reads: the store is
// override, else $HARNESS_STORE; a NATS store made on first use gets
// $HARNESS_REPLICAS replicas (1 to 5), when set. A replica count that is
// not one of those wraps ErrReplicas.
func LocateFrom(dir, override string, getenv func(string) string) (Place, error) {
	if override == "" {
		override = getenv("HARNESS_STORE")
	}
	p, err := Locate(dir, override)
	if err != nil || p.Remote == "" {
		return p, err
	}
	if r := getenv("HARNESS_REPLICAS"); r != "" {
		n, err := strconv.Atoi(r)
		if err != nil || n < 1 || n > 5 {
			return p, fmt.Errorf("HARNESS_REPLICAS=%q: want the replicas of a NATS store made on first use, 1 to 5 (3 on a cluster): %w", r, ErrReplicas)
		}
		p.Replicas = n
	}
	return p, nil
}

// walkUp returns the first of dir and its parents for which ok is true.
func walkUp(dir string, ok func(string) bool) (string, bool) {
	for {
		if ok(dir) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isSocket(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().Type() == os.ModeSocket
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// DB is the directory of the Pebble store.
func (p Place) DB() string { return filepath.Join(p.Store, "db") }

// SearchDir is the directory of the store's search index (package
// search). It is kept on this machine whatever the store. A directory
// store's is in the store (which git ignores); a NATS store's, built here
// from its stream, is in the user's cache directory under harness/search,
// named by a digest of the store's address — never in the workspace,
// where a sandboxed command could write it, a worktree's snapshot would
// take it and a cloned repository could bring one.
func (p Place) SearchDir() string {
	if p.Remote != "" {
		if dir, err := os.UserCacheDir(); err == nil && !within(resolved(p.Root), resolved(dir)) {
			sum := sha256.Sum256([]byte(p.Remote))
			return filepath.Join(dir, "harness", "search", hex.EncodeToString(sum[:8]))
		}
	}
	return filepath.Join(p.Store, "search")
}

// OpenSearch opens the place's search index, made empty on first use,
// waiting up to wait for another process that has it open.
func (p Place) OpenSearch(ctx context.Context, wait time.Duration) (*search.Index, error) {
	return search.Open(ctx, p.SearchDir(), wait)
}

// StoreInside reports whether the place's store lies inside its workspace
// (where it resolves): such a store may have come with the workspace —
// copied with it, or committed — so its threads, and the policies they
// record, are not necessarily anyone's here. A remote store is not.
func (p Place) StoreInside() bool {
	return p.Remote == "" && within(resolved(p.Root), resolved(p.Store))
}

// storeInRoot returns the store directory relative to the root, slash
// separated, when it lies inside the workspace but is not <root>/.harness
// (which the observer skips anyway): the observer must not watch the
// store's own files change.
func (p Place) storeInRoot() (string, bool) {
	rel, err := filepath.Rel(p.Root, p.Store)
	if err != nil || rel == "." || rel == StoreDir || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// WorkspaceName is how a thread records the workspace root it works in:
// host:root, so that threads of a store several machines share can be told
// apart.
func WorkspaceName(root string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return root
	}
	return host + ":" + root
}

// lockPoll is how often OpenStore tries again a store another process
// holds.
const lockPoll = 100 * time.Millisecond

// OpenStore opens the place's store. With create false, a place without a
// store is ErrNoStore and nothing is created; with create true, the store
// directory is made, with a .gitignore that keeps it out of git.
//
// When a process serves the store (a harness server, see package
// thread/socketstore), OpenStore returns a client of it: a store that reads,
// appends, keeps blobs and holds threads through that process, so that
// any number of processes use the store while one holds it. Otherwise it
// opens the store itself (see HoldStore).
//
// If another process has the store open and serves nobody, OpenStore
// tries again — a server that starts meanwhile is used — until wait has
// passed (0 tries once) or ctx is done, then fails with an error that
// wraps thread.ErrLocked and says what to do.
//
// A remote store (Place.Remote) is a JetStream stream on a NATS server,
// shared by every process that names it: OpenStore connects, making the
// stream on first use, and neither create nor wait applies.
func (p Place) OpenStore(ctx context.Context, wait time.Duration, create bool) (thread.Store, error) {
	return p.open(ctx, wait, create, true)
}

// OpenStoreReadOnly opens the place's existing store for reading only
// (thread.ReadOnly: it writes nothing, so it opens and reads on a full
// disk); a write fails with thread.ErrReadOnly. Its block cache is
// thread.ReaderCacheSize: a reader goes through a log once, and a cache
// the size of a writer's would keep every block it passed. As OpenStore
// otherwise: while a server holds the store, it reads through the server.
func (p Place) OpenStoreReadOnly(ctx context.Context, wait time.Duration) (thread.Store, error) {
	return p.open(ctx, wait, false, true, thread.ReadOnly(), thread.WithCacheSize(thread.ReaderCacheSize))
}

// HoldStore opens the place's store as OpenStore does, but always in this
// process, never through a server: the way for the process that is to
// serve it. While it is open, other processes cannot open it themselves.
func (p Place) HoldStore(ctx context.Context, wait time.Duration, create bool) (thread.Store, error) {
	return p.open(ctx, wait, create, false)
}

func (p Place) open(ctx context.Context, wait time.Duration, create, viaServer bool, opts ...thread.Option) (thread.Store, error) {
	if p.Remote != "" {
		var nopts []natsstore.Option
		if p.Replicas > 0 {
			nopts = append(nopts, natsstore.WithReplicas(p.Replicas))
		}
		s, err := natsstore.Dial(ctx, p.Remote, nopts...)
		if err != nil {
			return nil, fmt.Errorf("open the store: %w", err)
		}
		return s, nil
	}
	if !p.Exists && !create {
		return nil, fmt.Errorf("%w in %s or any directory above it (looked for %s/)", ErrNoStore, p.Root, StoreDir)
	}
	if create {
		if err := os.MkdirAll(p.Store, 0o755); err != nil {
			return nil, fmt.Errorf("create store: %w", err)
		}
		ignore := filepath.Join(p.Store, ".gitignore")
		if !exists(ignore) {
			if err := os.WriteFile(ignore, []byte("# The harness store: threads and kept file contents (project.json, the\n# committed settings, is not ignored).\n*\n!project.json\n"), 0o644); err != nil {
				return nil, fmt.Errorf("create store: %w", err)
			}
		}
	}
	deadline := time.Now().Add(wait)
	for {
		if viaServer {
			c, err := socketstore.Dial(ctx, p.Store)
			if err == nil {
				return c, nil
			}
			if !errors.Is(err, socketstore.ErrNoServer) {
				return nil, fmt.Errorf("open the store: %w", err)
			}
		}
		s, err := thread.OpenPebble(p.DB(), opts...)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, thread.ErrLocked) {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			if old := filepath.Join(p.Store, socketstore.SocketName); viaServer && isSocket(old) {
				// A server of an older version listens in the store
				// directory, where no client looks any more.
				err = fmt.Errorf("%w; a harness server of an older version may hold it (its socket is %s): stop it and start it again", err, old)
			}
			if wait > 0 {
				return nil, fmt.Errorf("%w (still in use after waiting %v)", err, wait)
			}
			return nil, err
		}
		t := time.NewTimer(min(lockPoll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for store %s: %w", p.DB(), ctx.Err())
		case <-t.C:
		}
	}
}

// scriptedScheme is the model spec scheme of a scripted model.
const scriptedScheme = "scripted:"

// ParseModelSpec checks a model spec without loading anything and returns
// it in the form to record: "scripted:FILE" with FILE absolute (relative to
// dir), or "openai:MODEL" / "anthropic:MODEL" as given. Any other form is
// ErrModelSpec.
func ParseModelSpec(spec, dir string) (string, error) {
	scheme, rest, ok := strings.Cut(spec, ":")
	switch {
	case spec == "":
		return "", fmt.Errorf("%w: no model given; want scripted:FILE, openai:MODEL or anthropic:MODEL", ErrModelSpec)
	case !ok || (scheme != "scripted" && scheme != "openai" && scheme != "anthropic"):
		return "", fmt.Errorf("%w %q: want scripted:FILE, openai:MODEL or anthropic:MODEL", ErrModelSpec, spec)
	case rest == "" && scheme == "scripted":
		return "", fmt.Errorf("%w %q: name the script file, as in scripted:script.jsonl", ErrModelSpec, spec)
	case rest == "":
		return "", fmt.Errorf("%w %q: name the model, as in %s:MODEL", ErrModelSpec, spec, scheme)
	case scheme != "scripted":
		return spec, nil
	}
	if !filepath.IsAbs(rest) {
		rest = filepath.Join(dir, rest)
	}
	return scriptedScheme + filepath.Clean(rest), nil
}

// LoadModel returns the model a spec names (see ParseModelSpec; opts
// configure a real provider). A script is read and checked now, and a
// provider's key looked up, so a bad spec fails before anything runs.
func LoadModel(spec string, opts ...model.Option) (model.Model, error) {
	canon, err := ParseModelSpec(spec, "")
	if err != nil && !strings.HasPrefix(spec, scriptedScheme) {
		return nil, err
	}
	m, err := openModel(spec, opts...)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", spec, err)
	}
	if !strings.HasPrefix(spec, scriptedScheme) {
		// Each turn says which model ran it, and is priced by it.
		m = model.WithSpec(m, canon)
	}
	return m, nil
}

// modelSpecForms are the forms of a model spec openModel accepts.
const modelSpecForms = "scripted:FILE, openai:MODEL or anthropic:MODEL"

// openModel returns the model a spec names:
//
//	scripted:FILE      a script of decisions (see model.Scripted)
//	openai:MODEL       an OpenAI-compatible chat completions API (see package model/openai)
//	anthropic:MODEL    the Anthropic messages API (see package model/anthropic)
//
// The spec is cut at its first colon, so a model name may hold colons
// ("openai:llama3.1:8b" for Ollama). Options configure the real providers;
// a scripted model ignores them. A spec it cannot read is an error
// wrapping model.ErrSpec that names the spec and the forms accepted.
func openModel(spec string, opts ...model.Option) (model.Model, error) {
	scheme, name, ok := strings.Cut(spec, ":")
	if !ok {
		return nil, fmt.Errorf("model spec %q: %w: no provider; want %s", spec, model.ErrSpec, modelSpecForms)
	}
	if name == "" {
		what := "model name"
		if scheme == "scripted" {
			what = "file"
		}
		return nil, fmt.Errorf("model spec %q: %w: no %s; want %s", spec, model.ErrSpec, what, modelSpecForms)
	}
	switch scheme {
	case "scripted":
		return model.LoadScript(name)
	case "openai":
		return openai.New(name, opts...)
	case "anthropic":
		return anthropic.New(name, opts...)
	}
	return nil, fmt.Errorf("model spec %q: %w: unknown provider %q; want %s", spec, model.ErrSpec, scheme, modelSpecForms)
}

// Stock is the stock coding harness of a workspace: the built-in tools of
// package tools confined to the root, DelegatingActor over them (a model
// may delegate to child threads of the same tools), and services
// whose observer watches the root. Every command that folds or resumes a
// thread of the workspace builds the same Stock, so the thread's log folds
// the same way in every process.
type Stock struct {
	Place   Place
	Config  harness.Config
	Toolbox *harness.Toolbox
	Actor   harness.Actor
	// Tools are the built-in tools the toolbox holds; Tools.Resolve is
	// where a path of theirs leads, for an approval policy's rules.
	Tools *tools.Set
	// Sandbox is where the tools' commands may reach.
	Sandbox sandbox.Spec
	// MCP is the connections to the MCP servers whose tools the toolbox
	// holds beside the built-in ones (WithMCP); nil when there are none.
	// Close ends them.
	MCP *mcp.Client
	// Sealer, when set, seals the heads of the threads the session's
	// runtimes leave parked or ended (harness.Runtime.Sealer): a stock
	// made for a session that is not read-only has the person's (see
	// Place.Sealer). Unsealed says why such a one has none.
	Sealer   *seal.Sealer
	Unsealed error
	// Instructions reads the instruction files (AGENTS.md) the model is
	// given before each turn (WithInstructions; by default the
	// workspace's, with no user file).
	Instructions Instructions
	// Agents reads the agent files a delegation may name: the
	// workspace's and the user's, beside the instruction files (AgentsOf).
	Agents Agents
	// Hooks runs the hooks in force (WithHooks) in the tools' sandbox.
	Hooks harness.HookRunner
	// Models loads the models agent files name for the children of
	// their delegations (harness.Services.Models): each spec once (see
	// Models).
	Models func(spec string) (model.Model, error)
	// Worktrees makes the worktrees children delegated in parallel work
	// in (harness.Services.Worktrees); nil when Config.Worktrees is off.
	Worktrees harness.Worktrees
	// Ledger is shared by every runtime of the stock (harness.Services.Ledger):
	// threads driven at once in its workspace tell each other's changes
	// from their own.
	Ledger *action.Ledger
}

// Close ends the MCP servers the stock started or reached, if any.
func (s *Stock) Close() error {
	var err error
	if w, ok := s.Worktrees.(*worktrees); ok {
		err = w.close()
	}
	if s.MCP != nil {
		err = errors.Join(err, s.MCP.Close())
	}
	return err
}

// Option configures NewStock.
type Option func(*stockOptions)

type stockOptions struct {
	mode    sandbox.Mode
	network bool
	// networkAllow is the allow-list (WithNetworkAllow).
	networkAllow []string
	mcpCtx       context.Context
	mcpServers   mcp.Servers
	tools        []harness.ToolAdapter                                         // WithTools
	sealDir      string                                                        // WithSealDir
	ins          *Instructions                                                 // WithInstructions
	hooks        []HookInForce                                                 // WithHooks
	worktreeDir  string                                                        // WithWorktreeDir
	actor        func(harness.Config, *harness.Toolbox) (harness.Actor, error) // WithActor
	readOnly     bool                                                          // readingOnly
}

// readingOnly is the option of a session that drives no thread (one that
// reads the record, one that posts to it): a sandbox the workspace makes
// impossible (its .git leads into a writable root) does not stop it,
// since it runs no command (tools.WithLenientSandbox).
func readingOnly() Option {
	return func(o *stockOptions) { o.readOnly = true }
}

// WithActor composes the stock's actor with compose, given the stock's
// configuration and toolbox (the built-in tools, WithTools's, the MCP
// servers'), in place of harness.DelegatingActor: a harness of one's own
// — a fold component (harness.Component), other parts — that keeps the
// stock's tools, sandbox and observer, and that serve, a worker or a
// session built on the Stock fold and drive every thread with.
func WithActor(compose func(cfg harness.Config, tools *harness.Toolbox) (harness.Actor, error)) Option {
	return func(o *stockOptions) { o.actor = compose }
}

// WithWorktreeDir sets the directory the worktrees of threads are made in
// (outside the workspace); by default worktree.DefaultDir.
func WithWorktreeDir(dir string) Option {
	return func(o *stockOptions) { o.worktreeDir = dir }
}

// WithSealDir makes the person's seal directory dir (their key and
// witness log; see SealDir) now, if it is not there, and hides it from
// every command the tools run, as it hides the user's settings: the
// stock of a session that seals the threads it drives.
func WithSealDir(dir string) Option {
	return func(o *stockOptions) { o.sealDir = dir }
}

// WithInstructions sets how the stock reads instruction files (see
// Instructions); its Root is the place's.
func WithInstructions(in Instructions) Option {
	return func(o *stockOptions) { o.ins = &in }
}

// WithHooks gives the stock the hooks in force: those Trusted run, in the
// tools' sandbox (see HookSpec), when a thread's record names them.
func WithHooks(h []HookInForce) Option {
	return func(o *stockOptions) { o.hooks = h }
}

// WithMCP starts (or reaches) the MCP servers, within ctx, and offers
// their tools after the built-in ones: each call an action through the
// effect boundary like any other, a local server running in the sandbox
// the tools' commands run in (see package mcp). A server that cannot be
// started is not an error: Stock.MCP's Status says why, and its tools are
// not offered. The caller closes the Stock.
func WithMCP(ctx context.Context, servers mcp.Servers) Option {
	return func(o *stockOptions) { o.mcpCtx, o.mcpServers = ctx, servers }
}

// WithSandboxMode sets the mode of the sandbox the tools' commands run in
// (sandbox.WorkspaceWrite by default; sandbox.ReadOnly, or sandbox.Off to
// run them unsandboxed). The rest of the stock's sandbox is kept: the
// store, the user's settings and the seal directory hidden, git's paths
// pinned. (tools.WithSandbox, one layer down, takes a whole
// sandbox.Spec; the stock builds that spec, and these options adjust it.)
func WithSandboxMode(mode sandbox.Mode) Option {
	return func(o *stockOptions) { o.mode = mode }
}

// WithNetwork gives the tools' commands the network (on) or not (the
// default), as sandbox.Spec.Network does; with it, WithNetworkAllow's
// list is not used.
func WithNetwork(on bool) Option {
	return func(o *stockOptions) { o.network = on }
}

// NewStock returns the stock harness of the place under cfg.
func NewStock(place Place, cfg harness.Config, options ...Option) (*Stock, error) {
	o := stockOptions{mode: sandbox.WorkspaceWrite}
	for _, opt := range options {
		opt(&o)
	}
	if cfg.Workspace == "" {
		cfg.Workspace = WorkspaceName(place.Root)
	}
	// Commands run in a sandbox that hides the store, wherever it is.
	store := place.Store
	if place.Remote != "" {
		store = ""
	}
	spec, err := sandbox.Default(place.Root, store)
	if err != nil {
		return nil, fmt.Errorf("the sandbox of %s: %w", place.Root, err)
	}
	spec.Mode, spec.Network = o.mode, o.network
	if !o.network {
		spec.NetworkAllow = slices.Clone(o.networkAllow)
	}
	// Each command's nested stores come from the observer's reading
	// before it (Services), not from a walk of the workspace.
	spec.Nested = &sandbox.Nested{}
	// The user's harness settings (their serve tokens) and the trust they
	// gave are the person's: no command reads or writes them, and no file
	// tool either where the workspace holds them (harness run in $HOME).
	// (What lies there is then untrusted all the same: see LoadLayered.)
	var protected, userDirs []string
	if f := UserSettingsFile(os.Getenv); f != "" {
		dir := resolved(filepath.Dir(f))
		userDirs = append(userDirs, dir)
		ws := resolved(place.Root)
		if within(ws, dir) && dir != ws {
			rel, _ := filepath.Rel(ws, dir)
			protected = append(protected, filepath.ToSlash(rel))
		}
		if isDir(dir) && !within(dir, ws) && !slices.Contains(spec.Hidden, dir) {
			spec.Hidden = append(spec.Hidden, dir)
		}
	}
	// The person's seal directory (their key and witness log: see
	// WithSealDir) is made now, so that it is there to be hidden: a key
	// made later, on first use, is never in sight of a command. Hidden
	// on its own too, for a workspace that holds the configuration
	// directory (its seal directory is then refused: see Place.Sealer).
	// A seal directory that cannot be made (a read-only home, say) does
	// not stop the session: its threads are not sealed, and it says so
	// (Stock.Unsealed).
	var unsealed error
	if sd := o.sealDir; sd != "" {
		if err := os.MkdirAll(sd, 0o700); err != nil {
			unsealed = fmt.Errorf("the seal directory: %w", err)
		} else if r := resolved(sd); !within(r, resolved(place.Root)) && !slices.Contains(spec.Hidden, r) {
			spec.Hidden = append(spec.Hidden, r)
		}
	}
	// The tokens of remote MCP servers (harness mcp login): their
	// directory is made now, when a remote server is declared, and hidden
	// on its own, so that a login while the session runs is never in
	// sight of its commands (the user's harness directory is hidden only
	// if it was there when the session began).
	if hasRemote(o.mcpServers) {
		if ts, err := place.MCPTokens(os.Getenv); err == nil && os.MkdirAll(ts.Dir, 0o700) == nil {
			expireKeptSessions(ts)
			if r := resolved(ts.Dir); !slices.Contains(spec.Hidden, r) {
				spec.Hidden = append(spec.Hidden, r)
			}
		}
	}
	// The file tools never write the store, whatever it is called: the
	// observer skips it, so a write there would be an effect nobody saw.
	opts := []tools.Option{tools.WithSandbox(spec)}
	if o.readOnly {
		opts = append(opts, tools.WithLenientSandbox())
	}
	if rel, ok := place.storeInRoot(); ok {
		protected = append(protected, rel)
	}
	if len(protected) > 0 {
		opts = append(opts, tools.WithProtected(protected...))
	}
	set, err := tools.New(place.Root, opts...)
	if err != nil {
		return nil, fmt.Errorf("workspace tools: %w", err)
	}
	adapters := make([]harness.ToolAdapter, 0, len(set.Tools()))
	for _, t := range set.Tools() {
		adapters = append(adapters, t)
	}
	worktrees := cfg.Worktrees != facts.WorktreesOff && worktree.InRepository(place.Root)
	if worktrees {
		// Children delegated in parallel work in worktrees of their own
		// (in a git repository: elsewhere they share the workspace);
		// their changes come back through this tool, which a person
		// approves seeing the diff.
		adapters = append(adapters, set.MergeTool())
	}
	adapters = append(adapters, o.tools...)
	var client *mcp.Client
	if len(o.mcpServers) > 0 {
		ctx := o.mcpCtx
		if ctx == nil {
			ctx = context.Background()
		}
		// A server runs for as long as the stock: its start walks for the
		// nested stores (it runs beside the commands, so no reading taken
		// between two commands can vouch for what it made).
		mspec := spec.Clone()
		mspec.Nested = nil
		// The tokens of remote servers the person logged in to; none
		// when their store cannot be used (a configuration directory in
		// the workspace): such a server then says it needs a login.
		tokens, _ := place.MCPTokens(os.Getenv)
		client, err = mcp.Connect(ctx, o.mcpServers, mcp.Options{Workspace: place.Root, Sandbox: mspec, Version: cfg.Version, Tokens: tokens})
		if err != nil {
			return nil, err
		}
		for _, t := range client.Tools() {
			adapters = append(adapters, t)
		}
	}
	fail := func(err error) (*Stock, error) {
		if client != nil {
			client.Close()
		}
		return nil, err
	}
	tb, err := harness.NewToolbox(adapters...)
	if err != nil {
		return fail(err)
	}
	compose := harness.DelegatingActor
	if o.actor != nil {
		compose = o.actor
	}
	actor, err := compose(cfg, tb)
	if err != nil {
		return fail(fmt.Errorf("the actor: %w", err))
	}
	ins := Instructions{}
	if o.ins != nil {
		ins = *o.ins
	}
	ins.Root = place.Root
	ins.Hidden = append(slices.Clone(spec.Hidden), userDirs...)
	var wts harness.Worktrees
	if worktrees {
		wts = newWorktrees(place, spec, store, o.worktreeDir)
	}
	agents := AgentsOf(ins)
	agents.Trusted = place.TrustedContent(os.Getenv)
	return &Stock{Place: place, Config: cfg, Toolbox: tb, Actor: actor, Tools: set, Sandbox: spec, MCP: client, Instructions: ins, Agents: agents, Unsealed: unsealed,
		Hooks: newHookRunner(place.Root, spec, o.hooks), Worktrees: wts, Ledger: &action.Ledger{Shared: LedgerFile(place.Root)}, Models: Models("")}, nil
}

// LedgerFile is the file through which every process working in the
// workspace root on this machine shares its action ledger
// (action.Ledger.Shared): in the user's cache directory, under
// harness/ledgers, named by a digest of the workspace's path. No
// sandboxed command can write there (its writable roots are the
// workspace, a private temporary directory, its Go build cache and a
// child's worktree), so none can forge another thread's entries. ""
// when there is no cache directory: the ledger is then this process's
// alone.
func LedgerFile(root string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if within(root, dir) {
		return "" // a cache directory in the workspace: commands could write it
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "harness", "ledgers", hex.EncodeToString(sum[:8])+".jsonl")
}

// BlobsOf returns the store's content-addressed blobs when it keeps them
// (it implements action.Blobs), else nil.
func BlobsOf(store thread.Store) action.Blobs {
	b, _ := store.(action.Blobs)
	return b
}

// Services returns the services of the workspace with the model m: the
// tools, an observer of the root (skipping the store, and keeping the
// bytes of the files it reads in blobs when blobs is not nil, so that undo
// can restore them), and the root for declared checks. more configure the
// observer further (a change feed, the harness's own output files); the
// observer is an *action.Workspace, which the caller closes when it is
// done with the services.
func (s *Stock) Services(m model.Model, blobs action.Blobs, more ...action.WorkspaceOption) (harness.Services, error) {
	var opts []action.WorkspaceOption
	if rel, ok := s.Place.storeInRoot(); ok {
		opts = append(opts, action.WithSkipPaths(rel))
	}
	if blobs != nil {
		opts = append(opts, action.WithBlobs(blobs, 0))
	}
	if s.Place.Remote == "" {
		opts = append(opts, action.WithStorePaths(s.Place.Store))
	}
	// What the commands' sandbox covers is made before the observer's
	// first reading (an empty .git/config.worktree, say): there before
	// any action, not the first command's doing in the record.
	s.Sandbox.Prepare()
	ws, err := action.NewWorkspace(s.Place.Root, append(opts, more...)...)
	if err != nil {
		return harness.Services{}, fmt.Errorf("workspace observer: %w", err)
	}
	if s.Sandbox.Nested != nil {
		s.Sandbox.Nested.From(ws)
	}
	if s.MCP != nil && blobs != nil {
		s.MCP.KeepBlobs(blobs)
	}
	return harness.Services{Model: m, Models: s.Models, Tools: s.Toolbox, Observer: ws, Workspace: s.Place.Root, Blobs: blobs, Instructions: s.Instructions, Agents: s.Agents, Hooks: s.Hooks, Worktrees: s.Worktrees, Ledger: s.Ledger,
		Prepare: s.Sandbox.Prepare}, nil
}
