package harness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
)

// delegateTool is the name of the built-in tool through which a model
// delegates a task to a child thread (see Delegate).
const delegateTool = "delegate"

// delegateSchema is what the model is told of the delegate tool.
var delegateSchema = facts.ToolSchema{
	Name: delegateTool,
	Description: "Delegate a task to a child agent. It works in a thread of its own, with the tools you name " +
		"(by default all of yours but this one; name delegate too to let it delegate in turn) and at most the budget " +
		"you give it (never more than you have left). Its writes and commands ask for confirmation as yours do. " +
		"You get its outcome and its last word when it ends; several delegations in one turn run at once.",
	Schema: facts.RawJSON(`{"type":"object","properties":{` +
		`"task":{"type":"string","description":"what the child is to do, on its own: it sees nothing else"},` +
		`"agent":{"type":"string","description":"an agent (a file of instructions and bounds) the child is to be; it has at most the agent's tools and turns"},` +
		`"tools":{"type":"array","items":{"type":"string"},"description":"the tools it may use: some of yours"},` +
		`"max_turns":{"type":"integer","minimum":0,"description":"its model turns at most"},` +
		`"max_tokens":{"type":"integer","minimum":0,"description":"its tokens at most"}},` +
		`"required":["task"],"additionalProperties":false}`),
}

// Child is what a delegation gives the child thread it spawned, for the
// function that composes the child's actor (see Delegate): the child's id,
// its task, the part of the parent's configuration it may use — the
// parent's tools that the delegation named, the parent's grants, a budget
// no larger than the parent had left — and the record of its spawn.
type Child struct {
	// ID is the child thread's id, derived from the parent's (ChildID).
	ID string
	// Parent is the parent thread's id.
	Parent string
	// Task is what the child is to do: its thread's first message.
	Task string
	// Config is the parent's configuration with the child's budget
	// (MaxTurns, MaxTokens). Compose the child's actor with it (or with
	// something narrower: a grant fewer, a smaller budget, another
	// system prompt).
	Config Config
	// Tools are the parent's tools the delegation named: the child's
	// tools. Compose the child's actor with exactly this toolbox: its
	// calls run on it, whatever else an actor offers.
	Tools *Toolbox
	// Delegate is true when the delegation named the delegate tool: the
	// child may delegate in turn (compose it with a Delegate part).
	Delegate bool
	// Spawn is the child's first fact: the link to its parent.
	Spawn facts.ThreadSpawned
}

// Actor is the stock composition of a child: CodingActor of the child's
// configuration and tools, with a Delegate part of its own when the child
// may delegate.
func (c Child) Actor() (Actor, error) {
	parts := []Part{System(), Tools(c.Tools), Budget(), Compact(), Infer(Scheduler())}
	if c.Delegate {
		parts = append(parts, Delegate(nil))
	}
	return Compose(c.Config, parts...)
}

// DelegatingActor is CodingActor with a Delegate part that composes each
// child the stock way (Child.Actor): the stock harness's actor.
func DelegatingActor(cfg Config, tools *Toolbox) (Actor, error) {
	return Compose(cfg, System(), Tools(tools), Budget(), Compact(), Infer(Scheduler()), Delegate(nil))
}

// Delegate gives the actor's model the delegate tool: a call spawns a
// child thread for a task, the calling thread waits on it as it waits for
// a person (its view enables nothing until the child's outcome is
// posted), and a Resume of the parent drives the children it waits on.
// compose makes a child's actor from what the delegation gives it (see
// Child); nil composes Child.Actor. The actor compose returns must be
// made by Compose with the child's toolbox, and be no wider than the
// child's configuration: the same grants or fewer, a budget no larger
// (and a Budget part when the child has a budget). A Delegate part adds
// no component of its own; the scheduler reads delegations as calls.
func Delegate(compose func(c Child) (Actor, error)) Part { return delegatePart{compose} }

type delegatePart struct {
	compose func(Child) (Actor, error)
}

func (p delegatePart) add(a *assembly, _ string) {
	compose := p.compose
	if compose == nil {
		compose = Child.Actor
	}
	a.delegate = &delegation{compose: compose}
}

// delegation is what the Delegate part gives an assembly.
type delegation struct {
	compose func(Child) (Actor, error)
}

// actorSpec is what Compose made an actor of.
type actorSpec struct {
	cfg      Config
	tools    *Toolbox
	budgeted bool
	delegate *delegation
}

// check refuses an assembly whose parts cannot work together.
func (a *assembly) check() error {
	if a.delegate != nil {
		if _, ok := a.toolbox.Lookup(delegateTool); ok {
			return fmt.Errorf("compose: a tool is named %q, the name of the delegation tool", delegateTool)
		}
	}
	return nil
}

// schemas are the tools the model is told of: the toolbox's, and the
// delegate tool when the actor delegates.
func (a *assembly) schemas() []facts.ToolSchema {
	s := a.toolbox.Schemas()
	if a.delegate != nil {
		s = append(s, delegateSchema)
	}
	return s
}

// calls is the scheduler's Env.Delegate: nil without a delegation.
func (d *delegation) calls() func(facts.ToolCall) bool {
	if d == nil {
		return nil
	}
	return func(c facts.ToolCall) bool { return c.Name == delegateTool }
}

// spawner is the scheduler's Env.Spawn: nil without a delegation.
func (d *delegation) spawner(a *assembly, k *kit) func(scheduler.SpawnRequest) effect.Effect[Services, facts.ChildSpawned] {
	if d == nil {
		return nil
	}
	return func(req scheduler.SpawnRequest) effect.Effect[Services, facts.ChildSpawned] {
		var used BudgetView
		if k.budget != nil {
			used = k.budget.View()
		}
		name := agentOf(req.Call.Args)
		if (name == "" || !facts.ValidAgentName(name)) && !inWorktree(req) {
			return effect.Succeed[Services](decideSpawn(a.cfg, used, req, nil, a.toolbox))
		}
		// The agent file is read by the runtime, once, and the child's
		// worktree made once: what it read and made is recorded on
		// child.spawned, which a replay reads instead.
		return effect.FromAsync(func(ctx context.Context, s Services) (facts.ChildSpawned, error) {
			var ag *Agent
			if name != "" && facts.ValidAgentName(name) {
				read, err := readAgent(ctx, s.Agents, name)
				if cerr := ctx.Err(); cerr != nil {
					return facts.ChildSpawned{}, cerr // interrupted: nothing is recorded
				}
				if err != nil {
					return facts.ChildSpawned{CallID: req.Ref, Refused: err.Error()}, nil
				}
				ag = &read
			}
			p := decideSpawn(a.cfg, used, req, ag, a.toolbox)
			if p.Refused != "" || !inWorktree(req) || s.Worktrees == nil {
				return p, nil
			}
			w, err := s.Worktrees.Create(ctx, p.Child)
			if cerr := ctx.Err(); cerr != nil {
				return facts.ChildSpawned{}, cerr
			}
			if err == nil {
				p.Worktree = &w
			} else {
				// No worktree could be made: the child works in the
				// workspace, and the record says why.
				p.WorktreeError = err.Error()
			}
			return p, nil
		})
	}
}

// inWorktree reports whether the child of req works in a worktree of its
// own, as the parent's log records its configuration: always, or when
// delegated in parallel (a log that records no mode shares the
// workspace).
func inWorktree(req scheduler.SpawnRequest) bool {
	switch req.System.Worktrees {
	case facts.WorktreesAlways:
		return true
	case facts.WorktreesParallel:
		return req.Parallel
	}
	return false
}

// worktrees is the mode system.configured records: the configured one
// for an actor that delegates, none for one that does not.
func (a *assembly) worktrees() string {
	if a.delegate == nil {
		return ""
	}
	if a.cfg.Worktrees == "" {
		return facts.WorktreesParallel
	}
	return a.cfg.Worktrees
}

// agentOf is the agent a delegate call's arguments name, "" for none (or
// arguments decideSpawn refuses anyway).
func agentOf(args string) string {
	var a struct {
		Agent string `json:"agent"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return ""
	}
	return a.Agent
}

// readAgent reads the agent name through r, saying in the error what the
// model is to be told.
func readAgent(ctx context.Context, r AgentReader, name string) (Agent, error) {
	if r == nil {
		return Agent{}, fmt.Errorf("no agent %q: this harness reads no agent files", name)
	}
	ag, err := r.ReadAgent(ctx, name)
	if errors.Is(err, ErrUnknownAgent) {
		names, lerr := r.AgentNames(ctx)
		switch {
		case lerr != nil:
			return Agent{}, fmt.Errorf("no agent %q (and the agents cannot be listed: %v)", name, lerr)
		case len(names) == 0:
			return Agent{}, fmt.Errorf("no agent %q: there are no agent files", name)
		}
		return Agent{}, fmt.Errorf("no agent %q: the agents are %s", name, strings.Join(names, ", "))
	}
	if err != nil {
		return Agent{}, fmt.Errorf("agent %q cannot be used: %w", name, err)
	}
	return ag, nil
}

// delegateArgs are the delegate tool's arguments.
type delegateArgs struct {
	Task      string   `json:"task"`
	Tools     []string `json:"tools"`
	MaxTurns  *int     `json:"max_turns"`
	MaxTokens *int64   `json:"max_tokens"`
	Agent     string   `json:"agent"`
}

// decideSpawn decides a delegation's child from the parent's log alone:
// the call's arguments, the tools system.configured recorded, what the
// budget counted (used), and the agent file the call named as the runtime
// read it (ag, nil for none). A delegation that cannot be is refused,
// saying why. tb is the parent's toolbox: a read-only agent's child is
// given only the tools of it plan mode offers, and the record lists
// those.
func decideSpawn(cfg Config, used BudgetView, req scheduler.SpawnRequest, ag *Agent, tb *Toolbox) facts.ChildSpawned {
	p := facts.ChildSpawned{CallID: req.Ref}
	refuse := func(format string, args ...any) facts.ChildSpawned {
		p.Refused = fmt.Sprintf(format, args...)
		p.Child, p.Task, p.Tools, p.MaxTurns, p.MaxTokens, p.Agent = "", "", nil, 0, 0, nil
		return p
	}
	if err := facts.CheckJSON([]byte(req.Call.Args)); err != nil {
		return refuse("the arguments of %s are refused: %v", delegateTool, err)
	}
	var args delegateArgs
	dec := json.NewDecoder(bytes.NewReader([]byte(req.Call.Args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return refuse("the arguments of %s are refused: %v (want {\"task\": TEXT, \"agent\": NAME, \"tools\": [NAME…], \"max_turns\": N, \"max_tokens\": N})", delegateTool, err)
	}
	switch {
	case args.Agent != "" && !facts.ValidAgentName(args.Agent):
		return refuse("agent %q: a name is 1 to 64 of a-z, 0-9, '-' and '_'", args.Agent)
	case args.Agent != "" && (ag == nil || ag.Name != args.Agent):
		return refuse("agent %q was not read", args.Agent)
	case args.Agent == "":
		ag = nil
	}
	if strings.TrimSpace(args.Task) == "" {
		return refuse("no task: a delegation names what the child is to do")
	}
	var offered []string // the parent's tools, as its log records them
	for _, t := range req.System.Tools {
		offered = append(offered, t.Name)
	}
	if !slices.Contains(offered, delegateTool) {
		return refuse("this thread was not offered the %s tool", delegateTool)
	}
	p.Task = args.Task
	switch {
	case args.Tools == nil && ag != nil && ag.Tools != nil:
		// The agent's tools that the parent has: a file naming a tool
		// the parent lacks does not give it.
		for _, t := range ag.Tools {
			if slices.Contains(offered, t) && !slices.Contains(p.Tools, t) {
				p.Tools = append(p.Tools, t)
			}
		}
	case args.Tools == nil:
		for _, t := range offered {
			if t != delegateTool {
				p.Tools = append(p.Tools, t)
			}
		}
	default:
		seen := map[string]bool{}
		for _, t := range args.Tools {
			switch {
			case !slices.Contains(offered, t):
				return refuse("tool %q is not one of this thread's (%s): a child has some of its parent's tools, no others", t, strings.Join(offered, ", "))
			case ag != nil && ag.Tools != nil && !slices.Contains(ag.Tools, t):
				return refuse("tool %q is not one of agent %s's tools (%s): a child of an agent has some of the agent's tools, no others", t, ag.Name, strings.Join(ag.Tools, ", "))
			case seen[t]:
				return refuse("tool %q is named twice", t)
			}
			seen[t] = true
			p.Tools = append(p.Tools, t)
		}
	}
	if ag != nil && ag.Sandbox == facts.SandboxReadOnly && tb != nil {
		// A read-only agent's child has the tools plan mode offers (see
		// planRefusal): asked for by name, another is refused; left to
		// the default, the others are not given.
		if args.Tools != nil {
			for _, t := range p.Tools {
				if planRefusal(tb, t) != "" {
					return refuse("tool %q is not for agent %s, which only reads (sandbox: read-only): its child has the tools that read, and commands run read-only", t, ag.Name)
				}
			}
		}
		p.Tools = slices.DeleteFunc(p.Tools, func(t string) bool { return planRefusal(tb, t) != "" })
	}
	// The budget: what was asked, never more than the agent allows or
	// the parent has left.
	turns, tokens := 0, int64(0)
	if args.MaxTurns != nil {
		turns = *args.MaxTurns
	}
	if args.MaxTokens != nil {
		tokens = *args.MaxTokens
	}
	if turns < 0 || tokens < 0 {
		return refuse("a budget is a number ≥ 0 (max_turns %d, max_tokens %d)", turns, tokens)
	}
	if ag != nil && ag.MaxTurns > 0 && (turns == 0 || turns > ag.MaxTurns) {
		turns = ag.MaxTurns
	}
	// The parent's bound in turns: its budget's (recorded, with the
	// raises it folded), else the configuration's.
	maxTurns := cfg.MaxTurns
	if used.MaxTurns > 0 {
		maxTurns = used.MaxTurns
	}
	if maxTurns > 0 {
		left := maxTurns - used.Turns
		if left <= 0 {
			return refuse("no model turns are left to give a child (%d used of %d)", used.Turns, maxTurns)
		}
		if turns == 0 || turns > left {
			turns = left
		}
	}
	if cfg.MaxTokens > 0 {
		left := cfg.MaxTokens - used.Tokens
		if left <= 0 {
			return refuse("no tokens are left to give a child (%d used of %d)", used.Tokens, cfg.MaxTokens)
		}
		if tokens == 0 || tokens > left {
			tokens = left
		}
	}
	p.MaxTurns, p.MaxTokens = turns, tokens
	if ag != nil {
		p.Agent = &facts.AgentFile{Name: ag.Name, Scope: ag.Scope, Path: ag.Path, Digest: ag.Digest, Instructions: ag.Instructions, Sandbox: ag.Sandbox}
		// The agent's model, when it is not the parent's: only a file
		// the person vouches for may choose another (another provider,
		// its credentials, its prices).
		if ag.Model != "" && ag.Model != req.System.Model {
			if !ag.ModelTrusted {
				return refuse("agent %s names model %s, and a workspace file may choose a model other than its parent's (%s) only once the person trusts its content: harness trust %s",
					ag.Name, ag.Model, cmp.Or(req.System.Model, "none recorded"), ag.Path)
			}
			p.Agent.Model = ag.Model
		}
	}
	p.Child = thread.ChildID(req.Thread, req.Ref)
	return p
}

// childOf composes the actor of the child a spawn record names, from the
// parent's actor, and checks it is no wider than the parent allows. It
// returns the actor and the child's toolbox (its services' tools).
func childOf(parent Actor, spawn facts.ThreadSpawned, id string, rooted *Toolbox) (Actor, *Toolbox, error) {
	ps := parent.spec
	if ps == nil || ps.delegate == nil {
		return Actor{}, nil, fmt.Errorf("thread %s is a child of %s, whose actor does not delegate (compose it with a Delegate part)", id, spawn.Parent)
	}
	// The output schema is the answer the person asked of the root; a
	// child answers its parent, in words.
	cfg := ps.cfg
	cfg.OutputSchema = nil
	c := Child{ID: id, Parent: spawn.Parent, Task: spawn.Task, Config: cfg, Spawn: spawn}
	c.Config.MaxTurns, c.Config.MaxTokens = spawn.MaxTurns, spawn.MaxTokens
	if spawn.Agent != nil && spawn.Agent.Instructions != "" {
		c.Config.SystemPrompt = agentPrompt(c.Config.SystemPrompt, *spawn.Agent)
	}
	if spawn.Agent != nil && spawn.Agent.Model != "" {
		// The child runs on its agent's model (Services.Models), and
		// records it.
		c.Config.ModelName, c.Config.agentModel = spawn.Agent.Model, spawn.Agent.Model
	}
	readOnly := spawn.Agent != nil && spawn.Agent.Sandbox == facts.SandboxReadOnly
	c.Config.readOnly = c.Config.readOnly || readOnly
	var adapters []ToolAdapter
	for _, name := range spawn.Tools {
		if readOnly && planRefusal(ps.tools, name) != "" {
			// A read-only agent's child has the tools plan mode offers:
			// no delegate, no tool that writes, commands read-only (see
			// planEnv).
			continue
		}
		if name == delegateTool {
			c.Delegate = true
			continue
		}
		t, ok := ps.tools.Lookup(name)
		if r, in := rooted.Lookup(name); ok && in {
			t = r // the same tool, rooted in the child's worktree
		}
		if !ok {
			return Actor{}, nil, fmt.Errorf("child %s: its spawn names tool %q, which its parent's actor does not have", id, name)
		}
		adapters = append(adapters, t)
	}
	tb, err := NewToolbox(adapters...)
	if err != nil {
		return Actor{}, nil, fmt.Errorf("child %s: %w", id, err)
	}
	c.Tools = tb
	a, err := ps.delegate.compose(c)
	if err != nil {
		return Actor{}, nil, fmt.Errorf("compose the actor of child %s: %w", id, err)
	}
	if err := c.allows(a); err != nil {
		return Actor{}, nil, fmt.Errorf("child %s: %w", id, err)
	}
	return a, tb, nil
}

// agentPrompt is the system prompt of a child of an agent: its parent's
// (base, "" for DefaultSystemPrompt) and then the agent's instructions.
func agentPrompt(base string, ag facts.AgentFile) string {
	if base == "" {
		base = DefaultSystemPrompt
	}
	return base + "\n\n# Instructions of agent " + ag.Name + " (" + ag.Scope + ")\n\n" + ag.Instructions
}

// allows checks the child's actor against what the delegation gave it.
func (c Child) allows(a Actor) error {
	s := a.spec
	switch {
	case s == nil:
		return fmt.Errorf("%w: it was not made by Compose", ErrChildPolicy)
	case s.tools != c.Tools:
		return fmt.Errorf("%w: compose it with the child's toolbox (Child.Tools), not another", ErrChildPolicy)
	case s.cfg.agentModel != c.Config.agentModel:
		return fmt.Errorf("%w: its agent runs on model %q; compose it with the child's configuration (Child.Config)", ErrChildPolicy, c.Config.agentModel)
	case s.delegate != nil && !c.Delegate:
		return fmt.Errorf("%w: it delegates, but its delegation did not name the %s tool", ErrChildPolicy, delegateTool)
	}
	for _, g := range s.cfg.Grants {
		if !slices.Contains(c.Config.Grants, g) {
			return fmt.Errorf("%w: it is granted %s, which its parent is not", ErrChildPolicy, g)
		}
	}
	if c.Config.MaxTurns > 0 && (!s.budgeted || s.cfg.MaxTurns == 0 || s.cfg.MaxTurns > c.Config.MaxTurns) {
		turns := "s"
		if s.cfg.MaxTurns == 1 {
			turns = ""
		}
		return fmt.Errorf("%w: its budget is %d model turn%s; compose it with a Budget part and MaxTurns 1 to %d", ErrChildPolicy, s.cfg.MaxTurns, turns, c.Config.MaxTurns)
	}
	if c.Config.MaxTokens > 0 && (!s.budgeted || s.cfg.MaxTokens == 0 || s.cfg.MaxTokens > c.Config.MaxTokens) {
		tokens := "s"
		if s.cfg.MaxTokens == 1 {
			tokens = ""
		}
		return fmt.Errorf("%w: its budget is %d token%s; compose it with a Budget part and MaxTokens 1 to %d", ErrChildPolicy, s.cfg.MaxTokens, tokens, c.Config.MaxTokens)
	}
	return nil
}

// child decodes a child.reported fact into the budget's count.
func (b *budget) child(f facts.Fact) {
	p, err := facts.Decode[facts.ChildReported](f)
	if err != nil {
		if b.err == nil {
			b.err = err
		}
		return
	}
	b.childTurns += p.Turns
	b.childTokens += p.Tokens
	b.childUSD += p.USD
}

// Open is the thread id of the runtime, folded by the actor that folds
// it: actor for a thread it began, and for a child thread (whose first
// fact is thread.spawned) the child actor its ancestors' delegations
// compose, each link checked (the parent's log records the spawn, with
// the hash the child names). A thread with no facts is the actor's.
func (rt *Runtime) Open(ctx context.Context, actor Actor, id string) (*Thread, error) {
	return rt.open(ctx, actor, id, 0)
}

// open is Open of a thread depth links below the one first asked for: a
// walk of more than maxTreeDepth parents (spawn records that name each
// other, written by hand) is ErrNotInTree, not a walk without end.
func (rt *Runtime) open(ctx context.Context, actor Actor, id string, depth int) (*Thread, error) {
	spawn, ok, err := thread.SpawnOf(ctx, rt.Store, id)
	if err != nil || !ok {
		return rt.Thread(actor, id), err
	}
	if depth >= maxTreeDepth {
		return nil, fmt.Errorf("thread %s: no root within %d parents: %w", id, maxTreeDepth, ErrNotInTree)
	}
	parent, err := rt.open(ctx, actor, spawn.Parent, depth+1)
	if err != nil {
		return nil, err
	}
	return parent.child(ctx, id, spawn)
}

// Open is the thread id of this thread's tree — itself, a child, a child's
// child — folded by the actor its delegations compose (see Runtime.Open).
// A thread that does not descend from this one is ErrNotInTree.
func (t *Thread) Open(ctx context.Context, id string) (*Thread, error) {
	return t.open(ctx, id, 0)
}

// open is Open of a thread depth links below the one first asked for,
// cut after maxTreeDepth parents as Runtime.Open's walk is.
func (t *Thread) open(ctx context.Context, id string, depth int) (*Thread, error) {
	if id == t.id {
		return t, nil
	}
	spawn, ok, err := thread.SpawnOf(ctx, t.rt.Store, id)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("thread %s in the tree of %s: %w", id, t.id, ErrNotInTree)
	case depth >= maxTreeDepth:
		return nil, fmt.Errorf("thread %s in the tree of %s: not within %d parents: %w", id, t.id, maxTreeDepth, ErrNotInTree)
	}
	parent, err := t.open(ctx, spawn.Parent, depth+1)
	if err != nil {
		return nil, err
	}
	return parent.child(ctx, id, spawn)
}

// child is the child id of t, spawned as spawn says: its link to t
// checked, its actor composed, its runtime t's with the child's tools.
func (t *Thread) child(ctx context.Context, id string, spawn facts.ThreadSpawned) (*Thread, error) {
	if err := checkLink(ctx, t.rt.Store, id, spawn); err != nil {
		return nil, err
	}
	return t.linked(ctx, id, spawn)
}

// linked is the child id of t whose link to t is checked.
func (t *Thread) linked(ctx context.Context, id string, spawn facts.ThreadSpawned) (*Thread, error) {
	crt := *t.rt
	var rooted *Toolbox
	if w := spawn.Worktree; w != nil && crt.Services.Worktrees != nil {
		svc, err := crt.Services.Worktrees.In(ctx, crt.Services, *w)
		if err != nil {
			return nil, fmt.Errorf("child %s: its worktree %s: %w", id, w.Path, err)
		}
		crt.Services, rooted = svc, svc.Tools
	}
	actor, tools, err := childOf(t.actor, spawn, id, rooted)
	if err != nil {
		return nil, err
	}
	crt.Services.Tools = tools
	return &Thread{rt: &crt, actor: actor, id: id, wt: spawn.Worktree}, nil
}

// maxTreeDepth bounds the walk from a child up to the root of its tree.
const maxTreeDepth = 64

// RootOf is the root of the tree the thread id belongs to: id itself when
// it is no child, else its parent's root. A walk of more than 64
// parents (spawn records that name each other) is ErrNotInTree.
func RootOf(ctx context.Context, store thread.Store, id string) (string, error) {
	for range maxTreeDepth {
		spawn, ok, err := thread.SpawnOf(ctx, store, id)
		if err != nil || !ok {
			return id, err
		}
		id = spawn.Parent
	}
	return "", fmt.Errorf("thread %s: more than %d parents above it: %w", id, maxTreeDepth, ErrNotInTree)
}

// checkLink checks that the parent's log records the spawn of child id as
// the child's first fact says: a child.spawned at the seq, with the hash,
// under the key, naming the child.
func checkLink(ctx context.Context, store thread.Store, id string, spawn facts.ThreadSpawned) error {
	f, err := thread.ReadAt(ctx, store, spawn.Parent, spawn.Seq)
	if err != nil {
		return fmt.Errorf("thread %s names its spawn at seq %d of %s: %w: %w", id, spawn.Seq, spawn.Parent, ErrNotChild, err)
	}
	if f.Kind != facts.KindChildSpawned || f.Hash().String() != spawn.Hash || f.Cause != spawn.Key {
		return fmt.Errorf("thread %s names its spawn at seq %d of %s (hash %.12s, key %s), but that fact is %s (hash %.12s, cause %s): %w",
			id, spawn.Seq, spawn.Parent, spawn.Hash, spawn.Key, f.Kind, f.Hash().String(), f.Cause, ErrNotChild)
	}
	p, err := facts.Decode[facts.ChildSpawned](f)
	if err != nil {
		return fmt.Errorf("thread %s: its spawn in %s: %w", id, spawn.Parent, err)
	}
	if p.Child != id {
		return fmt.Errorf("thread %s names its spawn at seq %d of %s, which spawned %s: %w", id, spawn.Seq, spawn.Parent, p.Child, ErrNotChild)
	}
	return nil
}
