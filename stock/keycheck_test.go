package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A flag's value is checked by the check a settings file's value of the
// key gets, and the error names the flag; a key not given is not checked.
func TestCheckedFlags(t *testing.T) {
	neg, negCost := -1, -0.5
	for _, c := range []struct {
		s    stock.Settings
		key  string
		want string
	}{
		{stock.Settings{Worktrees: "sometimes"}, "worktrees", `--worktrees "sometimes": want parallel, always or off`},
		{stock.Settings{WorktreeMerge: "push"}, "worktree_merge", `--worktree-merge "push": want ask or branch`},
		{stock.Settings{MaxTurns: &neg}, "max_turns", "--max-turns -1: want a number of model turns, or 0 for no bound"},
		{stock.Settings{MaxSteps: &neg}, "max_steps", "--max-steps -1: want a number of steps, at least 1"},
		{stock.Settings{MaxCost: &negCost}, "max_cost", "--max-cost -0.5: want US dollars ≥ 0, or 0 for no budget"},
		{stock.Settings{Sandbox: "loose"}, "sandbox", "--sandbox: "},
		{stock.Settings{Approve: "sometimes"}, "approve", `--approve "sometimes": want ask, writes or all`},
		{stock.Settings{NetworkAllow: []string{"*"}}, "network_allow", "--network-allow: "},
	} {
		_, err := stock.CheckedFlags(c.s, c.key)
		require.ErrorIs(t, err, stock.ErrBadSettings, c.key)
		require.Contains(t, err.Error(), c.want)
		src, err := stock.CheckedFlags(c.s)
		require.NoError(t, err, "%s not given: not checked", c.key)
		require.Equal(t, stock.ScopeFlag, src.Scope)
	}
	two := 2
	src, err := stock.CheckedFlags(stock.Settings{Worktrees: "off", MaxTurns: &two}, "worktrees", "max_turns")
	require.NoError(t, err)
	require.True(t, src.Trusted)
	require.Equal(t, []string{"worktrees", "max_turns"}, src.Set)
}
