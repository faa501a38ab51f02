package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// The network rules of a command line: allow-lists add up, on or off is
// one word, and on or off with an allow-list of either spelling is
// refused, whichever comes first; a bad host is refused as a bad rule.
func TestNetworkFlags(t *testing.T) {
	var n stock.NetworkFlags
	require.Equal(t, "off", n.Spelling())
	require.NoError(t, n.Add("allow=github.com"))
	require.NoError(t, n.Add("allow=proxy.golang.org:443,*.example.com"))
	require.Equal(t, "allow=github.com,proxy.golang.org:443,*.example.com", n.Spelling())
	require.ErrorIs(t, n.Add("on"), stock.ErrNetworkBoth)
	require.ErrorIs(t, n.Add("allow=a,,b"), stock.ErrNetworkRule)
	n.Older = []string{"go.dev"}
	given, allow, err := n.Given([]string{"model"})
	require.NoError(t, err)
	require.Equal(t, []string{"model", "network_allow"}, given)
	require.Equal(t, []string{"github.com", "proxy.golang.org:443", "*.example.com", "go.dev"}, allow)

	var on stock.NetworkFlags
	require.NoError(t, on.Add("on"))
	require.Equal(t, "on", on.Spelling())
	require.ErrorIs(t, on.Add("allow=github.com"), stock.ErrNetworkBoth)
	given, allow, err = on.Given(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"network"}, given)
	require.Empty(t, allow)
	require.NoError(t, on.Add("off"))
	require.False(t, on.On)
	given, _, err = on.Given(nil)
	require.NoError(t, err)
	require.Empty(t, given)

	// --network off --network-allow github.com: one or the other.
	off := stock.NetworkFlags{Older: []string{"github.com"}}
	require.NoError(t, off.Add("off"))
	_, _, err = off.Given(nil)
	require.ErrorIs(t, err, stock.ErrNetworkBoth)
	require.ErrorContains(t, err, "off and allow=github.com")
}
