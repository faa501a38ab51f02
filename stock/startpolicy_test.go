package stock_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/stock"
)

// A thread records the policy it starts with when a layer names a rule,
// or the command did; else it records none (the default is what a thread
// without one has).
func TestRecordStartingPolicy(t *testing.T) {
	for _, c := range []struct {
		name, user string
		given      bool
		want       bool
		deny       []string
	}{
		{"a file names a rule", `{"deny": ["run_command:rm *"]}`, false, true, []string{"run_command:rm *"}},
		{"none named", ``, false, false, nil},
		{"the command named one", ``, true, true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			place, err := stock.Locate(t.TempDir(), "")
			require.NoError(t, err)
			s, err := stock.OpenSession(ctx, place, stock.SessionOptions{Getenv: sessionEnv(t, c.user), Create: true})
			require.NoError(t, err)
			defer s.Close()
			_, _, err = s.Submit(ctx, "t", "Make the TTL 300", nil)
			require.NoError(t, err)
			rt, free, err := s.Runtime(stock.WithoutObserver())
			require.NoError(t, err)
			defer free()
			th := rt.Thread(s.Stock.Actor, "t")

			require.NoError(t, s.RecordStartingPolicy(ctx, th, "ana", c.given))
			p, _, ok, err := drive.ThreadPolicy(ctx, th)
			require.NoError(t, err)
			require.Equal(t, c.want, ok)
			if ok {
				require.Equal(t, "ana", p.By)
				require.Equal(t, c.deny, p.Deny)
			}
		})
	}
}
