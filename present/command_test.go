package present_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/present"
)

func TestCommandOf(t *testing.T) {
	c, ok := present.CommandOf("run_command", `{"command":"ls\n\u001b[2Jrm x","timeout_seconds":1.5}`, time.Minute)
	require.True(t, ok)
	require.Equal(t, "timeout 1.5s", c.Timeout())
	require.Equal(t, []string{"ls", `\x1b[2Jrm x`}, c.Lines())
	c, ok = present.CommandOf("run_command", `{"command":"ls"}`, 2*time.Minute)
	require.True(t, ok)
	require.Equal(t, "timeout 120s (the default)", c.Timeout())
	c, _ = present.CommandOf("run_command", `{"command":"ls"}`, 0)
	require.Equal(t, "the default timeout", c.Timeout())
	for _, in := range []struct{ tool, args string }{{"write_file", `{"command":"ls"}`}, {"run_command", `{"cmd":"ls"}`}, {"run_command", `not json`}, {"run_command", `{"command":7}`}} {
		_, ok := present.CommandOf(in.tool, in.args, 0)
		require.False(t, ok, "%s %s", in.tool, in.args)
	}
}
