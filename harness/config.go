package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Config is how a coding actor and its runtime behave. Its zero value is
// the defaults, field by field (each field says its own); NewConfig
// returns them with options applied, and Validate refuses values that
// cannot work. A bound is lifted with NoBound where a field says so.
type Config struct {
	// MaxSteps bounds the transitions one Resume runs; a thread that needs
	// more returns StatusStepLimit and resumes where it stopped. 0 is 100;
	// NoBound (any negative value) is no bound.
	MaxSteps int
	// ModelAttempts is how many times a model turn is tried when it fails
	// transiently (a 429, a 503); 0 is 3.
	ModelAttempts int
	// ModelBackoff is the first wait between model attempts; 0 is 500ms,
	// and a negative one retries at once.
	ModelBackoff time.Duration
	// ModelMaxWait is the longest wait before a model attempt that a
	// server may ask for (Retry-After); one asking longer fails the turn,
	// as transient, saying how long it asked. 0 is a minute; NoBound (any
	// negative value) waits as long as the server asks.
	ModelMaxWait time.Duration
	// SystemPrompt is what the model is told before the conversation;
	// "" is DefaultSystemPrompt.
	SystemPrompt string
	// ModelName names the model, for the record.
	ModelName string
	// LoopGuard, when above 0, is how many times in a row the model may
	// make the same tool call (the tool and its arguments) before the
	// next one waits for a person's confirmation, whatever the approval
	// policy (scheduler.Env.LoopGuard); 0 is no guard.
	LoopGuard int
	// Prices, when set, prices each model turn by the model the thread
	// recorded: the turn's cost and the table's version are recorded on
	// its model.turn. A model the table does not price records tokens
	// only.
	Prices *model.Prices
	// Version names the program, for the record; "" is "harness/dev".
	Version string
	// Workspace names where threads work (host and directory), for the
	// record; NewStock sets it to the host and the workspace root.
	Workspace string
	// Actor names the actor in action requests; "" is "coding-actor".
	Actor string
	// MaxTurns bounds the model turns of a thread; 0 is no bound.
	MaxTurns int
	// MaxTokens bounds the tokens (input and output) of a thread; 0 is no
	// bound.
	MaxTokens int64
	// CompactAt is the size of the conversation, in approximate tokens,
	// past which older turns are summarized before the next model turn;
	// 0 never compacts.
	CompactAt int
	// OutputSchema, when set, is the JSON Schema a new thread's final
	// answer must be valid against (system.configured records it; see
	// scheduler.CheckOutput).
	OutputSchema *facts.OutputSchema
	// ContextWindow is the model's context window, in tokens. With it,
	// older turns are summarized — by the model, in a compaction turn —
	// before a model turn whose context would pass CompactFraction of
	// the window, as the latest turn's real usage says; 0 is a window not
	// known, and no such compaction.
	ContextWindow int
	// CompactFraction is the share of ContextWindow past which a
	// compaction is due; 0 is 0.8.
	CompactFraction float64
	// Grants are the capabilities the actor's threads are granted; an
	// action needing another is denied without invoking its adapter, and
	// without asking a person. nil is read, write and execute; an empty,
	// non-nil slice grants none.
	Grants []action.Capability
	// Settings are where the configuration came from (each settings file
	// and the command line, with the keys left out as untrusted), for the
	// record: system.configured carries them.
	Settings []facts.SettingsSource
	// Hooks are the hooks in force, in the order they run (see
	// Services.Hooks): system.configured records them, and the thread
	// runs those.
	Hooks []facts.Hook

	// readOnly: the thread is a child of a read-only agent (set by
	// childOf from its spawn record): it is held to plan mode's rules of
	// tools all along (see planEnv).
	readOnly bool
	// agentModel: the thread is a child of an agent file that names a
	// model (set by childOf from its spawn record): its turns run on
	// Services.Models of this spec, not on Services.Model.
	agentModel string

	// noReserve: system.configured records no BudgetReserve, as before
	// budgets reserved a turn (the package's tests write such logs).
	noReserve bool
	// hooksOneAtATime: system.configured records no HooksTogether, as
	// before a turn's before_tool hooks ran side by side (the package's
	// tests write such logs).
	hooksOneAtATime bool
	// afterHooksOneAtATime: system.configured records no
	// AfterHooksTogether, as before a call's after_tool hooks ran side by
	// side (the package's tests write such logs).
	afterHooksOneAtATime bool
	// noTurnsWait: the BudgetReserve recorded says nothing of turns, as
	// before a bound in turns waited (the package's tests write such
	// logs: the bound ends the thread).
	noTurnsWait bool

	// Worktrees is when a delegating thread's children work in git
	// worktrees of their own (see Services.Worktrees):
	// facts.WorktreesParallel (the default, ""), facts.WorktreesAlways or
	// facts.WorktreesOff. system.configured records it, and the record
	// decides.
	Worktrees string

	// OwnWorktree: a thread configured on this configuration that is no
	// child works in a git worktree of its own (Services.Worktrees), made
	// when it is configured and recorded on system.configured (or why it
	// could not be made); when it ends, what it left is committed to its
	// branch and the worktree removed (kept on failure), recorded on
	// worktree.finished. harness worker sets it: the threads a worker
	// drives at once then never share a directory.
	OwnWorktree bool

	// WorktreeMerge is what the end of a thread in a worktree of its own
	// (OwnWorktree) does with its branch when it ended done and changed
	// something: facts.WorktreeMergeAsk (the default, "") offers a person
	// the merge into the workspace — a write waiting for approval, shown
	// with its diff, as any write is — and facts.WorktreeMergeBranch
	// leaves the change on the branch, named. system.configured records
	// it, and the record decides.
	WorktreeMerge string
}

// Option sets a field of a Config.
type Option func(*Config)

// WithMaxSteps sets Config.MaxSteps (NoBound for none).
func WithMaxSteps(n int) Option { return func(c *Config) { c.MaxSteps = n } }

// WithModelBackoff sets Config.ModelBackoff; 0 here, as a negative
// Config.ModelBackoff, retries at once: an option names the wait, not the
// default.
func WithModelBackoff(d time.Duration) Option {
	return func(c *Config) {
		if d == 0 {
			d = noWait
		}
		c.ModelBackoff = d
	}
}

// noWait is the ModelBackoff of retrying at once.
const noWait time.Duration = -1

// WithOutputSchema sets Config.OutputSchema to schema, read from source
// (a file's name, for the record).
func WithOutputSchema(schema []byte, source string) Option {
	return func(c *Config) {
		raw := facts.RawJSON(schema)
		c.OutputSchema = &facts.OutputSchema{Schema: raw, Digest: facts.SchemaDigest(raw), Source: source}
	}
}

// WithModelName sets Config.ModelName.
func WithModelName(name string) Option { return func(c *Config) { c.ModelName = name } }

// WithBudget sets Config.MaxTurns and Config.MaxTokens.
func WithBudget(turns int, tokens int64) Option {
	return func(c *Config) { c.MaxTurns, c.MaxTokens = turns, tokens }
}

// contextBounds are the compaction bounds system.configured records,
// zero ones too: a log that records none is one written before they were
// recorded, and goes by Config.
func (c Config) contextBounds() *facts.ContextBounds {
	b := &facts.ContextBounds{Window: c.ContextWindow, Fraction: c.CompactFraction, CompactAt: c.CompactAt}
	if b.Window > 0 && b.Fraction == 0 {
		b.Fraction = defaultCompactFraction // recorded as it applies
	}
	return b
}

// defaultCompactFraction is the share of the context window past which a
// compaction is due when Config.CompactFraction says none.
const defaultCompactFraction = 0.8

// WithWorkspace sets Config.Workspace.
func WithWorkspace(w string) Option { return func(c *Config) { c.Workspace = w } }

// Values a Config and a thread name.
const (
	// DefaultSystemPrompt is the system prompt of a Config that sets none.
	DefaultSystemPrompt = "You are a careful coding agent working in the user's repository. " +
		"Use the tools to read and change files and to run commands. Say plainly what you did."
	// NoBound, as Config.MaxSteps or Config.ModelMaxWait, lifts the
	// bound: a zero one is the default bound.
	NoBound = -1
	// StartKey is the idempotency key of the user message that starts a
	// thread: its cause is "ingress/start".
	StartKey = "start"
)

// defaults are the values of a Config's zero fields.
var defaults = Config{
	MaxSteps:      100,
	ModelAttempts: 3,
	ModelBackoff:  500 * time.Millisecond,
	ModelMaxWait:  time.Minute,
	SystemPrompt:  DefaultSystemPrompt,
	Version:       "harness/dev",
	Actor:         "coding-actor",
	Grants:        []action.Capability{action.Read, action.Write, action.Execute},
}

// resolved is c with its zero fields set to the defaults; a negative
// bound stays negative (no bound), and readers say what it means.
func (c Config) resolved() Config {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&c.MaxSteps, defaults.MaxSteps)
	set(&c.ModelAttempts, defaults.ModelAttempts)
	if c.ModelBackoff == 0 {
		c.ModelBackoff = defaults.ModelBackoff
	}
	if c.ModelMaxWait == 0 {
		c.ModelMaxWait = defaults.ModelMaxWait
	}
	if c.SystemPrompt == "" {
		c.SystemPrompt = defaults.SystemPrompt
	}
	if c.Version == "" {
		c.Version = defaults.Version
	}
	if c.Actor == "" {
		c.Actor = defaults.Actor
	}
	if c.Grants == nil {
		c.Grants = slices.Clone(defaults.Grants)
	}
	return c
}

// stepLimit reports whether a Resume that ran steps transitions has
// reached Config.MaxSteps.
func (c Config) stepLimit(steps int) bool {
	n := c.resolved().MaxSteps
	return n > 0 && steps >= n
}

// backoff is Config.ModelBackoff as a wait: a negative one is none.
func (c Config) backoff() time.Duration { return max(c.resolved().ModelBackoff, 0) }

// NewConfig returns the default configuration with opts applied, every
// field as it applies (a zero one set to its default). It refuses a
// configuration that cannot run, naming the field.
func NewConfig(opts ...Option) (Config, error) {
	c := Config{}.resolved()
	for _, o := range opts {
		o(&c)
	}
	return c.resolved(), c.Validate()
}

// Validate names the first field that cannot work. Zero fields are the
// defaults, and valid.
func (c Config) Validate() error {
	switch {
	case c.ModelAttempts < 0:
		return fmt.Errorf("config: ModelAttempts is %d: a model turn must be tried at least once (0 is %d)", c.ModelAttempts, defaults.ModelAttempts)
	case c.MaxTurns < 0:
		return fmt.Errorf("config: MaxTurns is %d: want ≥ 0 (0 is no bound)", c.MaxTurns)
	case c.MaxTokens < 0:
		return fmt.Errorf("config: MaxTokens is %d: want ≥ 0 (0 is no bound)", c.MaxTokens)
	case c.CompactAt < 0:
		return fmt.Errorf("config: CompactAt is %d: want ≥ 0 (0 never compacts)", c.CompactAt)
	case c.ContextWindow < 0:
		return fmt.Errorf("config: ContextWindow is %d: want ≥ 0 (0 is not known)", c.ContextWindow)
	case c.CompactFraction < 0 || c.CompactFraction > 1 || c.CompactFraction != c.CompactFraction:
		return fmt.Errorf("config: CompactFraction is %v: want a share of the window, above 0 and at most 1 (0 is %v)", c.CompactFraction, defaultCompactFraction)
	}
	switch c.Worktrees {
	case "", facts.WorktreesParallel, facts.WorktreesAlways, facts.WorktreesOff:
	default:
		return fmt.Errorf("config: Worktrees is %q: want %s, %s or %s", c.Worktrees, facts.WorktreesParallel, facts.WorktreesAlways, facts.WorktreesOff)
	}
	switch c.WorktreeMerge {
	case "", facts.WorktreeMergeAsk, facts.WorktreeMergeBranch:
	default:
		return fmt.Errorf("config: WorktreeMerge is %q: want %s or %s", c.WorktreeMerge, facts.WorktreeMergeAsk, facts.WorktreeMergeBranch)
	}
	for _, g := range c.Grants {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("config: Grants: %w", err)
		}
	}
	if o := c.OutputSchema; o != nil {
		if err := o.Validate(); err != nil {
			return fmt.Errorf("config: OutputSchema: %w", err)
		}
		if _, err := scheduler.CompileOutputSchema(o.Schema); err != nil {
			return fmt.Errorf("config: OutputSchema %s: %w", o.Source, err)
		}
	}
	return nil
}
