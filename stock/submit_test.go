package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/stock"
)

// A thread submitted records the policy the session starts threads with
// as its own when a layer names a rule, or when the command says it
// named one (an --approve ask that names no rule: still the person's
// word); otherwise none, and each worker's own decides.
func TestSubmitThread(t *testing.T) {
	cases := []struct {
		name     string
		flags    stock.SettingsSource
		given    bool
		recorded bool
	}{
		{"none", stock.SettingsSource{}, false, false},
		{"a flag's rule", stock.FlagSource(stock.Settings{Deny: []string{"run_command:rm *"}}, "deny"), false, true},
		{"named, no rule", stock.SettingsSource{}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			place, err := stock.Locate(t.TempDir(), "")
			require.NoError(t, err)
			s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: sessionEnv(t, ""), Flags: c.flags, Create: true})
			require.NoError(t, err)
			defer s.Close()
			id, seq, err := s.SubmitThread(ctx, "", "Fix the tests", "ana", c.given)
			require.NoError(t, err)
			require.Equal(t, "t1", id)
			require.Equal(t, uint64(1), seq)
			rt, free, err := s.Runtime(stock.WithoutObserver())
			require.NoError(t, err)
			defer free()
			own, _, ok, err := drive.ThreadPolicy(ctx, rt.Thread(s.Stock.Actor, id))
			require.NoError(t, err)
			require.Equal(t, c.recorded, ok)
			if c.flags.Settings.Deny != nil {
				require.Equal(t, []string{"run_command:rm *"}, own.Deny)
			}
		})
	}

	// A rule that does not parse records nothing.
	place, err := stock.Locate(t.TempDir(), "")
	require.NoError(t, err)
	s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: sessionEnv(t, ""), Create: true,
		Flags: stock.FlagSource(stock.Settings{Allow: []string{":x"}}, "allow")})
	if err == nil {
		defer s.Close()
		_, _, err = s.SubmitThread(ctx, "", "Fix the tests", "ana", true)
	}
	require.ErrorIs(t, err, stock.ErrBadSettings)
}
