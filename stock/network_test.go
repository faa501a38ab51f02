package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// An allow-list widens what reaches more hosts than the weaker layers
// give, and narrows otherwise.
func TestWidensNetworkAllow(t *testing.T) {
	off := stock.Settings{}
	on := stock.Settings{Network: true}
	list := stock.Settings{NetworkAllow: []string{"*.example.com", "github.com:443", "127.0.0.1:8080"}}
	for _, c := range []struct {
		name string
		key  string
		cur  stock.Settings
		s    stock.Settings
		want bool
	}{
		{"a list over off", "network_allow", off, stock.Settings{NetworkAllow: []string{"github.com"}}, true},
		{"a list over on", "network_allow", on, stock.Settings{NetworkAllow: []string{"github.com"}}, false},
		{"a sub-list", "network_allow", list, stock.Settings{NetworkAllow: []string{"a.example.com", "github.com:443"}}, false},
		{"the same list", "network_allow", list, list, false},
		{"another host", "network_allow", list, stock.Settings{NetworkAllow: []string{"evil.test"}}, true},
		{"any port of a host allowed on one", "network_allow", list, stock.Settings{NetworkAllow: []string{"github.com"}}, true},
		{"the domain itself under its wildcard", "network_allow", list, stock.Settings{NetworkAllow: []string{"example.com"}}, true},
		{"an address named by a name", "network_allow", list, stock.Settings{NetworkAllow: []string{"localhost:8080"}}, true},
		{"another port of the address", "network_allow", list, stock.Settings{NetworkAllow: []string{"127.0.0.1:22"}}, true},
		{"an empty list over a list with network on", "network_allow", stock.Settings{Network: true, NetworkAllow: list.NetworkAllow}, stock.Settings{}, true},
		{"an empty list over a list", "network_allow", list, stock.Settings{}, false},
		{"network on over a list", "network", list, on, true},
		{"network off over a list", "network", list, off, false},
		{"a rule that cannot be read", "network_allow", list, stock.Settings{NetworkAllow: []string{"http://x/"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, stock.Widens(c.key, c.cur, c.s))
		})
	}
}

// A project file narrows the user's list without trust; a host it adds
// is left out until trusted; network on from an untrusted file does not
// drop the list. config's view names each host's layer.
func TestNetworkAllowMerge(t *testing.T) {
	user := stock.SettingsSource{Scope: stock.ScopeUser, Path: "/u/config.json", Exists: true, Trusted: true,
		Settings: stock.Settings{NetworkAllow: []string{"github.com", "*.golang.org"}}, Set: []string{"network_allow"}}
	narrow := stock.SettingsSource{Scope: stock.ScopeProject, Path: "/w/.harness/project.json", Exists: true, Inside: true,
		Settings: stock.Settings{NetworkAllow: []string{"proxy.golang.org"}}, Set: []string{"network_allow"}}
	l := stock.Merge(user, narrow)
	require.Equal(t, []string{"proxy.golang.org"}, l.Settings.NetworkAllow)
	require.Equal(t, stock.NetworkView{Rule: stock.NetworkAllowList, Spelling: "allow=proxy.golang.org",
		Allow: []stock.AllowSource{{Host: "proxy.golang.org", Scope: stock.ScopeProject, Path: "/w/.harness/project.json"}}}, l.NetworkView())

	add := narrow
	add.Settings = stock.Settings{Network: true, NetworkAllow: []string{"github.com", "evil.test"}}
	add.Set = []string{"network", "network_allow"}
	l = stock.Merge(user, add)
	require.Equal(t, []string{"github.com", "*.golang.org"}, l.Settings.NetworkAllow)
	require.Equal(t, []string{"network", "network_allow"}, l.Sources[1].Ignored)
	require.Equal(t, stock.NetworkRule{Kind: stock.NetworkAllowList, Allow: []string{"github.com", "*.golang.org"}}, stock.NetworkRuleOf(l.Settings))
	v := l.NetworkView()
	require.Equal(t, []stock.AllowSource{{Host: "evil.test", Scope: stock.ScopeProject, Path: "/w/.harness/project.json"}}, v.Ignored)
	require.Equal(t, stock.ScopeUser, v.Allow[0].Scope)

	add.Trusted = true
	l = stock.Merge(user, add)
	require.Equal(t, []string{"github.com", "evil.test"}, l.Settings.NetworkAllow)

	// The command line's --network opens the network whole; with a
	// list of its own, the list.
	flag := stock.FlagSource(stock.Settings{Network: true}, "network")
	l = stock.Merge(user, flag)
	require.Equal(t, stock.NetworkRule{Kind: stock.NetworkOn}, stock.NetworkRuleOf(l.Settings))
	flag = stock.FlagSource(stock.Settings{NetworkAllow: []string{"a.test"}}, "network_allow")
	l = stock.Merge(user, flag)
	require.Equal(t, []string{"a.test"}, l.Settings.NetworkAllow)
}
