package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Part is one piece of a coding actor: System, Tools, Budget, Compact,
// Infer or Scheduler. Compose puts parts together.
type Part interface {
	add(a *assembly, prefix string)
}

// assembly is what Compose learns from the parts: the configuration, the
// tools, and how to build one fold's components in order.
type assembly struct {
	cfg      Config
	toolbox  *Toolbox
	build    []func(k *kit) fold.Component[Services]
	delegate *delegation // set by the Delegate part
	budgeted bool        // a Budget part is among the parts
}

// kit is one fold's components that other components consult: the budget
// (asked before a model turn) and the scheduler (whose conversation a
// compaction summarizes). It is filled as the components are built and
// read only when they are projected.
type kit struct {
	budget    *budget
	scheduler *scheduler.Scheduler[Services]
	system    *system // whose fold decides a turn's instructions
}

// Compose builds a coding actor from parts, in order; the order is the
// order in which their transitions are tried.
func Compose(cfg Config, parts ...Part) (Actor, error) {
	if err := cfg.Validate(); err != nil {
		return Actor{}, err
	}
	cfg = cfg.resolved()
	a := &assembly{cfg: cfg}
	for _, p := range parts {
		p.add(a, "")
	}
	if err := a.check(); err != nil {
		return Actor{}, err
	}
	// The lineage of the thread (a child's spawn and end, a stop) comes
	// first: its stop is the one a projection reports.
	build := append([]func(k *kit) fold.Component[Services]{func(*kit) fold.Component[Services] { return &lineage{} }}, a.build...)
	return Actor{Name: cfg.Actor, New: func() []fold.Component[Services] {
		k := &kit{}
		out := make([]fold.Component[Services], len(build))
		for i, b := range build {
			out[i] = b(k)
		}
		return out
	}, spec: &actorSpec{cfg: cfg, tools: a.toolbox, budgeted: a.budgeted, delegate: a.delegate}}, nil
}

// CodingActor is the stock tree: System, Tools, Budget, Compact and
// Infer(Scheduler), with the tools of the toolbox.
func CodingActor(cfg Config, tools *Toolbox) (Actor, error) {
	return Compose(cfg, System(), Tools(tools), Budget(), Compact(), Infer(Scheduler()))
}

// System records what the model is told — the system prompt, the tool
// schemas, the model's name and the program's version — as a
// system.configured fact before the first model turn, so a replay shows it.
// It also folds what decides each turn's instruction files (see
// InstructionReader): the ones recorded last, and the paths touched.
func System() Part { return systemPart{} }

type systemPart struct{}

func (systemPart) add(a *assembly, prefix string) {
	a.build = append(a.build, func(k *kit) fold.Component[Services] {
		s := &system{a: a, key: prefix + "system/configure"}
		if k.system == nil {
			k.system = s
		}
		return s
	})
}

type system struct {
	a          *assembly
	key        string
	configured bool
	child      bool // the thread's first fact is its spawn record
	ins        instructions
	plan       planning
}

func (s *system) Name() string { return "system" }

func (s *system) Step(f facts.Fact) error {
	if f.Kind == facts.KindSystemConfigured {
		s.configured = true
	}
	if f.Seq == 1 && f.Kind == facts.KindThreadSpawned {
		s.child = true
	}
	s.ins.step(f)
	s.plan.step(f)
	return nil
}

// Accept checks a posted plan.mode_set (see planning.accept); every other
// fact is not addressed to it.
func (s *system) Accept(d facts.Draft) error { return s.plan.accept(d) }

func (s *system) Output() fold.Output[Services] {
	if s.configured {
		out := fold.Output[Services]{View: "configured"}
		if s.plan.err != nil {
			out.Stop = &fold.Stop{Status: fold.StatusFailed, Reason: "system: " + s.plan.err.Error()}
			return out
		}
		s.plan.output(strings.TrimSuffix(s.key, "system/configure"), &out)
		return out
	}
	sc := facts.SystemConfigured{
		Prompt:    s.a.cfg.SystemPrompt,
		Model:     s.a.cfg.ModelName,
		Tools:     s.a.schemas(),
		Version:   s.a.cfg.Version,
		Workspace: s.a.cfg.Workspace,
		Sandbox:   s.a.sandbox(),
		Context:   s.a.cfg.contextBounds(),
		Output:    s.a.cfg.OutputSchema,
		Settings:  s.a.cfg.Settings,
		Hooks:     s.a.cfg.Hooks,
		// A turn's before_tool hooks run side by side (see scheduler's
		// hook.go); the rule is recorded only where there are hooks.
		HooksTogether: len(s.a.cfg.Hooks) > 0 && !s.a.cfg.hooksOneAtATime,
		// A call's after_tool hooks run side by side (see scheduler's
		// afterhooks.go), recorded where there are any.
		AfterHooksTogether: hasAfterHooks(s.a.cfg.Hooks) && !s.a.cfg.hooksOneAtATime && !s.a.cfg.afterHooksOneAtATime,
		Worktrees:          s.a.worktrees(),
		Reserve:            s.a.cfg.reserve(),
	}
	var e effect.Effect[Services, []facts.Draft]
	if s.a.cfg.OwnWorktree && !s.child {
		sc.WorktreeMerge = cmp.Or(s.a.cfg.WorktreeMerge, facts.WorktreeMergeAsk)
		e = ownWorktree(sc)
	} else if d, err := facts.NewDraft(facts.KindSystemConfigured, "", sc); err != nil {
		e = effect.Die[Services, []facts.Draft](err)
	} else {
		e = effect.Succeed[Services]([]facts.Draft{d})
	}
	return fold.Output[Services]{View: "unconfigured", Transitions: []fold.Transition[Services]{{Key: s.key, Effect: e}}}
}

// ownWorktree configures a thread that works in a worktree of its own
// (Config.OwnWorktree): the worktree is made once, here, and recorded on
// system.configured — or why it could not be, and the thread works in
// the workspace. A replay reads the record; a configuration that crashed
// after making it finds the same worktree again (worktree.Create).
func ownWorktree(sc facts.SystemConfigured) effect.Effect[Services, []facts.Draft] {
	return effect.FromAsync(func(ctx context.Context, s Services) ([]facts.Draft, error) {
		if s.Worktrees == nil {
			sc.WorktreeError = "this harness makes no worktrees"
		} else if w, err := s.Worktrees.Create(ctx, s.thread); ctx.Err() != nil {
			return nil, ctx.Err() // interrupted: nothing is recorded
		} else if err != nil {
			sc.WorktreeError = err.Error()
		} else {
			sc.Worktree = &w
		}
		if sc.Worktree == nil {
			sc.WorktreeMerge = "" // no branch to merge
		}
		d, err := facts.NewDraft(facts.KindSystemConfigured, "", sc)
		if err != nil {
			return nil, effect.Defect(err)
		}
		return []facts.Draft{d}, nil
	})
}

// Tools declares the tools of the actor, and per tool whether a call asks a
// person first (see Tool.Confirm). It adds no component.
func Tools(tb *Toolbox) Part { return toolsPart{tb} }

type toolsPart struct{ tb *Toolbox }

func (p toolsPart) add(a *assembly, _ string) { a.toolbox = p.tb }

// Budget bounds the model turns and tokens of a thread (Config.MaxTurns,
// Config.MaxTokens), counted from the usage recorded on model.turn facts
// (and on context.compacted facts, for the tokens of compaction turns).
// When a model turn is due and the budget is spent, the thread records
// budget.exhausted and stops, visibly — except a root thread's bound in
// turns, when its log says it waits (see turnlimit.go): it waits for a
// person to raise it.
func Budget() Part { return budgetPart{} }

type budgetPart struct{}

func (budgetPart) add(a *assembly, _ string) {
	a.budgeted = true
	a.build = append(a.build, func(k *kit) fold.Component[Services] {
		k.budget = &budget{maxTurns: a.cfg.MaxTurns, maxTokens: a.cfg.MaxTokens}
		return k.budget
	})
}

type budget struct {
	maxTurns  int
	maxTokens int64
	// turns are the model.turn facts, decoded only when the budget is
	// asked (counted is how many have been): a long parked thread resumes
	// without decoding them. Only what decoding needs is kept.
	thread    string
	turnFacts []turnRef
	counted   int
	turns     int
	tokens    int64
	err       error
	// childTurns, childTokens and childUSD are what the thread's
	// children reported.
	childTurns  int
	childTokens int64
	childUSD    float64
	// usd is what the priced turns cost; tables the price tables that
	// priced them, in the order first used; unpriced the turns with no
	// cost recorded (an unknown model, or a log from before costs).
	usd      float64
	tables   []string
	unpriced int
	// tree is the tree's shared budget in money and tokens (tree.go's
	// budget.set, budget.raised and budget.shared; see treebudget.go).
	tree treeBudget
	// next is what the budget reserves for the next model turn (see
	// treebudget.go's reservation).
	next reservation
	// sampled counts the thread's sampling turns (model.sampled), whose
	// tokens and cost are counted with the turns' (see sample.go).
	sampled int
}

// BudgetView is the budget component's view. Turns and Tokens count the
// thread's own model turns and those its children reported: a budget
// bounds a thread and what it delegated. USD is what the priced turns of
// both cost, by the tables named in Tables; Unpriced counts the thread's
// own turns that record no cost.
type BudgetView struct {
	// MaxTurns is the thread's bound in model turns: the one its log
	// records (else its configuration's), grown by the raises in turns
	// the root folded. TurnsWait is set when reaching it makes the thread
	// wait for a raise rather than end (see turnlimit.go).
	Turns, MaxTurns   int
	TurnsWait         bool
	Tokens, MaxTokens int64
	USD               float64
	Tables            []string
	Unpriced          int
	// Tree is the tree's shared budget in money and tokens, as this
	// thread knows it: its bounds and what the rest of the tree spent.
	Tree TreeBudgetView
}

func (b *budget) Name() string { return "budget" }

func (b *budget) Step(f facts.Fact) error {
	switch f.Kind {
	case facts.KindModelTurn, facts.KindContextCompacted, facts.KindModelSampled:
		b.thread = f.Thread
		b.turnFacts = append(b.turnFacts, turnRef{f.Seq, f.Kind, f.Cause, f.Data})
		b.next.turned = b.next.turned || f.Kind == facts.KindModelTurn
		if f.Kind == facts.KindModelSampled {
			b.sampled++
		}
	case facts.KindSystemConfigured, facts.KindUserMessage:
		b.next.step(f)
	case facts.KindChildReported:
		b.child(f) // a child's turns and tokens are the parent's too
	case facts.KindThreadSpawned, facts.KindBudgetSet, facts.KindBudgetRaised, facts.KindBudgetShared:
		b.tree.step(f)
	}
	return nil
}

// turnRef is what the budget keeps of a model.turn (or context.compacted)
// fact until it counts it.
type turnRef struct {
	seq   uint64
	kind  facts.Kind
	cause string
	data  []byte
}

// count decodes the model turns not counted yet, and lets them go.
func (b *budget) count() {
	for ; b.counted < len(b.turnFacts) && b.err == nil; b.counted++ {
		r := b.turnFacts[b.counted]
		f := facts.Fact{Thread: b.thread, Seq: r.seq, Kind: r.kind, Cause: r.cause, Data: r.data}
		var u facts.Usage
		if r.kind == facts.KindModelSampled {
			// An MCP server's sampling turn: its tokens and cost, never
			// a turn of the thread (see sample.go).
			ms, err := facts.Decode[facts.ModelSampled](f)
			if err != nil {
				b.err = err
				return
			}
			u = ms.Usage
			if c := ms.Cost; c != nil {
				b.usd += c.USD
				if !slices.Contains(b.tables, c.Table) {
					b.tables = append(b.tables, c.Table)
				}
			}
		} else if r.kind == facts.KindContextCompacted {
			cc, err := facts.Decode[facts.ContextCompacted](f)
			if err != nil {
				b.err = err
				return
			}
			u = cc.Usage
			if c := cc.Cost; c != nil {
				b.usd += c.USD
				if !slices.Contains(b.tables, c.Table) {
					b.tables = append(b.tables, c.Table)
				}
			}
		} else {
			mt, err := facts.Decode[facts.ModelTurn](f)
			if err != nil {
				b.err = err
				return
			}
			b.turns++
			u = mt.Usage
			b.next.last = facts.Spend{Tokens: u.InputTokens + u.OutputTokens}
			if c := mt.Cost; c != nil {
				b.usd += c.USD
				b.next.last.USD = c.USD
				if !slices.Contains(b.tables, c.Table) {
					b.tables = append(b.tables, c.Table)
				}
			} else {
				b.unpriced++
			}
		}
		b.tokens += u.InputTokens + u.OutputTokens
	}
	if b.err == nil && b.counted == len(b.turnFacts) {
		b.turnFacts, b.counted = nil, 0
	}
}

// Output enables nothing; the budget is asked before each model turn. A
// model turn it could not decode (only damage makes one) stops the thread.
func (b *budget) Output() fold.Output[Services] {
	if b.err != nil {
		return fold.Output[Services]{Stop: &fold.Stop{Status: fold.StatusFailed, Reason: "budget: " + b.err.Error()}}
	}
	if b.tree.err != nil {
		return fold.Output[Services]{Stop: &fold.Stop{Status: fold.StatusFailed, Reason: "budget: " + b.tree.err.Error()}}
	}
	if b.next.err != nil {
		return fold.Output[Services]{Stop: &fold.Stop{Status: fold.StatusFailed, Reason: "budget: " + b.next.err.Error()}}
	}
	return fold.Output[Services]{}
}

// View reports the turns and tokens used so far, and the bounds.
func (b *budget) View() BudgetView {
	b.count()
	return BudgetView{Turns: b.turns + b.childTurns, MaxTurns: b.turnLimit(), TurnsWait: b.turnsWait(), Tokens: b.tokens + b.childTokens, MaxTokens: b.maxTokens,
		USD: b.usd + b.childUSD, Tables: slices.Clone(b.tables), Unpriced: b.unpriced, Tree: b.tree.view()}
}

// spent returns the budget.exhausted record when another model turn would
// pass the budget, or nil. A root thread whose log says its bound in
// turns waits (turnsWait) is not ended by it: hold makes it wait.
func (b *budget) spent() *facts.BudgetExhausted {
	if b == nil {
		return nil
	}
	v := b.View()
	switch {
	case v.MaxTurns > 0 && v.Turns >= v.MaxTurns && !b.turnsWait():
		return &facts.BudgetExhausted{Resource: "turns", Limit: int64(v.MaxTurns), Used: int64(v.Turns)}
	case b.maxTokens > 0 && v.Tokens >= b.maxTokens:
		return &facts.BudgetExhausted{Resource: "tokens", Limit: b.maxTokens, Used: v.Tokens}
	}
	return nil
}

// Infer runs model turns for its children: the coding scheduler
// (Scheduler) and, nested, further Infer parts. A nested Infer prefixes its
// children's transition keys with "infer<N>/", N its place among its
// parent's children; the top-level Infer adds no prefix, so the keys already
// used as causes in existing logs stay the same.
func Infer(children ...Part) Part { return inferPart{children} }

type inferPart struct{ children []Part }

func (p inferPart) add(a *assembly, prefix string) {
	for i, c := range p.children {
		if _, nested := c.(inferPart); nested {
			c.add(a, prefix+"infer"+strconv.Itoa(i+1)+"/")
			continue
		}
		c.add(a, prefix)
	}
}

// Scheduler is the coding scheduler, to be placed in an Infer part: model
// turns retried on transient failures up to Config.ModelAttempts, tools
// confirmed as the Tools part says.
func Scheduler() Part { return schedulerPart{} }

type schedulerPart struct{}

func (schedulerPart) add(a *assembly, prefix string) {
	a.build = append(a.build, func(k *kit) fold.Component[Services] {
		env := scheduler.Env[Services]{
			Infer: func(req scheduler.Request) effect.Effect[Services, facts.ModelTurn] { return inferTurn(a.cfg, req) },
			Prepare: func(req scheduler.Request) effect.Effect[Services, scheduler.Prepared] {
				return prepare(a.toolbox, k.system, req)
			},
			Declare:  declareCheck,
			Precheck: precheck,
			Sandbox: func(call facts.ToolCall) *facts.Sandbox {
				if t, ok := a.toolbox.Lookup(call.Name); ok {
					return sandboxOf(t)
				}
				return nil
			},
			CheckSandbox: func(check facts.CheckSpec) *facts.Sandbox {
				if check.Name != action.CheckCommandSucceeds {
					return nil
				}
				return a.toolbox.sandbox()
			},
			MCP: func(call facts.ToolCall, offered *facts.ToolSchema) *facts.MCPCall {
				if t, ok := a.toolbox.Lookup(call.Name); ok {
					if m, ok := t.(mcpCaller); ok {
						return m.MCPCall(call.Args, offered)
					}
				}
				return nil
			},
			Act: func(req action.Request, since action.Observed, j fold.Journal) effect.Effect[Services, []facts.Draft] {
				return act(a.cfg, req, since, j)
			},
			Refuse: func(req action.Request, since action.Observed, why string) effect.Effect[Services, []facts.Draft] {
				return effect.FromAsync(func(ctx context.Context, svc Services) ([]facts.Draft, error) {
					b := svc.boundary(a.cfg)
					b.Since = since
					done, changed := b.Deny(ctx, req, why)
					return completion(changed, done)
				})
			},
			Recover: func(started facts.ActionStarted) effect.Effect[Services, facts.ActionInterrupted] {
				return effect.FromAsync(func(ctx context.Context, svc Services) (facts.ActionInterrupted, error) {
					return svc.boundary(a.cfg).Interrupted(ctx, started)
				})
			},
			Deliver: func(req action.Request, started facts.ActionStarted, asked facts.QuestionAsked, answer facts.QuestionAnswered) effect.Effect[Services, []facts.Draft] {
				return deliver(a.cfg, req, started, asked, answer)
			},
			Policy: func(call facts.ToolCall) scheduler.Policy {
				t, ok := a.toolbox.Lookup(call.Name)
				if !ok {
					// An unknown tool runs nothing: the boundary finds no
					// adapter and its failed report tells the model so.
					return scheduler.Policy{Confirm: false, Capability: action.Read}
				}
				return scheduler.Policy{Confirm: confirms(t), Capability: t.Capability()}
			},
			Granted:   func(c action.Capability) bool { return slices.Contains(a.cfg.Grants, c) },
			Budget:    func() *facts.BudgetExhausted { return k.budget.spent() },
			Hold:      func() string { return k.budget.hold() },
			Actor:     a.cfg.Actor,
			LoopGuard: a.cfg.LoopGuard,
			Scope:     strings.TrimSuffix(strings.ReplaceAll(prefix, "/", "-"), "-"),
			Delegate:  a.delegate.calls(),
			Spawn:     a.delegate.spawner(a, k),
			Hook:      runHook,
			Rerun:     compareRerun,
			Serve:     serveRecorded,
			Offer:     offerRecorded,
		}
		planEnv(a, k, &env)
		s := scheduler.New(env)
		if k.scheduler == nil {
			k.scheduler = s
		}
		if prefix == "" {
			return s
		}
		return fold.Prefixed[Services](prefix, s)
	})
}

// declareCheck describes asking a call's tool which check it declares. A
// tool that cannot declare one (its target is missing, say) declares none:
// the action itself will say what went wrong.
func declareCheck(call facts.ToolCall) effect.Effect[Services, *facts.CheckSpec] {
	return effect.FromAsync(func(ctx context.Context, svc Services) (*facts.CheckSpec, error) {
		t, ok := svc.Tools.Lookup(call.Name)
		if !ok {
			return nil, nil
		}
		d, ok := t.(declarer)
		if !ok {
			return nil, nil
		}
		spec, err := d.Check(json.RawMessage(call.Args))
		if err != nil {
			return nil, nil
		}
		return spec, nil
	})
}

// precheck describes asking a call's tool for the refusal the call would
// surely get (a tool with a Precheck(args []byte) error method, as the
// built-in tools have); "" when it has none to give.
func precheck(call facts.ToolCall) effect.Effect[Services, string] {
	return effect.FromAsync(func(ctx context.Context, svc Services) (string, error) {
		t, ok := svc.Tools.Lookup(call.Name)
		if !ok {
			return "", nil
		}
		p, ok := t.(interface{ Precheck(args []byte) error })
		if !ok {
			return "", nil
		}
		if err := p.Precheck([]byte(call.Args)); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
}

// completion returns the drafts of a completion of an action that did not
// run: after the record of a change of the workspace found before it,
// when there is one.
func completion(changed *facts.WorkspaceChanged, done facts.ActionCompleted) ([]facts.Draft, error) {
	var out []facts.Draft
	if changed != nil {
		d, err := facts.NewDraft(facts.KindWorkspaceChanged, "", *changed)
		if err != nil {
			return nil, effect.Defect(err)
		}
		out = append(out, d)
	}
	d, err := facts.NewDraft(facts.KindActionCompleted, "", done)
	if err != nil {
		return nil, effect.Defect(err)
	}
	return append(out, d), nil
}

// act describes a request carried through the effect boundary: authority
// and precondition (Begin); action.started recorded through the journal
// immediately before the adapter runs; the adapter, the observation after,
// the effect state and the check (Finish) — or, when the run is cancelled
// while the adapter works, action.interrupted with what the runtime
// observed once the adapter stopped.
//
// A change of the workspace since the thread's last observation (since),
// which no action of the thread made, is recorded as workspace.changed in
// the same append as action.started (or the completion of an action that
// may not start), before it: one append, under the transition's claim
// key, so a crash leaves both or neither, and a resume that finds them
// does not record the change again.
func act(cfg Config, req action.Request, since action.Observed, j fold.Journal) effect.Effect[Services, []facts.Draft] {
	return effect.FromAsync(func(ctx context.Context, svc Services) ([]facts.Draft, error) {
		b := svc.boundary(cfg)
		b.Since = since
		var adapter action.Adapter
		if t, ok := svc.Tools.Lookup(req.Adapter); ok {
			adapter = t
			if unobservable(t) {
				// Its effects happen where the runtime cannot look: nobody
				// looks, and the effect is reported, never observed.
				b.Observer = nil
			}
		}
		bg, refused := b.Begin(ctx, req)
		if refused != nil {
			return completion(bg.Changed, *refused)
		}
		var claim []facts.Draft
		if bg.Changed != nil {
			d, err := facts.NewDraft(facts.KindWorkspaceChanged, "", *bg.Changed)
			if err != nil {
				return nil, effect.Defect(err)
			}
			claim = append(claim, d)
		}
		started, err := facts.NewDraft(facts.KindActionStarted, "", bg.Started)
		if err != nil {
			return nil, effect.Defect(err)
		}
		if err := j.Record(ctx, append(claim, started)...); err != nil {
			return nil, err
		}
		if svc.sampling != nil {
			// An MCP server may ask for a model turn while its call runs:
			// none is recorded after the action's end.
			sm := svc.sampling(cfg, svc)
			ctx = action.WithSample(ctx, sm.sample)
			defer sm.close()
		}
		return endDrafts(b.Finish(ctx, req, bg, adapter))
	})
}

// endDrafts are the drafts of how an action ended: its completion (and
// check), or, when the run was cancelled while the adapter worked, its
// interruption — recorded as interrupted (the runtime appends it after
// the cancellation; see Runtime.Resume), never as a failure.
func endDrafts(end action.Ended) ([]facts.Draft, error) {
	if end.Interrupted != nil {
		d, err := facts.NewDraft(facts.KindActionInterrupted, "", *end.Interrupted)
		if err != nil {
			return nil, effect.Defect(err)
		}
		return []facts.Draft{d}, nil
	}
	d, err := facts.NewDraft(facts.KindActionCompleted, "", *end.Completed)
	if err != nil {
		return nil, effect.Defect(err)
	}
	out := []facts.Draft{d}
	if check := end.Check; check != nil {
		c, err := facts.NewDraft(facts.KindCheckRecorded, "", *check)
		if err != nil {
			return nil, effect.Defect(err)
		}
		out = append(out, c)
	}
	return out, nil
}

// inferTurn describes one model turn: the model is asked, transient
// failures are retried, and a decision that does not hold together is an
// invalid_output failure. Every failed call is kept: on the turn's
// model.turn when a later call answers, on its transition.failed when
// none does.
func inferTurn(cfg Config, req scheduler.Request) effect.Effect[Services, facts.ModelTurn] {
	fresh := effect.FromAsync(func(context.Context, Services) (*attemptLog, error) { return &attemptLog{turn: req.Turn}, nil })
	return effect.AndThen(fresh, func(log *attemptLog) effect.Effect[Services, facts.ModelTurn] {
		call := effect.FromAsync(func(ctx context.Context, svc Services) (facts.ModelTurn, error) {
			m, err := modelOf(cfg, svc)
			if err != nil {
				log.failed(err)
				return facts.ModelTurn{}, err
			}
			d, err := m.Turn(ctx, model.Request{
				Thread: req.Thread, Turn: req.Turn, System: req.System.Prompt, Tools: req.System.Tools, Messages: req.Messages,
			})
			if err != nil {
				log.failed(err)
				return facts.ModelTurn{}, err
			}
			if err := d.Validate(); err != nil {
				err = &model.Error{Class: facts.ClassInvalidOutput, Err: err}
				log.failed(err)
				return facts.ModelTurn{}, err
			}
			mt := facts.ModelTurn{Text: d.Text, ToolCalls: d.ToolCalls, Question: d.Question, Usage: d.Usage, StopReason: d.StopReason, Cut: d.Cut}
			mt.Cost, mt.Model = priced(cfg, req.System.Model, d)
			// Only a real server's count says what its prompt held.
			mt.ToolsUnseen = d.Exchange != nil && toolsUnseen(req.System.Tools, d.Usage)
			if x := d.Exchange; x != nil && svc.Blobs != nil {
				ref, err := keepExchange(ctx, svc.Blobs, x)
				if err != nil {
					return facts.ModelTurn{}, fmt.Errorf("keep the model exchange: %w", err)
				}
				mt.Exchange = ref
			}
			return mt, nil
		})
		retried := retryNoting(cfg, call, log.waited)
		kept := effect.Map(retried, func(mt facts.ModelTurn) facts.ModelTurn {
			mt.Attempts = log.list()
			return mt
		})
		return effect.CatchFail(kept, func(err error) effect.Effect[Services, facts.ModelTurn] {
			if len(log.list()) == 0 {
				return effect.Fail[Services, facts.ModelTurn](err)
			}
			return effect.Fail[Services, facts.ModelTurn](&attemptsError{err: err, attempts: log.list()})
		})
	})
}

// toolsUnseen reports whether a turn's usage shows that the server left
// the tools out of the prompt: it counted fewer input tokens than half of
// what their schemas alone take (at four bytes a token).
func toolsUnseen(tools []facts.ToolSchema, u facts.Usage) bool {
	if len(tools) == 0 || u.InputTokens <= 0 {
		return false
	}
	n := 0
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return u.InputTokens < int64(n/4/2)
}

// attemptLog keeps the failed calls of one model turn as they happen.
type attemptLog struct {
	turn     int
	mu       sync.Mutex // guards attempts
	attempts []facts.ModelAttempt
}

// failed keeps a failed call.
func (l *attemptLog) failed(err error) {
	a := facts.ModelAttempt{Turn: l.turn, Message: err.Error()}
	a.Class, _ = model.Classify(err)
	if a.Class == "" {
		a.Class = facts.ClassBusiness
	}
	if x := model.ExchangeOf(err); x != nil {
		a.Status = x.Status
		body := x.Response
		if len(body) > facts.MaxAttemptBody {
			body = body[:facts.MaxAttemptBody]
		}
		a.Body = strings.ToValidUTF8(string(body), "\ufffd")
	}
	if len(a.Message) > facts.MaxAttemptBody {
		a.Message = a.Message[:facts.MaxAttemptBody] + "…"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a.Attempt = len(l.attempts) + 1
	l.attempts = append(l.attempts, a)
}

// waited notes the wait after the latest failed call.
func (l *attemptLog) waited(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.attempts); n > 0 {
		l.attempts[n-1].WaitMS = d.Milliseconds()
	}
}

// list returns the failed calls kept so far.
func (l *attemptLog) list() []facts.ModelAttempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.attempts)
}

// attemptsError is a model turn's failure with every failed call of it,
// each recorded as a model.call_failed before its transition.failed.
type attemptsError struct {
	err      error
	attempts []facts.ModelAttempt
}

func (e *attemptsError) Error() string { return e.err.Error() }

// Unwrap returns the last call's error.
func (e *attemptsError) Unwrap() error { return e.err }

// ModelAttempts returns the failed calls.
func (e *attemptsError) ModelAttempts() []facts.ModelAttempt { return e.attempts }

// modelWait is the wait before a model turn is tried again: the backoff's,
// or longer when the server asked so (Retry-After), up to
// Config.ModelMaxWait; a server asking longer fails the turn.
func modelWait(cfg Config, err error, planned time.Duration) (time.Duration, error) {
	asked, ok := model.RetryAfter(err)
	switch {
	case !ok || asked <= planned:
		return planned, nil
	case cfg.ModelMaxWait >= 0 && asked > cfg.ModelMaxWait:
		return 0, fmt.Errorf("%w; the server asked to wait %v before a retry, longer than Config.ModelMaxWait (%v)", err, asked, cfg.ModelMaxWait)
	}
	return asked, nil
}

// keepExchange keeps the bytes of a provider call as blobs: the record of
// what exactly the model was sent and what it answered.
func keepExchange(ctx context.Context, b action.Blobs, x *model.Exchange) (*facts.ExchangeRef, error) {
	req, err := b.PutBlob(ctx, x.Request)
	if err != nil {
		return nil, err
	}
	resp, err := b.PutBlob(ctx, x.Response)
	if err != nil {
		return nil, err
	}
	return &facts.ExchangeRef{Provider: x.Provider, URL: x.URL, Status: x.Status, Request: req, Response: resp,
		Size: len(x.Request) + len(x.Response)}, nil
}
