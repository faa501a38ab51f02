package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Services are what a coding actor's transitions need. They travel in the
// effects' service type and are swapped at the edge (effect.Provide): the
// real model in production, a scripted one in a test.
type Services struct {
	Model model.Model
	// Models loads the model a child of an agent file runs, given the
	// spec its agent file names (as child.spawned records it: see
	// facts.AgentFile.Model); nil loads none, and such a child's turns
	// fail, saying so.
	Models func(spec string) (model.Model, error)
	// Tools are the adapters tool calls run on.
	Tools *Toolbox
	// Observer reads the workspace before and after every action,
	// independently of the tools; nil means nobody looks, and every effect
	// is recorded as "reported".
	Observer action.Observer
	// Workspace is the directory declared checks look in.
	Workspace string
	// Blobs keeps observed contents and listings by digest; nil keeps none.
	Blobs action.Blobs
	// Instructions reads the instruction files (AGENTS.md) given to the
	// model before each turn, and recorded when they change (see
	// InstructionReader); nil reads none.
	Instructions InstructionReader
	// Agents reads the agent files a delegation may name (see
	// AgentReader); nil reads none, and a delegation naming an agent is
	// refused.
	Agents AgentReader
	// Summarize writes the summary a compaction records; nil uses
	// the extractive summary, which calls nothing: each message's role and
	// first line.
	Summarize func(ctx context.Context, messages []facts.Message) (string, error)
	// Tracing receives the spans of transitions; nil is the global
	// OpenTelemetry provider.
	Tracing trace.TracerProvider
	// OnModelWait, when set, is told before a failed model turn is tried
	// again: the attempt that failed (from 1), the wait before the next
	// (a server's Retry-After included), and the failure — model.Reason
	// says it in a few words, and one matching model.ErrStreamCut means
	// that text already streamed is not kept and the turn streams again
	// from its start.
	OnModelWait func(attempt int, wait time.Duration, err error)
	// Hooks runs the commands of the hooks a thread records; nil runs
	// none, and each hook due is recorded as failed (see HookRunner).
	Hooks HookRunner
	// Worktrees makes the git worktrees children work in, when the
	// thread's configuration says they do (Config.Worktrees); nil makes
	// none, and children work in the workspace.
	Worktrees Worktrees
	// Ledger, when set, is shared by every runtime whose threads work in
	// this workspace at once (workers, children that share it): each
	// action's observation then names the changes other threads' actions
	// made (see action.Ledger).
	Ledger *action.Ledger
	// Prepare, when set, makes what the runtime makes in the workspace
	// for an action, before the reading each action begins with (see
	// action.Boundary.Prepare): the stock harness's makes what its
	// commands' sandbox covers (sandbox.Spec.Prepare).
	Prepare func()
	// Rerun, when set, makes the runtime a rerun's: it compares each
	// model turn with the original thread's and serves the original's
	// recorded results for the calls that match (see Rerunner).
	Rerun Rerunner

	// thread is the thread whose transition runs with these services
	// (set by Runtime.run), for the ledger.
	thread string
	// sampling makes the sampler of the action a transition runs (set
	// by Runtime.run; see sample.go).
	sampling func(cfg Config, svc Services) *sampler
}

// Worktrees gives threads git worktrees of their own: Create makes the
// one named name (a child's id; made again, the same one) on the branch
// Branch(name), Finish
// commits what the thread left there to its branch and removes it (keeps
// it when keep is set: the thread failed), and In is the services s
// rooted in the worktree w — its tools, its observer, its workspace — for
// the thread that works there. The repository is untrusted: nothing its
// config names may run.
type Worktrees interface {
	Create(ctx context.Context, name string) (facts.Worktree, error)
	Branch(name string) string
	Finish(ctx context.Context, w facts.Worktree, name string, keep bool) (facts.WorktreeResult, error)
	In(ctx context.Context, s Services, w facts.Worktree) (Services, error)
}

// TracerProvider makes Services an effect.Traced.
func (s Services) TracerProvider() trace.TracerProvider {
	if s.Tracing != nil {
		return s.Tracing
	}
	return otel.GetTracerProvider()
}

// boundary is the effect boundary of these services under cfg's grants.
func (s Services) boundary(cfg Config) *action.Boundary {
	return &action.Boundary{Observer: s.Observer, Granted: cfg.Grants, Root: s.Workspace, Blobs: s.Blobs, Commands: s.Tools.checkCommands(),
		Ledger: s.Ledger, Thread: s.thread, Prepare: s.Prepare}
}

// ToolAdapter is a tool a model can call: an action adapter with the
// schema the model is shown and the capability it needs. A tool may also
// say whether it asks a person first (Confirm() bool; by default writes and
// commands do), declare the check of a call (Check(args)), say where its
// commands may reach (Sandbox() *facts.Sandbox), what a call records of
// the MCP server it goes to (MCPCall(args, offered) *facts.MCPCall), and
// that nobody can observe its effects (Unobserved() bool: a remote server).
type ToolAdapter interface {
	action.Adapter
	Schema() facts.ToolSchema
	Capability() action.Capability
}

type confirmer interface{ Confirm() bool }

type declarer interface {
	Check(args json.RawMessage) (*facts.CheckSpec, error)
}

// Tool is a ToolAdapter made of functions, for tools written inline.
type Tool struct {
	Spec facts.ToolSchema
	// Needs is the capability: action.Read, action.Write or action.Execute.
	Needs action.Capability
	// Ask says whether a call asks a person first; the zero value,
	// action.AskDefault, asks for writes and commands.
	Ask action.Ask
	// Run runs a call with the model's arguments.
	Run func(ctx context.Context, args json.RawMessage) (facts.Report, error)
	// Declare, when set, declares the check of a call.
	Declare func(args json.RawMessage) (*facts.CheckSpec, error)
}

// Name is the tool's name.
func (t Tool) Name() string { return t.Spec.Name }

// Schema is the tool's schema.
func (t Tool) Schema() facts.ToolSchema { return t.Spec }

// Capability is what the tool needs.
func (t Tool) Capability() action.Capability { return t.Needs }

// Confirm reports whether a call asks a person first.
func (t Tool) Confirm() bool { return t.Ask.Asks(t.Needs) }

// Check declares the check of a call.
func (t Tool) Check(args json.RawMessage) (*facts.CheckSpec, error) {
	if t.Declare == nil {
		return nil, nil
	}
	return t.Declare(args)
}

// Execute runs the call.
func (t Tool) Execute(ctx context.Context, req action.Request) (facts.Report, error) {
	return t.Run(ctx, req.Payload)
}

// Toolbox is a set of tools, in the order they are offered to the model.
type Toolbox struct {
	tools []ToolAdapter
}

// NewToolbox returns a toolbox; names must be unique and capabilities known.
func NewToolbox(tools ...ToolAdapter) (*Toolbox, error) {
	seen := map[string]bool{}
	for i, t := range tools {
		name := t.Schema().Name
		switch {
		case name == "" || name != t.Name():
			return nil, fmt.Errorf("toolbox: tool %d: schema name %q and adapter name %q must be the same and not empty", i+1, name, t.Name())
		case seen[name]:
			return nil, fmt.Errorf("toolbox: two tools named %q", name)
		}
		if err := t.Capability().Validate(); err != nil {
			return nil, fmt.Errorf("toolbox: tool %q: %w", name, err)
		}
		var ask action.Ask
		switch tool := t.(type) {
		case Tool:
			ask = tool.Ask
		case *Tool:
			ask = tool.Ask
		}
		if err := ask.Validate(); err != nil {
			return nil, fmt.Errorf("toolbox: tool %q: %w", name, err)
		}
		seen[name] = true
	}
	return &Toolbox{tools: slices.Clone(tools)}, nil
}

// Lookup returns the tool named name.
func (b *Toolbox) Lookup(name string) (ToolAdapter, bool) {
	if b == nil {
		return nil, false
	}
	for _, t := range b.tools {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// Schemas returns the schemas of the tools, in order.
func (b *Toolbox) Schemas() []facts.ToolSchema {
	if b == nil {
		return nil
	}
	out := make([]facts.ToolSchema, len(b.tools))
	for i, t := range b.tools {
		out[i] = t.Schema()
	}
	return out
}

// confirms applies a tool's confirmation policy: its own word, or by
// default, ask for writes and commands.
func confirms(t ToolAdapter) bool {
	if c, ok := t.(confirmer); ok {
		return c.Confirm()
	}
	return action.AskDefault.Asks(t.Capability())
}

// mcpCaller is a tool of an MCP server: it says what the request of a
// call records of it (see facts.MCPCall), given the tool's schema as the
// thread offered it to the model (nil when it was not offered).
type mcpCaller interface {
	MCPCall(args string, offered *facts.ToolSchema) *facts.MCPCall
}

// unobserved is a tool whose effects happen where the runtime cannot look
// (a remote MCP server): the boundary does not observe its calls, so their
// effect is reported, never observed.
type unobserved interface{ Unobserved() bool }

func unobservable(t ToolAdapter) bool {
	u, ok := t.(unobserved)
	return ok && u.Unobserved()
}

// sandboxer is a tool whose calls run commands in a sandbox: it says where
// they may reach (see package sandbox), for the record.
type sandboxer interface{ Sandbox() *facts.Sandbox }

// sandboxOf is where a tool's commands may reach, or nil for a tool that
// runs none.
func sandboxOf(t ToolAdapter) *facts.Sandbox {
	if s, ok := t.(sandboxer); ok {
		return s.Sandbox()
	}
	return nil
}

// checkCommands runs the commands of declared checks: the first tool that
// runs commands in a sandbox and can run a check's (action.CheckCommands,
// as run_command of package tools does); nil when none can, and such a
// check is not decided.
func (b *Toolbox) checkCommands() action.CheckCommands {
	if b == nil {
		return nil
	}
	for _, t := range b.tools {
		if c, ok := t.(action.CheckCommands); ok && sandboxOf(t) != nil {
			return c
		}
	}
	return nil
}

// sandbox is where the toolbox's commands may reach: the first tool's that
// runs commands, for system.configured; nil when none does.
func (b *Toolbox) sandbox() *facts.Sandbox {
	if b == nil {
		return nil
	}
	for _, t := range b.tools {
		if s := sandboxOf(t); s != nil {
			return s
		}
	}
	return nil
}
