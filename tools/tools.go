package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
// as they refuse ".git" (anywhere) and the root's ".harness", which stay
// protected whatever is given: for instance the runtime's store when it
// is kept under another name. A path is protected as written and where
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
	ws      *workspace
	tools   []Tool
	sandbox sandbox.Spec
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
	spec, err := sandboxSpec(ws.real, c.sandbox)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	lim := c.limits.withDefaults()
	ts := []*tool{
		readTool(ws, lim), listTool(ws, lim), writeTool(ws), editTool(ws), commandTool(ws, lim, spec),
	}
	for name := range c.confirm {
		if !slices.ContainsFunc(ts, func(t *tool) bool { return t.name == name }) {
			return nil, fmt.Errorf("tools: WithConfirm names %q, which is not a tool", name)
		}
	}
	s := &Set{ws: ws, sandbox: spec}
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

// Sandbox is the sandbox run_command runs commands in; its Record is what
// system.configured and a command's action.requested record.
func (s *Set) Sandbox() sandbox.Spec { return s.sandbox.Clone() }

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
	// everything about the call itself is in the report.
	run func(ctx context.Context, args json.RawMessage) (facts.Report, error)
	// check declares the call's check; nil declares none.
	check func(args json.RawMessage) (*facts.CheckSpec, error)
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
	return t.run(ctx, req.Payload)
}

// failed is the report of a call that did not do what it was asked.
func failed(name string, err error) facts.Report {
	return facts.Report{Status: facts.StatusFailed, Error: name + ": " + err.Error()}
}
