package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// A command has IPC and UTS namespaces of its own, as bwrap
// --unshare-all gives: no System V shared memory, semaphore or message
// queue of the harness's user is reachable from it, and a hostname it
// sets is its own. So with the network too, and whether the helper is
// harness-sandbox (a spare or one started for it) or harness
// re-executed.
func TestCommandHasIPCAndUTSOfItsOwn(t *testing.T) {
	var host []string
	for _, ns := range []string{"ipc", "uts"} {
		l, err := os.Readlink("/proc/self/ns/" + ns)
		require.NoError(t, err)
		host = append(host, l)
	}
	check := func(t *testing.T) {
		spec := defaultSpec(t)
		withNet := spec.Clone()
		withNet.Network = true
		for _, s := range []sandbox.Spec{spec, withNet, spec} {
			out, e := run(t, s, "readlink /proc/self/ns/ipc /proc/self/ns/uts")
			require.Equal(t, 0, e.Code, out)
			got := strings.Fields(out)
			require.Len(t, got, 2, out)
			require.NotEqual(t, host[0], got[0], "the host's IPC namespace")
			require.NotEqual(t, host[1], got[1], "the host's UTS namespace")
		}
	}
	t.Run("re-executed", func(t *testing.T) {
		chosen, _ := sandbox.UseHelper(t, filepath.Join(t.TempDir(), sandbox.HelperName))
		require.False(t, chosen)
		check(t)
	})
	t.Run("harness-sandbox", func(t *testing.T) {
		if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
			t.Fatal(why)
		}
		check(t)
	})
}
