package stock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
	"github.com/seed-7cc7a084/harness/worktree"
)

// Session is a workspace opened for a front end — the command line, the
// server, the MCP server, a worker: its place, its settings (the files,
// with the command line's layer over them, through the one merge), the
// stock harness they configure, and its store. Every runtime a front end
// runs a thread with is built by Session.Runtime, on the session's store:
// the one place a runtime is made.
//
// A session is made in two steps: NewSession reads and checks the
// settings and makes the stock harness (a front end may look at both —
// start a server, say — before the store is opened), and Open opens the
// store. OpenSession does both. SessionOf makes a session of a store and a
// stock harness opened already.
//
// Runtime and Services may be called from several goroutines (a server's
// resumes, a worker's drives); Enter, Release, Reopen and Close not while
// anything else uses the session.
type Session struct {
	// Place is where the session works: after Enter, the workspace of
	// the thread entered.
	Place Place
	// Layered are the settings files and the command line's layer,
	// merged (see Merge); Layered.Settings is what they say together,
	// Layered.Notice what untrusted files widen that was left out.
	Layered Layered
	// SettingsErr is why a settings file could not be read, in a session
	// opened with SessionOptions.Lenient (which goes on without it).
	SettingsErr error
	// Approval is the approval the merged settings give (mode, allow and
	// deny patterns), its Resolve the stock tools': what answers the
	// confirmations it decides when the session drives a thread. Zero in
	// a lenient session.
	Approval drive.Approval
	// Model is the model spec the runtimes record for a thread they start
	// (see SessionOptions.Model); "" for none.
	Model string
	// Stock is the stock harness of Place; Stock.Config the configuration
	// of every runtime the session builds.
	Stock *Stock
	// Store is the session's store, once Open opened it.
	Store thread.Store

	opts SessionOptions
	// endStops ends the watch for stops asked of the store while the
	// session holds it (see watchStops).
	endStops func()
	// cfg and so are what the stock was made with, to make it again in
	// another workspace (Enter).
	cfg harness.Config
	so  []Option

	// mu guards observers: the observers of the runtimes built and not
	// freed yet, closed with the store.
	mu        sync.Mutex
	observers map[io.Closer]bool
	// stockClosed: Close ended the stock's MCP servers.
	stockClosed bool
	// server is the server the open store goes through, if it does: the
	// progress ShareProgress hands over goes to it.
	server atomic.Pointer[socketstore.Client]
}

// SessionOptions configure NewSession.
type SessionOptions struct {
	// Getenv reads the environment: where the user's settings and trust
	// files are (see UserSettingsFile); nil is os.Getenv.
	Getenv func(string) string
	// Flags is the command line as a layer of settings (FlagSource), laid
	// over the files; a zero Flags lays nothing.
	Flags SettingsSource
	// Lenient is for a session that only reads: a settings file that
	// cannot be read is kept in Session.SettingsErr and the session goes
	// on without it, and no approval is made. Otherwise it is the error.
	Lenient bool
	// Drive is for a session that may drive threads: the settings'
	// bounds (max_turns, max_steps, context_window) configure its
	// runtimes, and their sandbox and network the stock's tools.
	Drive bool
	// Worker is for a worker's session (with Drive): a thread its
	// runtimes configure that is no child works in a git worktree of its
	// own (harness.Config.OwnWorktree) when the workspace is in a git
	// repository, unless the settings' worktrees is off — the threads a
	// worker drives at once then never share a directory.
	Worker bool
	// MCP, when set (with Drive), starts (or reaches) the settings' MCP
	// servers within it, and offers their tools (see WithMCP). Close ends
	// them.
	MCP context.Context
	// Harness configure the runtimes further: the program's version, say.
	Harness []harness.Option
	// Stock are more options of the session's stock, after those its
	// settings give: a tool of one's own (WithTools), an actor composed
	// one's own way (WithActor).
	Stock []Option
	// Model says whether the runtimes record a model for the threads they
	// start (harness.WithModelName): ModelSpec when given (relative to
	// ModelDir; see ParseModelSpec), else the settings' model. The spec
	// recorded is Session.Model.
	Model     ModelUse
	ModelSpec string
	ModelDir  string

	// How Open opens the store. Create makes a store where there is none;
	// ReadOnly opens it for reading only (see Place.OpenStoreReadOnly);
	// Hold opens it in this process, never through a server (see
	// Place.HoldStore). Wait is how long to wait for a store another
	// process holds.
	Create, ReadOnly, Hold bool
	Wait                   time.Duration
	// OnUnsealed, when set, is told of a thread's head that could not be
	// sealed (see Stock.Sealer), and why: a front end says so.
	OnUnsealed func(head thread.Head, err error)
	// NoInput is for a session whose front end asks nobody (a run with
	// no terminal, or told so): when no other process shares its store
	// either (it holds a store in a directory itself), a question an MCP
	// server puts during a call is refused at once (harness.Runtime.NoAsk)
	// instead of waiting for an answer nothing could give.
	NoInput bool
}

// ModelUse says whether a session's runtimes record a model (see
// SessionOptions.Model).
type ModelUse int

// The uses of a model.
const (
	// NoModel: the runtimes record no model (a thread records the one it
	// was started with).
	NoModel ModelUse = iota
	// ModelIfAny: they record the model given or the settings', if any.
	ModelIfAny
	// ModelNeeded: they record the model given or the settings'; neither
	// is ErrNoModel.
	ModelNeeded
)

// OpenSession opens the workspace at place: NewSession, then Open. The
// caller closes the session.
func OpenSession(ctx context.Context, place Place, o SessionOptions) (*Session, error) {
	s, err := NewSession(place, o)
	if err != nil {
		return nil, err
	}
	if err := s.Open(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// NewSession reads the place's settings, lays o.Flags over them, checks
// what they say together, and makes the stock harness they configure (its
// MCP servers started, with o.MCP). The store is not opened yet (see
// Open). A settings file that cannot be read is the error (unless
// o.Lenient), naming the file; settings that cannot work are an error
// wrapping ErrBadSettings. The caller closes the session.
func NewSession(place Place, o SessionOptions) (*Session, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	s := &Session{Place: place, opts: o}
	l, err := place.LoadLayered(o.Getenv)
	if err != nil {
		if !o.Lenient {
			return nil, err
		}
		s.SettingsErr = err
	}
	if o.Flags.Scope != "" {
		l = l.Over(o.Flags)
	}
	s.Layered = l
	set := l.Settings
	if !o.Lenient {
		if s.Approval, err = drive.NewApproval(set.Approve, set.Allow, set.Deny); err != nil {
			return nil, badSettings(err)
		}
	}
	prices := l.Prices()
	opts := append([]harness.Option{func(c *harness.Config) { c.Settings, c.Hooks, c.Prices = l.Record(), l.HookRecord(), &prices }}, o.Harness...)
	s.so = append(s.so, WithHooks(l.Hooks))
	if o.Model != NoModel {
		if s.Model, err = s.ModelSpec(o.ModelSpec, o.ModelDir); err != nil && (o.Model == ModelNeeded || !errors.Is(err, ErrNoModel)) {
			return nil, err
		}
		if s.Model != "" {
			opts = append(opts, harness.WithModelName(s.Model))
		}
	}
	if o.Drive {
		bounds, err := boundsOf(set)
		if err != nil {
			return nil, err
		}
		opts = append(opts, bounds...)
		mode := sandbox.WorkspaceWrite
		if set.Sandbox != "" {
			if mode, err = sandbox.ParseMode(set.Sandbox); err != nil {
				return nil, badSettings(fmt.Errorf("sandbox: %w", err))
			}
		}
		rule := NetworkRuleOf(set)
		s.so = append(s.so, WithSandboxMode(mode), WithNetwork(rule.Kind == NetworkOn))
		if rule.Kind == NetworkAllowList {
			s.so = append(s.so, WithNetworkAllow(rule.Allow))
		}
		if o.MCP != nil && len(set.MCPServers) > 0 {
			s.so = append(s.so, WithMCP(o.MCP, set.MCPServers))
		}
	}
	if !o.Drive {
		s.so = append(s.so, readingOnly())
	}
	s.so = append(s.so, WithInstructions(InstructionsOf(place, set, o.Getenv)))
	s.so = append(s.so, o.Stock...)
	if s.cfg, err = harness.NewConfig(opts...); err != nil {
		return nil, err
	}
	if o.Drive && o.Worker && s.cfg.Worktrees != facts.WorktreesOff && worktree.InRepository(place.Root) {
		s.cfg.OwnWorktree = true
	}
	if s.Stock, err = s.stockOf(place); err != nil {
		return nil, err
	}
	s.Stock.Agents.Trusted = place.TrustedContent(o.Getenv)
	s.Stock.Models = Models("", s.ModelOptions()...)
	s.resolve()
	return s, nil
}

// stockOf makes the stock harness of p with the session's options and,
// for a session that may append (any but a read-only one: one that
// drives threads, and one that stops them), the person's sealer: its
// seal directory made (and hidden) with the stock, its key on first use
// after.
func (s *Session) stockOf(p Place) (*Stock, error) {
	so := s.so
	var unsealed error
	seals := !s.opts.ReadOnly
	if seals {
		var sd string
		if sd, unsealed = p.sealDirOf(s.opts.Getenv); unsealed == nil {
			so = append(slices.Clip(so), WithSealDir(sd))
		}
	}
	st, err := NewStock(p, s.cfg, so...)
	if err != nil {
		return nil, err
	}
	if seals {
		if unsealed == nil {
			unsealed = st.Unsealed // the directory could not be made
		}
		st.Unsealed = unsealed
		if unsealed == nil {
			st.Sealer, st.Unsealed = p.Sealer(s.opts.Getenv)
			if st.Sealer != nil && s.Layered.Settings.SealGitNotes {
				st.Sealer.Anchor = p.NoteAnchor()
			}
		}
	}
	return st, nil
}

// SessionOf is a session of a store and a stock harness made already (a
// server's store, wrapped so that its streams see every append; a
// harness composed in Go): its runtimes run on store under st.Config,
// with st's tools and observer. Its settings are none; Close closes the
// runtimes' observers and the store, not st.
func SessionOf(store thread.Store, st *Stock) *Session {
	s := &Session{Place: st.Place, Stock: st, Store: store, cfg: st.Config, stockClosed: true}
	s.resolve()
	return s
}

// resolve has the approval's path rules match where a path leads, through
// the workspace's symlinks, as the stock's tools would write it.
func (s *Session) resolve() {
	if s.Stock != nil && s.Stock.Tools != nil {
		s.Approval.Resolve = s.Stock.Tools.Resolve
	}
}

// badSettings wraps err, which says what cannot work, with ErrBadSettings
// and keeps its message.
func badSettings(err error) error { return settingsError{err} }

type settingsError struct{ err error }

func (e settingsError) Error() string   { return e.err.Error() }
func (e settingsError) Unwrap() []error { return []error{e.err, ErrBadSettings} }

// boundsOf are the runtime options of the bounds the settings give, else
// the defaults (DefaultMaxTurns, DefaultMaxSteps, a context window not
// known). A bound out of range wraps ErrBadSettings.
func boundsOf(s Settings) ([]harness.Option, error) {
	turns, steps, window := DefaultMaxTurns, DefaultMaxSteps, 0
	if s.MaxTurns != nil {
		turns = *s.MaxTurns
	}
	if s.MaxSteps != nil {
		steps = *s.MaxSteps
	}
	if s.ContextWindow != nil {
		window = *s.ContextWindow
	}
	switch {
	case turns < 0:
		return nil, badSettings(fmt.Errorf("max_turns %d: want a number of model turns, or 0 for no bound", turns))
	case steps < 1:
		return nil, badSettings(fmt.Errorf("max_steps %d: want a number of steps, at least 1", steps))
	case window < 0:
		return nil, badSettings(fmt.Errorf("context_window %d: want the model's context window in tokens, or 0 for not known", window))
	}
	guard := DefaultLoopGuard
	if s.LoopGuard != nil {
		guard = *s.LoopGuard
	}
	opts := []harness.Option{harness.WithBudget(turns, 0), harness.WithMaxSteps(steps), func(c *harness.Config) {
		c.LoopGuard, c.Worktrees, c.WorktreeMerge = guard, s.Worktrees, s.WorktreeMerge
	}}
	if window > 0 {
		opts = append(opts, func(c *harness.Config) { c.ContextWindow, c.CompactFraction = window, 0 })
	}
	return opts, nil
}

// Open opens the session's store as its options say (see
// SessionOptions); the errors are Place.OpenStore's.
func (s *Session) Open(ctx context.Context) error {
	var store thread.Store
	var err error
	switch o := s.opts; {
	case o.Hold:
		store, err = s.Place.HoldStore(ctx, o.Wait, o.Create)
	case o.ReadOnly:
		store, err = s.Place.OpenStoreReadOnly(ctx, o.Wait)
	default:
		store, err = s.Place.OpenStore(ctx, o.Wait, o.Create)
	}
	if err != nil {
		return err
	}
	s.Store, s.Place.Exists = store, true
	s.server.Store(servedBy(store))
	if !s.opts.ReadOnly {
		s.endStops = s.watchStops()
	}
	return nil
}

// Settings are what the session's settings say together.
func (s *Session) Settings() Settings { return s.Layered.Settings }

// ModelOptions are the options the settings give a real provider: the
// output limit of a turn (max_output_tokens), when they set one.
func (s *Session) ModelOptions() []model.Option {
	if n := s.Settings().MaxOutputTokens; n != nil && *n > 0 {
		return []model.Option{model.WithMaxTokens(*n)}
	}
	return nil
}

// Notice is the one line that says what untrusted settings files would
// widen and was left out, and how to trust them (see Layered.Notice); ""
// when nothing was.
func (s *Session) Notice() string { return s.Layered.Notice() }

// Ignored are the settings layers that left keys out, not being trusted;
// each one's Ignored names the keys.
func (s *Session) Ignored() []SettingsSource { return s.Layered.Untrusted() }

// Config is the configuration of the session's runtimes.
func (s *Session) Config() harness.Config { return s.Stock.Config }

// Policy is the approval policy a thread started by the session records
// (see Layered.Policy), set by by; given reports whether there is one to
// record: a layer names a rule, or one was left out as untrusted.
func (s *Session) Policy(by string) (p facts.PolicySet, given bool, err error) {
	p, err = s.Layered.Policy(by)
	if err != nil {
		return p, false, badSettings(err)
	}
	return p, len(p.Sources) > 0 || len(p.Ignored) > 0, nil
}

// ModelSpec is the model a thread of the session is to use, as recorded
// (see ParseModelSpec): spec when given (relative to dir), else the
// settings'. Neither is ErrNoModel.
func (s *Session) ModelSpec(spec, dir string) (string, error) {
	if spec == "" {
		spec, dir = s.Settings().Model, s.Place.Root // a file's is absolute already
	}
	if spec == "" {
		for _, l := range s.Layered.Sources {
			if slices.Contains(l.Ignored, "model") {
				return "", &NoModelError{Ignored: l.Path}
			}
		}
		return "", ErrNoModel
	}
	return ParseModelSpec(spec, dir)
}

// RuntimeOption configures a runtime the session builds (Session.Runtime).
type RuntimeOption func(*runtimeOptions)

type runtimeOptions struct {
	model      model.Model
	watch      func(facts.Fact, error)
	tail       *thread.Tail
	observe    []action.WorkspaceOption
	noObserver bool
	modelWait  func(attempt int, wait time.Duration, err error)
}

// WithModel has the runtime take its model turns with m (nil: none; a
// front end that loads a thread's model when a turn is due sets it on
// the runtime's Services then, as package drive does).
func WithModel(m model.Model) RuntimeOption {
	return func(o *runtimeOptions) { o.model = m }
}

// Watching has the runtime tell fn of every fact it appends and every
// error of an append (see thread.Watch): a front end prints them.
func Watching(fn func(facts.Fact, error)) RuntimeOption {
	return func(o *runtimeOptions) { o.watch = fn }
}

// Tailing has the runtime's appends reported through tail
// (thread.Tail.Watch): what it appends, and what other processes append
// to the same threads meanwhile. It is Watching's for a front end that
// shows a thread's log as the store has it.
func Tailing(tail *thread.Tail) RuntimeOption {
	return func(o *runtimeOptions) { o.tail = tail }
}

// WithObserver configures the observer of the runtime's workspace
// further: a change feed, the front end's own output files (see
// Stock.Services).
func WithObserver(opts ...action.WorkspaceOption) RuntimeOption {
	return func(o *runtimeOptions) { o.observe = append(o.observe, opts...) }
}

// WithoutObserver builds a runtime that only reads threads (their views,
// their replays): it watches no workspace, and runs no action.
func WithoutObserver() RuntimeOption {
	return func(o *runtimeOptions) { o.noObserver = true }
}

// WithModelWait has the runtime tell fn when a model turn waits before it
// is tried again, and why (harness.Services.OnModelWait).
func WithModelWait(fn func(attempt int, wait time.Duration, err error)) RuntimeOption {
	return func(o *runtimeOptions) { o.modelWait = fn }
}

// Services are the services of the session's workspace with the model m
// on its store (see Stock.Services: the file contents the observer reads
// are kept in the store's blobs). The caller closes the observer; a
// runtime's services come with Runtime instead.
func (s *Session) Services(m model.Model, more ...action.WorkspaceOption) (harness.Services, error) {
	if s.Store == nil {
		return harness.Services{}, ErrSessionClosed
	}
	return s.Stock.Services(m, BlobsOf(s.Store), more...)
}

// Runtime builds a runtime of the session's stock harness on its store:
// the stock's tools, an observer of its workspace (see the options), the
// session's configuration. free closes its observer; call it once the
// runtime is done with (Release and Close close those not freed). A
// front end that drives threads one at a time over a long-lived session
// (a server's resumes, a worker's drives) builds a runtime for each drive
// and frees it after.
func (s *Session) Runtime(opts ...RuntimeOption) (rt *harness.Runtime, free func(), err error) {
	var o runtimeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if s.Store == nil {
		return nil, nil, ErrSessionClosed
	}
	var svc harness.Services
	if o.noObserver {
		svc = harness.Services{Model: o.model, Models: s.Stock.Models, Tools: s.Stock.Toolbox, Workspace: s.Stock.Place.Root, Blobs: BlobsOf(s.Store), Instructions: s.Stock.Instructions, Agents: s.Stock.Agents, Hooks: s.Stock.Hooks, Worktrees: s.Stock.Worktrees, Ledger: s.Stock.Ledger}
	} else if svc, err = s.Services(o.model, o.observe...); err != nil {
		return nil, nil, err
	}
	free = s.keep(svc.Observer)
	if rt, err = s.newRuntime(svc, s.Stock.Config, o); err != nil {
		free()
		return nil, nil, err
	}
	return rt, free, nil
}

// newRuntime is the one place a session builds a runtime (Runtime, and
// RuntimeIn for a scratch workspace): the services svc and configuration
// cfg on the session's store (watched, when the options say), the
// person's sealer sealing what it records.
func (s *Session) newRuntime(svc harness.Services, cfg harness.Config, o runtimeOptions) (*harness.Runtime, error) {
	svc.OnModelWait = o.modelWait
	store := s.Store
	if o.watch != nil {
		store = thread.Watch(store, o.watch)
	}
	if o.tail != nil {
		store = o.tail.Watch(store)
	}
	rt, err := harness.NewRuntime(store, svc, cfg)
	if err != nil {
		return nil, err
	}
	if s.Stock.Sealer != nil {
		rt.Sealer = sealing{s.Stock.Sealer, s.opts.OnUnsealed}
	}
	if _, direct := s.Store.(*thread.PebbleStore); direct && s.opts.NoInput {
		rt.NoAsk = "this run asks nobody (no terminal, or no input), and no other process shares its store to answer (run harness serve for that)"
	}
	return rt, nil
}

// keep notes an observer to close with the store, and returns the
// function that closes it now.
func (s *Session) keep(obs action.Observer) func() {
	c, ok := obs.(io.Closer)
	if !ok {
		return func() {}
	}
	s.mu.Lock()
	if s.observers == nil {
		s.observers = map[io.Closer]bool{}
	}
	s.observers[c] = true
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		open := s.observers[c]
		delete(s.observers, c)
		s.mu.Unlock()
		if open {
			c.Close()
		}
	}
}

// Release closes the store and the observers of the runtimes built on it,
// keeping the rest of the session (its stock harness, the MCP servers it
// started): a front end that waits on a person a long while lets other
// processes use the store meanwhile, then Reopens it. Releasing a
// released session does nothing.
func (s *Session) Release() error {
	if s.endStops != nil {
		s.endStops()
		s.endStops = nil
	}
	s.mu.Lock()
	obs := s.observers
	s.observers = nil
	s.mu.Unlock()
	for c := range obs {
		c.Close()
	}
	if s.Store == nil {
		return nil
	}
	s.server.Store(nil)
	err := s.Store.Close()
	s.Store = nil
	return err
}

// Reopen opens the store of a released session again, waiting up to wait
// while another process holds it; runtimes built before run on the old
// store, and are built again.
func (s *Session) Reopen(ctx context.Context, wait time.Duration) error {
	if s.Store != nil {
		return nil
	}
	saved := s.opts
	s.opts.Wait, s.opts.Create = wait, false
	err := s.Open(ctx)
	s.opts = saved
	return err
}

// Close closes the store, the observers of the runtimes built on it, and
// the MCP servers the stock started; closing a closed session does
// nothing.
func (s *Session) Close() error {
	err := s.Release()
	if !s.stockClosed && s.Stock != nil {
		s.stockClosed = true
		err = errors.Join(err, s.Stock.Close())
	}
	return err
}

// Entered says the workspace a session left and the one it entered (see
// Session.Enter), each as a thread records it (WorkspaceName).
type Entered struct {
	From, To string
}

// Enter makes the session act in the workspace the thread id records
// (its view's Own.Workspace): a front end that acts on a thread —
// resumes it, answers it, undoes it, shows its diffs — acts there,
// wherever it was opened. It does nothing, and returns false, when that is
// the session's workspace already or the thread records none. Elsewhere
// on this machine the stock harness is made again there (its tools,
// observer, sandbox and MCP servers; the old one's are ended), and Enter
// returns where it moved. A thread of another host is ErrOtherMachine; a
// workspace that is not a directory here ErrNoWorkspace; a store inside
// the session's workspace never acts in another: ErrStoreCameWith.
func (s *Session) Enter(ctx context.Context, id string) (Entered, bool, error) {
	rt, free, err := s.Runtime(WithoutObserver())
	if err != nil {
		return Entered{}, false, err
	}
	defer free()
	v, err := rt.View(ctx, s.Stock.Actor, id)
	if err != nil {
		return Entered{}, false, err
	}
	w, err := v.Own.Workspace()
	if err != nil || w == "" {
		return Entered{}, false, err
	}
	here := WorkspaceName(s.Place.Root)
	if w == here {
		return Entered{}, false, nil
	}
	host, root := SplitWorkspace(w)
	thisHost, _ := os.Hostname()
	switch {
	case host != "" && thisHost != "" && host != thisHost:
		return Entered{}, false, fmt.Errorf("thread %s works in %s, %w (this is %s)", id, w, ErrOtherMachine, here)
	case !filepath.IsAbs(root) || !isDir(root):
		// A relative root would be found from wherever the session was
		// opened: never entered.
		return Entered{}, false, fmt.Errorf("thread %s works in %s, %w (this command is in %s)", id, w, ErrNoWorkspace, here)
	}
	if root == s.Place.Root {
		return Entered{}, false, nil // the same directory, recorded without a host
	}
	if s.Place.StoreInside() {
		return Entered{}, false, fmt.Errorf("thread %s works in %s, but its store is %s, inside this workspace (%s): %w",
			id, w, s.Place.Store, here, ErrStoreCameWith)
	}
	p := s.Place
	p.Root, p.Within = root, ""
	st, err := s.stockOf(p)
	if err != nil {
		return Entered{}, false, fmt.Errorf("thread %s works in %s: %w", id, w, err)
	}
	// The MCP servers of the other workspace are ended: their root was
	// the wrong one.
	if !s.stockClosed {
		s.Stock.Close()
	}
	s.Place, s.Stock, s.stockClosed = p, st, false
	s.resolve()
	return Entered{From: here, To: w}, true, nil
}

// SplitWorkspace splits a workspace as a thread records it (see
// WorkspaceName) into its host ("" when none was recorded) and its root.
func SplitWorkspace(w string) (host, root string) {
	if filepath.IsAbs(w) {
		return "", w
	}
	if h, r, ok := strings.Cut(w, ":"); ok && filepath.IsAbs(r) {
		return h, r
	}
	return "", w
}

// Models returns the loader of the model of a thread's turn, for a front
// end that drives threads it did not start (a worker, a server): the
// model the thread recorded, else fallback; each spec loaded once (see
// LoadModel, with opts), and the loader safe to call from several
// goroutines. A thread that records none, with no fallback, is
// ErrNoModel.
func Models(fallback string, opts ...model.Option) func(recorded string) (model.Model, error) {
	var (
		mu     sync.Mutex // guards models
		models = map[string]model.Model{}
	)
	return func(recorded string) (model.Model, error) {
		use := cmp.Or(recorded, fallback)
		if use == "" {
			return nil, fmt.Errorf("the thread needs a model turn and records none: %w", ErrNoModel)
		}
		mu.Lock()
		defer mu.Unlock()
		if m := models[use]; m != nil {
			return m, nil
		}
		m, err := LoadModel(use, opts...)
		if err != nil {
			return nil, err
		}
		models[use] = m
		return m, nil
	}
}

// RecordStartingPolicy records on th, a thread the session started, the
// policy it starts with (Policy(by)) as its own (policy.set): later
// commands apply it. Nothing is recorded when there is none to record and
// given is false (the command named no rule): the default (ask, no rule)
// is what a thread without one has. A rule that does not parse wraps
// ErrBadSettings.
func (s *Session) RecordStartingPolicy(ctx context.Context, th *harness.Thread, by string, given bool) error {
	pol, ok, err := s.Policy(by)
	if err != nil || !(ok || given) {
		return err
	}
	_, err = drive.SetPolicy(ctx, th, pol)
	return err
}

// AmendPolicy records on the thread th its approval policy with layer
// over it (see Amend), set by by: the policy the thread records, or, for
// a thread that records none, the one the session's settings give (which
// the command line's layer is part of already). It is how a person's
// flags on a later command, or their "always" at a prompt, change a
// thread's policy. A rule that does not parse wraps ErrBadSettings.
func (s *Session) AmendPolicy(ctx context.Context, th *harness.Thread, layer SettingsSource, by string) error {
	cur, _, ok, err := drive.ThreadPolicy(ctx, th)
	if err != nil {
		return err
	}
	if !ok {
		if cur, err = s.Layered.Policy(by); err != nil {
			return badSettings(err)
		}
	}
	next, err := Amend(cur, layer, by)
	if err != nil {
		return badSettings(err)
	}
	_, err = drive.SetPolicy(ctx, th, next)
	return err
}

// Submit starts a thread with prompt and runs nothing (a worker takes it
// up): the prompt is recorded with policy, when given, as the thread's own
// in the same append, so that no worker reads the thread without it. id
// "" takes the next free id (see drive.SubmitNext); an id that is taken is
// harness.ErrThreadExists. It returns the thread's id and the seq of its
// last fact.
func (s *Session) Submit(ctx context.Context, id, prompt string, policy *facts.PolicySet) (string, uint64, error) {
	rt, free, err := s.Runtime(WithoutObserver())
	if err != nil {
		return "", 0, err
	}
	defer free()
	var also []harness.Ingress
	if policy != nil {
		in, err := drive.StartingPolicy(*policy)
		if err != nil {
			return "", 0, err
		}
		also = append(also, in)
	}
	if id != "" {
		p, err := rt.Thread(s.Stock.Actor, id).Submit(ctx, prompt, also...)
		if err != nil {
			return "", 0, err
		}
		return id, p.Seq, nil
	}
	th, err := drive.SubmitNext(ctx, rt, s.Stock.Actor, prompt, nil, also...)
	if err != nil {
		return "", 0, err
	}
	return th.ID(), 1, nil
}

// IndexThread brings the place's search index up to date with the thread
// id (search.Index.UpdateThread): what a command that appended to the
// thread does last, so that the next search finds its facts without
// indexing them first. An index another process has open (a server's, a
// search's) is left alone: the next search brings it up to date.
func (s *Session) IndexThread(ctx context.Context, id string) error {
	if s.Store == nil {
		return nil
	}
	ix, err := s.Place.OpenSearch(ctx, 0)
	if errors.Is(err, search.ErrLocked) {
		return nil
	}
	if err != nil {
		return err
	}
	defer ix.Close()
	_, err = ix.UpdateThread(ctx, s.Store, id)
	return err
}

// AnswerPending posts the reply r to the open request p of th's tree, as
// drive.AnswerPending does. A reply with an always-rule (Reply.Always) has
// the rule added to th's own policy first (AmendPolicy, a person's answer,
// by r.By), so that the rest of the thread is decided by it; the
// approval's reason, when none is given, says so ("always: RULE"). It is
// how every front end posts a person's "always for this thread".
//
// With Reply.Project ("always, for this project") the rule is first kept
// for the workspace in the person's own configuration (Place.
// KeepProjectRule), and the thread's policy records it from that scope
// and file. A rule that cannot be kept there is the error, and nothing
// is posted. A rule comes only with an approval that binds (see
// drive.Reply.Binds): for one that does not, nothing is kept or amended.
func (s *Session) AnswerPending(ctx context.Context, th *harness.Thread, p drive.Pending, r drive.Reply) (harness.Posted, error) {
	if r.Project && r.Always == "" {
		return harness.Posted{}, fmt.Errorf("%w: a rule for the project names its rule (always)", drive.ErrBadReply)
	}
	if r.Always != "" {
		if r.Kind != fold.WaitConfirmation || !r.Approved {
			return harness.Posted{}, fmt.Errorf("%w: an always-rule comes with an approval", drive.ErrBadReply)
		}
		// Nothing is kept, nor the policy amended, for an approval that
		// will be refused: the call is not waiting, or is another.
		if err := r.Binds(p); err != nil {
			return harness.Posted{}, err
		}
		layer := AnswerSource(r.Always)
		if r.Project {
			getenv := s.opts.Getenv
			if getenv == nil {
				getenv = os.Getenv
			}
			kept, err := s.Place.KeepProjectRule(getenv, r.Always, r.By)
			if err != nil {
				return harness.Posted{}, err
			}
			layer = kept
		}
		if err := s.AmendPolicy(ctx, th, layer, r.By); err != nil {
			return harness.Posted{}, err
		}
		if r.Reason == "" {
			r.Reason = "always: " + r.Always
			if r.Project {
				r.Reason = "always, for this project: " + r.Always
			}
		}
		r.Always, r.Project = "", false
	}
	return drive.AnswerPending(ctx, th, p, r)
}

// Inspect is the state of the thread id (drive.Inspect), read through
// the session's runtime as the session's actor folds it: a parent's tree
// with its children's requests.
func (s *Session) Inspect(ctx context.Context, id string) (drive.State, error) {
	rt, _, err := s.Runtime()
	if err != nil {
		return drive.State{}, err
	}
	th, err := rt.Open(ctx, s.Stock.Actor, id)
	if err != nil {
		return drive.State{}, err
	}
	return drive.Inspect(ctx, th)
}
