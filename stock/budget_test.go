package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A workspace's file may set or lower the tree's budget; raising it or
// taking it away widens, and is left out until the file is trusted.
func TestBudgetFromTheWorkspace(t *testing.T) {
	p, env, write := settingsPlace(t)
	write(p.ProjectSettingsFile(), `{"max_cost": 4, "max_tokens": 1000}`)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	require.Equal(t, 4.0, *l.Settings.MaxCost, "a first budget narrows")
	require.EqualValues(t, 1000, *l.Settings.MaxTokens)

	write(stock.UserSettingsFile(env), `{"max_cost": 2, "max_tokens": 500}`)
	write(p.ProjectSettingsFile(), `{"max_cost": 100, "max_tokens": 0}`)
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	require.Equal(t, 2.0, *l.Settings.MaxCost, "a raise is left out untrusted")
	require.EqualValues(t, 500, *l.Settings.MaxTokens, "no budget is left out untrusted")

	write(p.ProjectSettingsFile(), `{"max_cost": 1.5}`)
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	require.Equal(t, 1.5, *l.Settings.MaxCost, "a lower budget narrows")

	write(p.ProjectSettingsFile(), `{"max_cost": -1}`)
	_, err = p.LoadLayered(env)
	require.ErrorContains(t, err, "max_cost -1")
}
