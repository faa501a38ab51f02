package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// A plain .git directory whose commondir names the common directory
// elsewhere in the workspace: a command cannot make the commondir name a
// directory of its own (with a config that runs an fsmonitor).
func TestPlainGitCommondirReadOnly(t *testing.T) {
	ws, _ := gitRepo(t)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "c1"), 0o755))
	for _, n := range []string{"objects", "refs", "config", "hooks", "info"} {
		require.NoError(t, os.Rename(filepath.Join(ws, ".git", n), filepath.Join(ws, "c1", n)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git/commondir"), []byte("../c1\n"), 0o644))
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	got, _ := run(t, spec, "mkdir -p evil && cp -r c1/objects c1/refs evil/ && printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > evil/config && echo ../evil > .git/commondir; echo rc=$?")
	t.Log(got)
	requireUnchanged(t, filepath.Join(ws, ".git/commondir"), "../c1\n")
}

// .git/config.worktree, which git reads as config once
// extensions.worktreeConfig is set, is read-only: existing, and missing
// (the sandbox makes it, empty, as it makes a missing config).
func TestPlainGitConfigWorktreeReadOnly(t *testing.T) {
	t.Run("existing", func(t *testing.T) {
		ws, g := gitRepo(t)
		g(ws, "config", "extensions.worktreeConfig", "true")
		g(ws, "config", "--worktree", "core.sparseCheckout", "false")
		before, err := os.ReadFile(filepath.Join(ws, ".git/config.worktree"))
		require.NoError(t, err)
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' >> .git/config.worktree; echo rc=$?")
		t.Log(got)
		requireUnchanged(t, filepath.Join(ws, ".git/config.worktree"), string(before))
	})
	t.Run("missing", func(t *testing.T) {
		ws, g := gitRepo(t)
		g(ws, "config", "extensions.worktreeConfig", "true")
		spec, err := sandbox.Default(ws, "")
		require.NoError(t, err)
		got, _ := run(t, spec, "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > .git/config.worktree; echo rc=$?")
		t.Log(got)
		data, err := os.ReadFile(filepath.Join(ws, ".git/config.worktree"))
		require.NoError(t, err)
		require.Empty(t, string(data))
		// git still reads the configuration.
		g(ws, "config", "--get", "extensions.worktreeConfig")
	})
}
