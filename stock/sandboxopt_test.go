package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/stock"
)

// The stock's sandbox options adjust the spec the stock builds, never
// replace it: the mode and the network change, the store stays hidden.
func TestStockSandboxOptions(t *testing.T) {
	root := t.TempDir()
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		opts    []stock.Option
		mode    sandbox.Mode
		network bool
		allow   []string
	}{
		{name: "defaults", mode: sandbox.WorkspaceWrite},
		{name: "read-only", opts: []stock.Option{stock.WithSandboxMode(sandbox.ReadOnly)}, mode: sandbox.ReadOnly},
		{name: "network", opts: []stock.Option{stock.WithNetwork(true), stock.WithNetworkAllow([]string{"github.com"})}, mode: sandbox.WorkspaceWrite, network: true},
		{name: "allow-list", opts: []stock.Option{stock.WithNetworkAllow([]string{"github.com"})}, mode: sandbox.WorkspaceWrite, allow: []string{"github.com"}},
		{name: "off", opts: []stock.Option{stock.WithSandboxMode(sandbox.Off), stock.WithNetwork(false)}, mode: sandbox.Off},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := stock.NewStock(p, harness.Config{}, tc.opts...)
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, tc.mode, s.Sandbox.Mode)
			require.Equal(t, tc.network, s.Sandbox.Network)
			require.Equal(t, tc.allow, s.Sandbox.NetworkAllow)
			require.Contains(t, s.Sandbox.Hidden, p.Store, "the store stays hidden")
		})
	}
}
