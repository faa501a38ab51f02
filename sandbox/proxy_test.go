package sandbox_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// The allow-list in the spec: validated, recorded only when it is the
// network's rule, and the proxy's variables set over whatever the
// harness's environment says.
func TestSpecNetworkAllow(t *testing.T) {
	spec := sandbox.Spec{Mode: sandbox.WorkspaceWrite, Workspace: "/w", NetworkAllow: []string{"http://evil.test/"}}
	require.ErrorIs(t, spec.Validate(), sandbox.ErrInvalidSpec)
	spec.NetworkAllow = []string{"github.com", "*.golang.org:443"}
	require.NoError(t, spec.Validate())
	require.True(t, spec.Proxied())
	require.Equal(t, spec.NetworkAllow, spec.Record().NetworkAllow)

	spec.Env = []string{"HTTP_PROXY", "NO_PROXY"}
	env := spec.Environ([]string{"HTTP_PROXY=http://attacker:1", "https_proxy=http://attacker:2", "NO_PROXY=*", "PATH=/bin"}, "/tmp/x")
	for _, n := range sandbox.ProxyEnv {
		require.Contains(t, env, n+"="+sandbox.ProxyURL)
	}
	require.NotContains(t, env, "HTTP_PROXY=http://attacker:1")
	require.NotContains(t, env, "https_proxy=http://attacker:2")
	require.Contains(t, env, "NO_PROXY=*") // the person's own choice: it only sends clients straight to nothing
	require.Subset(t, spec.EnvNames(), sandbox.ProxyEnv)

	for _, s := range []sandbox.Spec{
		{Mode: sandbox.WorkspaceWrite, Workspace: "/w", Network: true, NetworkAllow: []string{"github.com"}},
		{Mode: sandbox.Off, Workspace: "/w", NetworkAllow: []string{"github.com"}},
	} {
		require.False(t, s.Proxied())
		require.Nil(t, s.Record().NetworkAllow)
		require.NotContains(t, s.Environ([]string{"PATH=/bin"}, "/tmp/x"), "HTTP_PROXY="+sandbox.ProxyURL)
	}
}
