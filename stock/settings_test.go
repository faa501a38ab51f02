package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/stock"
)

// A relative $XDG_CONFIG_HOME or $HOME is no place for the user's file:
// it would be relative to where harness runs, a directory the repository
// may hold, and a repository's file would then count as the person's own
// (found by rev-trust13: `XDG_CONFIG_HOME=cfg harness config` showed the
// repository's cfg/harness/config.json as the user's, approve all).
func TestUserSettingsFileIgnoresRelativePlaces(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/p"}, "/x/cfg/harness/config.json"},
		{map[string]string{"XDG_CONFIG_HOME": "cfg", "HOME": "/home/p"}, "/home/p/.config/harness/config.json"},
		{map[string]string{"XDG_CONFIG_HOME": "./cfg", "HOME": "home"}, ""},
		{map[string]string{"HOME": "home"}, ""},
		{map[string]string{"HOME": "/home/p"}, "/home/p/.config/harness/config.json"},
		{map[string]string{}, ""},
	} {
		require.Equal(t, tc.want, stock.UserSettingsFile(env(tc.env)), "%v", tc.env)
	}
}
