package harness

// Names the package's tests use that a person composing a harness does not
// need.
const (
	// CompactPrompt is the system prompt of a compaction turn.
	CompactPrompt = compactPrompt
	// DelegateTool is the name of the delegation tool.
	DelegateTool = delegateTool
)

// WithoutReserve makes the runtime write logs as it did before budgets
// reserved a turn: system.configured records no BudgetReserve.
func WithoutReserve() Option { return func(c *Config) { c.noReserve = true } }

// HooksOneAtATime configures threads whose system.configured records no
// HooksTogether: their before_tool hooks run one at a time, as in logs
// written before.
func HooksOneAtATime() Option { return func(c *Config) { c.hooksOneAtATime = true } }

// AfterHooksOneAtATime configures threads whose system.configured records
// no AfterHooksTogether: their after_tool hooks run one at a time, as in
// logs written before.
func AfterHooksOneAtATime() Option { return func(c *Config) { c.afterHooksOneAtATime = true } }

// WithoutTurnsWait makes the runtime write logs as it did before a bound
// in turns waited: the BudgetReserve recorded does not say Turns.
func WithoutTurnsWait() Option { return func(c *Config) { c.noTurnsWait = true } }
