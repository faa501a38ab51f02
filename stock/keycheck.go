package stock

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// keyChecks refuse a key's value that cannot work, each saying it under
// name (the key, or the flag that gave it), in the order Settings.check
// runs them. The one check of each key, for files and flags alike.
var keyChecks = []struct {
	key   string
	check func(s Settings, name string) error
}{
	{"worktrees", func(s Settings, name string) error {
		switch s.Worktrees {
		case "", facts.WorktreesParallel, facts.WorktreesAlways, facts.WorktreesOff:
			return nil
		}
		return fmt.Errorf("%s %q: want %s, %s or %s", name, s.Worktrees, facts.WorktreesParallel, facts.WorktreesAlways, facts.WorktreesOff)
	}},
	{"worktree_merge", func(s Settings, name string) error {
		switch s.WorktreeMerge {
		case "", facts.WorktreeMergeAsk, facts.WorktreeMergeBranch:
			return nil
		}
		return fmt.Errorf("%s %q: want %s or %s", name, s.WorktreeMerge, facts.WorktreeMergeAsk, facts.WorktreeMergeBranch)
	}},
	{"max_cost", func(s Settings, name string) error {
		if s.MaxCost != nil && (math.IsNaN(*s.MaxCost) || math.IsInf(*s.MaxCost, 0) || *s.MaxCost < 0) {
			return fmt.Errorf("%s %v: want US dollars ≥ 0, or 0 for no budget", name, *s.MaxCost)
		}
		return nil
	}},
	{"max_tokens", func(s Settings, name string) error {
		if s.MaxTokens != nil && *s.MaxTokens < 0 {
			return fmt.Errorf("%s %d: want a number of tokens ≥ 0, or 0 for no budget", name, *s.MaxTokens)
		}
		return nil
	}},
	{"loop_guard", func(s Settings, name string) error {
		if s.LoopGuard != nil && *s.LoopGuard < 0 {
			return fmt.Errorf("%s %d: want a number of calls, or 0 for no guard", name, *s.LoopGuard)
		}
		return nil
	}},
	{"prices", func(s Settings, name string) error {
		for model, p := range s.Prices {
			if p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 {
				return fmt.Errorf("%s %q: a price below 0", name, model)
			}
		}
		return nil
	}},
	{"network_allow", func(s Settings, name string) error {
		if err := sandbox.CheckAllow(s.NetworkAllow); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}},
	{"sandbox", func(s Settings, name string) error {
		if _, err := sandbox.ParseMode(s.Sandbox); err != nil && s.Sandbox != "" {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}},
	{"approve", func(s Settings, name string) error {
		switch s.Approve {
		case "", "ask", "writes", "all":
			return nil
		}
		return fmt.Errorf("%s %q: want ask, writes or all", name, s.Approve)
	}},
	{"max_turns", func(s Settings, name string) error {
		if s.MaxTurns != nil && *s.MaxTurns < 0 {
			return fmt.Errorf("%s %d: want a number of model turns, or 0 for no bound", name, *s.MaxTurns)
		}
		return nil
	}},
	{"max_steps", func(s Settings, name string) error {
		if s.MaxSteps != nil && *s.MaxSteps < 1 {
			return fmt.Errorf("%s %d: want a number of steps, at least 1", name, *s.MaxSteps)
		}
		return nil
	}},
	{"context_window", func(s Settings, name string) error {
		if s.ContextWindow != nil && *s.ContextWindow < 0 {
			return fmt.Errorf("%s %d: want the model's context window in tokens, or 0 for not known", name, *s.ContextWindow)
		}
		return nil
	}},
	{"instructions_max_bytes", func(s Settings, name string) error {
		if s.InstructionsMaxBytes != nil && *s.InstructionsMaxBytes < 1 {
			return fmt.Errorf("%s %d: want a number of bytes, at least 1", name, *s.InstructionsMaxBytes)
		}
		return nil
	}},
	{"max_output_tokens", func(s Settings, name string) error {
		if s.MaxOutputTokens != nil && *s.MaxOutputTokens < 0 {
			return fmt.Errorf("%s %d: want a number of tokens, or 0 for the provider's default", name, *s.MaxOutputTokens)
		}
		return nil
	}},
}

// CheckedFlags is FlagSource(s, set...) with the values of the keys in
// set checked as a settings file's are: a value that cannot work is an
// error wrapping ErrBadSettings that names the flag that gave it
// (max_turns is --max-turns).
func CheckedFlags(s Settings, set ...string) (SettingsSource, error) {
	for _, c := range keyChecks {
		if !slices.Contains(set, c.key) {
			continue
		}
		if err := c.check(s, "--"+strings.ReplaceAll(c.key, "_", "-")); err != nil {
			return SettingsSource{}, badSettings(err)
		}
	}
	return FlagSource(s, set...), nil
}
