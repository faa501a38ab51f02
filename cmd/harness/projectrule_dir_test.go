package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProjectRuleOfAnotherDirectory: a rule kept for the workspace's
// path but given for another directory once there (the repository
// removed and cloned again) does not approve a command, and harness
// config says why it does not apply.
func TestProjectRuleOfAnotherDirectory(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "harness"), 0o700))
	dir := workspace(t, map[string]string{"b.jsonl": goTestB})
	real, _ := filepath.EvalSymlinks(dir)
	kept := `{"trusted": [], "rules": [{"workspace": ` + strconvQuote(real) + `, "allow": "run_command:go test *", "dir": "1:2:3.4"}]}`
	file := filepath.Join(xdg, "harness", "trusted.json")
	require.NoError(t, os.WriteFile(file, []byte(kept), 0o600))
	env := []string{"NO_COLOR=1", "HARNESS_STORE=", "XDG_CONFIG_HOME=" + xdg}

	out, stderr, _ := harnessEnv(t, dir, env, "config")
	require.Contains(t, out, "workspace "+file+": 1 rule kept for this path was given for another directory there", out+stderr)

	out, stderr, _ = harnessEnv(t, dir, env, "run", "--model", "scripted:b.jsonl", "Test b")
	require.NotContains(t, out, "approved by policy", out+stderr)
	require.Contains(t, out, "parked: thread t1 waits for a person", out+stderr)
}
