package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

// Config is how a coding actor and its runtime behave. Make one with
// NewConfig, which fills in defaults and refuses values that cannot work.
type Config struct {
	// MaxSteps bounds the transitions one Resume runs; a thread that needs
	// more returns StatusStepLimit and resumes where it stopped.
	MaxSteps int
	// ModelAttempts is how many times a model turn is tried when it fails
	// transiently (a 429, a 503).
	ModelAttempts int
	// ModelBackoff is the first wait between model attempts.
	ModelBackoff time.Duration
	// ModelMaxWait is the longest wait before a model attempt that a
	// server may ask for (Retry-After); one asking longer fails the turn,
	// as transient, saying how long it asked.
	ModelMaxWait time.Duration
	// SystemPrompt is what the model is told before the conversation.
	SystemPrompt string
	// ModelName names the model, for the record.
	ModelName string
	// Version names the program, for the record.
	Version string
	// Workspace names where threads work (host and directory), for the
	// record; NewStock sets it to the host and the workspace root.
	Workspace string
	// Actor names the actor in action requests.
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
	// without asking a person.
	Grants []action.Capability
	// Settings are where the configuration came from (each settings file
	// and the command line, with the keys left out as untrusted), for the
	// record: system.configured carries them.
	Settings []facts.SettingsSource
}

// Option sets a field of a Config.
type Option func(*Config)

// WithMaxSteps sets Config.MaxSteps.
func WithMaxSteps(n int) Option { return func(c *Config) { c.MaxSteps = n } }

// WithModelAttempts sets Config.ModelAttempts.
func WithModelAttempts(n int) Option { return func(c *Config) { c.ModelAttempts = n } }

// WithModelBackoff sets Config.ModelBackoff.
func WithModelBackoff(d time.Duration) Option { return func(c *Config) { c.ModelBackoff = d } }

// WithModelMaxWait sets Config.ModelMaxWait.
func WithModelMaxWait(d time.Duration) Option { return func(c *Config) { c.ModelMaxWait = d } }

// WithSystemPrompt sets Config.SystemPrompt.
func WithSystemPrompt(p string) Option { return func(c *Config) { c.SystemPrompt = p } }

// WithModelName sets Config.ModelName.
func WithModelName(name string) Option { return func(c *Config) { c.ModelName = name } }

// WithBudget sets Config.MaxTurns and Config.MaxTokens.
func WithBudget(turns int, tokens int64) Option {
	return func(c *Config) { c.MaxTurns, c.MaxTokens = turns, tokens }
}

// WithCompactAt sets Config.CompactAt.
func WithCompactAt(tokens int) Option { return func(c *Config) { c.CompactAt = tokens } }

// WithContextWindow sets Config.ContextWindow and Config.CompactFraction
// (0 keeps the default).
func WithContextWindow(tokens int, fraction float64) Option {
	return func(c *Config) { c.ContextWindow, c.CompactFraction = tokens, fraction }
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

// WithActor sets Config.Actor.
func WithActor(name string) Option { return func(c *Config) { c.Actor = name } }

// WithGrants sets Config.Grants.
func WithGrants(caps ...action.Capability) Option {
	return func(c *Config) { c.Grants = slices.Clone(caps) }
}

// WithSettings sets Config.Settings.
func WithSettings(src []facts.SettingsSource) Option {
	return func(c *Config) { c.Settings = slices.Clone(src) }
}

// WithVersion sets Config.Version.
func WithVersion(v string) Option { return func(c *Config) { c.Version = v } }

// WithWorkspace sets Config.Workspace.
func WithWorkspace(w string) Option { return func(c *Config) { c.Workspace = w } }

// DefaultSystemPrompt is the system prompt of a Config that sets none.
const DefaultSystemPrompt = "You are a careful coding agent working in the user's repository. " +
	"Use the tools to read and change files and to run commands. Say plainly what you did."

// NewConfig returns the default configuration with opts applied. It
// refuses a configuration that cannot run, naming the field.
func NewConfig(opts ...Option) (Config, error) {
	c := Config{
		MaxSteps:      100,
		ModelAttempts: 3,
		ModelBackoff:  500 * time.Millisecond,
		ModelMaxWait:  time.Minute,
		SystemPrompt:  DefaultSystemPrompt,
		Version:       "harness/dev",
		Actor:         "coding-actor",
		Grants:        []action.Capability{action.Read, action.Write, action.Execute},
	}
	for _, o := range opts {
		o(&c)
	}
	return c, c.Validate()
}

// Validate names the first field that cannot work.
func (c Config) Validate() error {
	switch {
	case c.MaxSteps < 1:
		return fmt.Errorf("config: MaxSteps is %d: a runtime must be allowed at least 1 step", c.MaxSteps)
	case c.ModelAttempts < 1:
		return fmt.Errorf("config: ModelAttempts is %d: a model turn must be tried at least once", c.ModelAttempts)
	case c.ModelBackoff < 0:
		return fmt.Errorf("config: ModelBackoff is %v: want ≥ 0", c.ModelBackoff)
	case c.ModelMaxWait < 0:
		return fmt.Errorf("config: ModelMaxWait is %v: want ≥ 0", c.ModelMaxWait)
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
	for _, g := range c.Grants {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("config: Grants: %w", err)
		}
	}
	return nil
}
