package stock

import (
	"slices"
	"strings"
)

// flagKeys are the settings a command line's flags may give, in the order
// their layer names them.
var flagKeys = []string{"model", "approve", "allow", "deny", "max_turns", "max_steps", "context_window", "sandbox",
	"network", "network_allow", "worktrees", "worktree_merge", "max_output_tokens", "max_cost", "max_tokens"}

// FlagLayer is the layer of settings a command line's flags lay over the
// files: s holds each flag's value, and given names the flags given, by
// flag name ("max-turns") or settings key ("max_turns"). Only the keys of
// the flags given are set — a flag that is no setting is left out, and so
// is a text or a list of patterns given empty, which leaves the setting to
// the files — each checked as a settings file's value is (CheckedFlags).
func FlagLayer(s Settings, given ...string) (SettingsSource, error) {
	var only Settings
	var set []string
	for _, key := range flagKeys {
		if slices.ContainsFunc(given, func(name string) bool { return strings.ReplaceAll(name, "-", "_") == key }) && only.take(s, key) {
			set = append(set, key)
		}
	}
	return CheckedFlags(only, set...)
}

// take sets the key of o to s's value, reporting false for a text or a
// list of patterns that is empty (the flag gives nothing).
func (o *Settings) take(s Settings, key string) bool {
	switch key {
	case "model":
		o.Model = s.Model
		return s.Model != ""
	case "approve":
		o.Approve = s.Approve
		return s.Approve != ""
	case "allow":
		o.Allow = s.Allow
		return len(s.Allow) > 0
	case "deny":
		o.Deny = s.Deny
		return len(s.Deny) > 0
	case "max_turns":
		o.MaxTurns = s.MaxTurns
		return s.MaxTurns != nil
	case "max_steps":
		o.MaxSteps = s.MaxSteps
		return s.MaxSteps != nil
	case "context_window":
		o.ContextWindow = s.ContextWindow
		return s.ContextWindow != nil
	case "sandbox":
		o.Sandbox = s.Sandbox
		return s.Sandbox != ""
	case "network":
		o.Network = s.Network
	case "network_allow":
		o.NetworkAllow = s.NetworkAllow // given empty: no host
	case "worktrees":
		o.Worktrees = s.Worktrees
		return s.Worktrees != ""
	case "worktree_merge":
		o.WorktreeMerge = s.WorktreeMerge
		return s.WorktreeMerge != ""
	case "max_output_tokens":
		o.MaxOutputTokens = s.MaxOutputTokens
		return s.MaxOutputTokens != nil
	case "max_cost":
		o.MaxCost = s.MaxCost
		return s.MaxCost != nil
	case "max_tokens":
		o.MaxTokens = s.MaxTokens
		return s.MaxTokens != nil
	}
	return true
}
