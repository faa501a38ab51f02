package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// The names of the built-in tools, as the model calls them.
const (
	ReadFile   = "read_file"
	ListFiles  = "list_files"
	WriteFile  = "write_file"
	EditFile   = "edit_file"
	RunCommand = "run_command"
)

// Errors a Check may return, tested with errors.Is. Execute reports the
// same conditions as failed reports whose Error says the same thing.
var (
	// ErrInvalidArgs: the arguments are not a JSON object of the tool's
	// schema (malformed, unknown or missing fields, wrong types or ranges).
	ErrInvalidArgs = errors.New("invalid arguments")
	// ErrOutsideWorkspace: a path leaves the workspace — by "..", by being
	// absolute outside the root, or through a symlink.
	ErrOutsideWorkspace = errors.New("outside the workspace")
	// ErrNoMatch: edit_file's old text does not occur in the file.
	ErrNoMatch = errors.New("old text not found")
	// ErrAmbiguousMatch: edit_file's old text occurs more than once.
	ErrAmbiguousMatch = errors.New("old text is not unique")
	// ErrProtected: write_file or edit_file was given a path at or under
	// an entry the runtime keeps — a .git or .harness at any depth, or a
	// WithProtected path — as written or where its symlinks lead; or
	// read_file one at or under what the sandbox hides from commands (a
	// .harness at any depth, the store under any name, the user's
	// settings when the workspace holds them).
	ErrProtected = errors.New("protected path")
	// ErrUnknownTool: a call names no tool of the Set.
	ErrUnknownTool = errors.New("no such tool")
	// ErrTooLarge: write_file's content, or the file edit_file would
	// leave, is larger than Limits.FileBytes; nothing is written, and
	// nothing is cut.
	ErrTooLarge = errors.New("content too large")
)

// Tool is one built-in tool: an [action.Adapter] that also describes itself
// to the model and to the runtime.
type Tool interface {
	action.Adapter
	// Schema is the name, description and JSON Schema of the arguments
	// offered to the model.
	Schema() facts.ToolSchema
	// Capability is what a thread must have been granted to run the tool:
	// read for read_file and list_files, write for write_file and
	// edit_file, execute for run_command.
	Capability() action.Capability
	// Confirm reports whether a person approves a call before it runs. By
	// default the write and execute tools ask and the read tools do not;
	// see [WithConfirm].
	Confirm() bool
	// Check returns the check a call with args declares, to be recorded
	// with the request, or nil when the tool declares none. It returns an
	// error when no check can be declared for args — they are invalid, or
	// (edit_file) the edit does not apply to the file as it is now;
	// Execute with the same args would report failed for the same reason.
	Check(args json.RawMessage) (*facts.CheckSpec, error)
}

// Limits bound what the tools read, list, print and wait for. A zero field
// takes its default.
type Limits struct {
	// ReadBytes is the most read_file returns in one call, and the default
	// when a call names no max_bytes (default 128 KiB).
	ReadBytes int
	// FileBytes is the most of one file read_file reads (it counts the
	// lines of that much and says when it stopped), the largest file
	// edit_file edits or leaves, and the largest content write_file
	// writes (default 32 MiB): a regular file can be as large as the
	// disk. A call past it fails, naming the limit and the size; nothing
	// is ever cut to fit.
	FileBytes int
	// ListEntries is the most paths list_files returns (default 1000); it
	// still counts every match.
	ListEntries int
	// CommandTimeout is run_command's timeout when a call names none
	// (default 2 minutes); MaxCommandTimeout is the most a call may ask
	// for (default 10 minutes).
	CommandTimeout    time.Duration
	MaxCommandTimeout time.Duration
	// OutputBytes caps each of run_command's stdout and stderr (default
	// 32 KiB): the first and last halves are kept and the report says how
	// many bytes were cut between them.
	OutputBytes int
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ReadBytes, 128<<10)
	def(&l.FileBytes, 32<<20)
	def(&l.ListEntries, 1000)
	def(&l.OutputBytes, 32<<10)
	if l.CommandTimeout <= 0 {
		l.CommandTimeout = 2 * time.Minute
	}
	if l.MaxCommandTimeout <= 0 {
		l.MaxCommandTimeout = 10 * time.Minute
	}
	l.CommandTimeout = min(l.CommandTimeout, l.MaxCommandTimeout)
	return l
}

// Option configures [New].
type Option func(*config)

type config struct {
	limits    Limits
	confirm   map[string]bool
	all       *bool
	protected []string
	sandbox   *sandbox.Spec
	// lenient: a spec that does not validate fails run_command's calls,
	// not New (WithLenientSandbox).
	lenient bool
}

// WithLenientSandbox makes a sandbox spec that does not validate (a
// workspace whose .git leads into a writable root, say) not New's error
// but every run_command call's, and SandboxErr's: for a Set whose
// commands never run — a session that only reads the record — so that a
// workspace the sandbox refuses can still be read about.
func WithLenientSandbox() Option {
	return func(c *config) { c.lenient = true }
}

// WithSandbox sets the sandbox run_command runs every command in (see
// package sandbox). Its Workspace may be left empty for the tools' root;
// otherwise it must be that root. Without this option a command runs in
// sandbox.Default(root, ""): workspace-write, no network, the root's
// .harness hidden. New returns an error for a spec that does not
// validate; a spec this system cannot run (no Landlock, not Linux) makes
// each run_command call fail with an error that says what is missing —
// a command never runs unsandboxed unless the mode is sandbox.Off.
func WithSandbox(spec sandbox.Spec) Option {
	return func(c *config) { c.sandbox = &spec }
}

// WithProtected names more paths — relative to the workspace root, or
// absolute — that write_file and edit_file refuse to write at or under,
// as they refuse ".git" and ".harness" (anywhere), which stay protected
// whatever is given: for instance the runtime's store when it is kept
// under another name. A path is protected as written and where
// its symlinks lead, and a write is refused when the path it names, or
// where that path's symlinks lead, is inside one. An absolute path
// outside the workspace is ignored, since no file tool reaches it; New
// returns an error for an empty path, a relative one that climbs out of
// the workspace, or the root itself.
func WithProtected(paths ...string) Option {
	return func(c *config) { c.protected = append(c.protected, paths...) }
}

// WithLimits sets the tools' limits; zero fields keep their defaults.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = l }
}

// WithConfirm sets whether the named tools (all tools, when no name is
// given) ask a person before they run, overriding the defaults.
func WithConfirm(ask bool, names ...string) Option {
	return func(c *config) {
		if len(names) == 0 {
			c.all = &ask
			clear(c.confirm)
			return
		}
		for _, n := range names {
			c.confirm[n] = ask
		}
	}
}

// Set is the built-in tools of one workspace, in the order they are offered
// to the model: read_file, list_files, write_file, edit_file, run_command.
type Set struct {
	ws         *workspace
	tools      []Tool
	sandbox    sandbox.Spec
	sandboxErr error // why the spec does not validate (WithLenientSandbox)
	limits     Limits
}

// New returns the tools for the workspace directory root. Every path a tool
// is given is resolved inside root (see the package documentation); root
// must be an existing directory. It returns an error for a missing root or
// an option naming a tool that does not exist.
func New(root string, opts ...Option) (*Set, error) {
	c := config{confirm: map[string]bool{}}
	for _, o := range opts {
		o(&c)
	}
	ws, err := newWorkspace(root)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	if err := ws.protect(c.protected); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	spec, specErr := sandboxSpec(ws.real, c.sandbox)
	if specErr != nil {
		if !c.lenient || c.sandbox == nil {
			return nil, fmt.Errorf("tools: %w", specErr)
		}
		spec = c.sandbox.Clone() // what it hides, read_file hides too
		spec.Workspace = ws.real
	}
	ws.hide(spec)
	lim := c.limits.withDefaults()
	command := commandTool(ws, lim, spec)
	if specErr != nil {
		command.run = func(context.Context, json.RawMessage, *facts.Sandbox) (facts.Report, error) {
			return failed(RunCommand, fmt.Errorf("no command runs: %w", specErr)), nil
		}
	}
	ts := []*tool{
		readTool(ws, lim), listTool(ws, lim), writeTool(ws, lim), editTool(ws, lim), command,
	}
	for name := range c.confirm {
		if !slices.ContainsFunc(ts, func(t *tool) bool { return t.name == name }) {
			return nil, fmt.Errorf("tools: WithConfirm names %q, which is not a tool", name)
		}
	}
	s := &Set{ws: ws, sandbox: spec, sandboxErr: specErr, limits: lim}
	for _, t := range ts {
		if c.all != nil {
			t.confirm = *c.all
		}
		if ask, ok := c.confirm[t.name]; ok {
			t.confirm = ask
		}
		s.tools = append(s.tools, t)
	}
	return s, nil
}

// Root is the workspace directory, absolute.
func (s *Set) Root() string { return s.ws.dir }

// Limits are the limits the tools work under, defaults filled in.
func (s *Set) Limits() Limits { return s.limits }

// Sandbox is the sandbox run_command runs commands in; its Record is what
// system.configured and a command's action.requested record.
func (s *Set) Sandbox() sandbox.Spec { return s.sandbox.Clone() }

// SandboxErr is why the sandbox spec does not validate, for a Set made
// WithLenientSandbox (every run_command call fails with it); nil when it
// does.
func (s *Set) SandboxErr() error { return s.sandboxErr }

// Tools returns the tools, in the order they are offered to the model.
func (s *Set) Tools() []Tool { return slices.Clone(s.tools) }

// Lookup returns the tool named name.
func (s *Set) Lookup(name string) (Tool, bool) {
	i := slices.IndexFunc(s.tools, func(t Tool) bool { return t.Name() == name })
	if i < 0 {
		return nil, false
	}
	return s.tools[i], true
}

// Resolve returns where path leads inside the workspace: the clean,
// slash-separated path relative to the root ("." for the root itself)
// that the file tools would read or write once every symlink on the way
// is followed — its parent directories' and its own — as os.Root follows
// them. A path that does not exist yet resolves as far as it exists, and
// the rest is taken as written (the part a write would create): with
// gh -> .github, Resolve("gh/workflows/new.yml") is
// ".github/workflows/new.yml". The path is given as a tool's arguments
// give it: relative to the root, or absolute under it. Resolve changes
// nothing. It returns an error wrapping ErrOutsideWorkspace for a path
// that leaves the workspace (by "..", by being absolute outside the root,
// or through a symlink), ErrInvalidArgs for one that is not a path, and
// an error for a path it cannot follow (a link loop, an unreadable
// directory).
//
// For policy authors: a rule about paths ("write_file:.github/*") must be
// matched against the resolved path, or a link in the workspace walks
// around it — with docs -> .github, "allow write_file:docs/*" would
// approve a write to .github/workflows/ci.yml. Match the resolved path
// (and, to deny, the path as written as well: a rule that denies either
// denies), and when Resolve returns an error, approve nothing by rule:
// let the call be refused, or ask a person. Resolve tells where a path
// leads now; the write resolves it again when it runs, once, and follows
// what it finds then (see the package documentation) — the sandbox keeps
// commands from re-pointing links in between.
func (s *Set) Resolve(path string) (string, error) {
	rel, err := s.ws.rel(path)
	if err != nil {
		return "", err
	}
	real, err := s.ws.resolve(rel)
	if err != nil {
		return "", err
	}
	return real, nil
}

// Precheck returns the refusal a call of the named tool with args would
// surely get, found without running it and without changing anything, so
// that a runtime can refuse such a call without asking a person about it:
//
//   - the tool does not exist (ErrUnknownTool);
//   - the arguments are not one JSON object of the tool's schema —
//     malformed, a key named twice at any depth (see [facts.CheckJSON]),
//     unknown or missing fields, wrong types or ranges (ErrInvalidArgs);
//   - a path leaves the workspace, as written or through a symlink as the
//     workspace is now (ErrOutsideWorkspace);
//   - write_file or edit_file names a path at or under a .git or .harness
//     (at any depth) or a WithProtected path, as written or where it
//     leads now (ErrProtected); read_file one at or under a .harness or
//     another path the sandbox hides from commands (ErrProtected);
//   - write_file's content is larger than Limits.FileBytes (ErrTooLarge).
//
// It uses the tool's own code for each, so it refuses nothing the tool
// would not: any error it returns is the error (prefixed with the tool's
// name) that Execute's failed report or Check would give for the same
// call now. What depends on more than the path — whether a file exists,
// whether an edit's old text occurs — is not prechecked: a nil answer
// does not promise success.
func (s *Set) Precheck(tool string, args []byte) error {
	t, ok := s.lookup(tool)
	if !ok {
		return fmt.Errorf("%w: %q (the tools are %s)", ErrUnknownTool, tool, strings.Join(s.names(), ", "))
	}
	return t.Precheck(args)
}

// Precheck returns the refusal a call of the tool with args would surely
// get (see Set.Precheck). A command that cannot run in its sandbox here
// (the system lacks what the mode needs) is refused too.
func (t *tool) Precheck(args []byte) error {
	if t.sandbox != nil {
		if err := t.sandbox.Check(); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	var err error
	if t.precheck != nil {
		err = t.precheck(args)
	} else {
		known, required := schemaFields(t.schema)
		err = checkObject(args, known, required)
	}
	if err == nil || !errors.Is(err, ErrInvalidArgs) && !errors.Is(err, ErrOutsideWorkspace) && !errors.Is(err, ErrProtected) && !errors.Is(err, ErrTooLarge) {
		return nil
	}
	return fmt.Errorf("%s: %w", t.name, err)
}

func (s *Set) lookup(name string) (*tool, bool) {
	for _, t := range s.tools {
		if t, ok := t.(*tool); ok && t.name == name {
			return t, true
		}
	}
	return nil, false
}

func (s *Set) names() []string {
	var out []string
	for _, t := range s.tools {
		out = append(out, t.Name())
	}
	return out
}

// Schemas returns the tools' schemas, in order.
func (s *Set) Schemas() []facts.ToolSchema {
	out := make([]facts.ToolSchema, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Schema()
	}
	return out
}

// tool is every built-in tool: its description and two functions.
type tool struct {
	name        string
	description string
	schema      json.RawMessage
	capability  action.Capability
	confirm     bool
	// run carries out a call. It returns an error only when ctx is done;
	// everything about the call itself is in the report. recorded is the
	// sandbox the request recorded, for a tool that runs commands (nil
	// where none was).
	run func(ctx context.Context, args json.RawMessage, recorded *facts.Sandbox) (facts.Report, error)
	// check declares the call's check; nil declares none.
	check func(args json.RawMessage) (*facts.CheckSpec, error)
	// precheck returns what is wrong with a call before it runs, changing
	// nothing (see Set.Precheck); nil checks the arguments against the
	// schema's properties only.
	precheck func(args json.RawMessage) error
	// sandbox, for a tool that runs commands, is where they may reach.
	sandbox *sandbox.Spec
	// runCheck, for a tool that runs commands, runs a declared check's
	// command (see RunCheck).
	runCheck func(ctx context.Context, argv []string, recorded *facts.Sandbox) (facts.Report, *facts.Sandbox, error)
}

// RunCheck runs the command of a declared check (command_succeeds; see
// action.CheckCommands) as run_command runs a command: in the sandbox the
// action's request recorded (nil: the tools' own), but with the workspace
// read-only — a check looks, and what it wrote would be in no
// observation — and with run_command's default timeout. Only run_command
// runs checks; any other tool refuses.
func (t *tool) RunCheck(ctx context.Context, argv []string, recorded *facts.Sandbox) (facts.Report, *facts.Sandbox, error) {
	if t.runCheck == nil {
		return facts.Report{}, nil, fmt.Errorf("%s runs no commands: %w", t.name, action.ErrNoCheckCommands)
	}
	return t.runCheck(ctx, argv, recorded)
}

// RunCheck runs the command of a declared check in the sandbox of the
// tools' commands, as run_command's RunCheck does: the Set is the
// action.CheckCommands of a boundary over these tools.
func (s *Set) RunCheck(ctx context.Context, argv []string, recorded *facts.Sandbox) (facts.Report, *facts.Sandbox, error) {
	t, ok := s.lookup(RunCommand)
	if !ok {
		return facts.Report{}, nil, action.ErrNoCheckCommands
	}
	return t.RunCheck(ctx, argv, recorded)
}

// Sandbox is the record of where the tool's commands may reach, for the
// action.requested of each call (see package sandbox); nil for a tool
// that runs no command.
func (t *tool) Sandbox() *facts.Sandbox {
	if t.sandbox == nil {
		return nil
	}
	r := t.sandbox.Record()
	return &r
}

// ReadOnlySandbox is the record of the tool's sandbox with the workspace
// read-only, for the requests of a thread in plan mode: a command then
// runs read-only whatever the tools' own mode. nil for a tool that runs no
// command, and for commands that run unsandboxed (mode off): they cannot
// be made read-only.
func (t *tool) ReadOnlySandbox() *facts.Sandbox {
	if t.sandbox == nil || t.sandbox.Mode == sandbox.Off {
		return nil
	}
	spec := t.sandbox.Clone()
	spec.Mode = sandbox.ReadOnly
	r := spec.Record()
	return &r
}

func (t *tool) Name() string                  { return t.name }
func (t *tool) Capability() action.Capability { return t.capability }
func (t *tool) Confirm() bool                 { return t.confirm }

func (t *tool) Schema() facts.ToolSchema {
	return facts.ToolSchema{Name: t.name, Description: t.description, Schema: facts.RawJSON(slices.Clone(t.schema))}
}

// Check returns the call's declared check; see [Tool].
func (t *tool) Check(args json.RawMessage) (*facts.CheckSpec, error) {
	if t.check == nil {
		return nil, nil
	}
	spec, err := t.check(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	return spec, nil
}

// Execute runs the call in req.Payload. Whatever is wrong with the call —
// its arguments, its paths, the file it edits, the command's exit — is a
// failed report whose Error says what; the returned error is reserved for
// a call that could not be carried out at all: the context was done (before
// or while it ran) or the workspace directory cannot be opened. A report
// returned with an error still says what is known.
func (t *tool) Execute(ctx context.Context, req action.Request) (facts.Report, error) {
	if err := ctx.Err(); err != nil {
		return facts.Report{Status: facts.StatusFailed, Error: t.name + ": not started: " + err.Error()},
			fmt.Errorf("%s: %w", t.name, err)
	}
	return t.run(liveFor(ctx, req.ActionID), req.Payload, req.Sandbox)
}

// failed is the report of a call that did not do what it was asked.
func failed(name string, err error) facts.Report {
	return facts.Report{Status: facts.StatusFailed, Error: name + ": " + err.Error()}
}
