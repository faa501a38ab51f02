package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A command line's layer sets the keys of the flags given, in one order,
// whatever order they were given in; a value not given, a flag that is no
// setting, and a text or list given empty are left to the files; a value
// that cannot work names its flag.
func TestFlagLayer(t *testing.T) {
	zero, three, cost := 0, 3, 1.5
	all := stock.Settings{Model: "scripted:s.jsonl", Approve: "writes", Allow: []string{"read_file"}, Deny: []string{"write_file:.git/*"},
		MaxTurns: &three, MaxSteps: &three, ContextWindow: &zero, Sandbox: "read-only", Network: true, MaxCost: &cost}
	src, err := stock.FlagLayer(all, "max-cost", "no-input", "max-turns", "approve", "output")
	require.NoError(t, err)
	require.True(t, src.Trusted)
	require.Equal(t, []string{"approve", "max_turns", "max_cost"}, src.Set)
	require.Equal(t, stock.Settings{Approve: "writes", MaxTurns: &three, MaxCost: &cost}, src.Settings, "only what was given")

	src, err = stock.FlagLayer(stock.Settings{Allow: nil, Model: "", NetworkAllow: nil}, "allow", "model", "network-allow")
	require.NoError(t, err)
	require.Equal(t, []string{"network_allow"}, src.Set, "an empty list of hosts is none; an empty model or pattern list gives nothing")

	src, err = stock.FlagLayer(all, "max_turns")
	require.NoError(t, err)
	require.Equal(t, []string{"max_turns"}, src.Set, "a settings key names it too")

	neg := -1
	_, err = stock.FlagLayer(stock.Settings{MaxTurns: &neg, Approve: "sometimes"}, "max-turns")
	require.ErrorIs(t, err, stock.ErrBadSettings)
	require.Contains(t, err.Error(), "--max-turns -1")
	_, err = stock.FlagLayer(stock.Settings{MaxTurns: &neg, Approve: "sometimes"}, "approve")
	require.ErrorContains(t, err, `--approve "sometimes"`)
	_, err = stock.FlagLayer(stock.Settings{MaxTurns: &neg})
	require.NoError(t, err, "a bad value not given is not checked")
}
