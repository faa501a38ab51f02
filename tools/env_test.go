//go:build unix

package tools_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/tools"
)

// commandVars runs env through run_command, a real process, and returns
// the variables it saw.
func commandVars(t *testing.T, s *tools.Set) map[string]string {
	t.Helper()
	rep := call(t, s, tools.RunCommand, `{"command": "env"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	vars := map[string]string{}
	for line := range strings.SplitSeq(rep.Stdout, "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			vars[name] = value
		}
	}
	return vars
}

// secretEnv sets, in the test's environment, what a person's shell holds
// that no command may see: the providers' keys, tokens, headers, a base
// URL with a password in it.
func secretEnv(t *testing.T) []string {
	secrets := []string{
		"OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_CUSTOM_HEADERS",
		"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
		"SSH_AUTH_SOCK", "HARNESS_TEST_UNLISTED",
	}
	for _, name := range secrets {
		t.Setenv(name, "SECRET-"+name)
	}
	t.Setenv("OPENAI_BASE_URL", "https://user:SECRET-PASSWORD@proxy.example/v1")
	t.Setenv("ANTHROPIC_BASE_URL", "https://SECRET-TOKEN@proxy.example")
	return append(secrets, "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")
}

// modes are the sandbox modes a command's environment is the same in.
var modes = []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.ReadOnly, sandbox.Off}

// The environment is an allow-list, in every mode: a command gets PATH,
// HOME, the locale, the Go toolchain's variables — and nothing else of the
// harness's, whatever it is called. TMPDIR is the command's own, and
// GOCACHE the workspace's build cache in the sandbox, the user's own in
// mode off.
func TestRunCommandEnvAllowList(t *testing.T) {
	secrets := secretEnv(t)
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_ALL", "C.UTF-8")
	t.Setenv("GOFLAGS", "-count=1")
	t.Setenv("GOCACHE", "/the/users/own/cache")
	t.Setenv("TMPDIR", os.TempDir())
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			s, _ := workspace(t, nil, tools.WithSandbox(sandbox.Spec{Mode: mode, GoCache: filepath.Join(t.TempDir(), "go-build")}))
			vars := commandVars(t, s)
			for _, name := range secrets {
				require.NotContains(t, vars, name)
			}
			for name, value := range vars {
				require.NotContains(t, value, "SECRET", "variable %s", name)
				allowed := slices.ContainsFunc(s.Sandbox().EnvNames(), func(a string) bool {
					p, prefix := strings.CutSuffix(a, "*")
					return name == a || prefix && strings.HasPrefix(name, p)
				})
				// sh itself sets PWD (and may set SHLVL, _ and OLDPWD).
				require.True(t, allowed || slices.Contains([]string{"PWD", "OLDPWD", "SHLVL", "_"}, name), "variable %s is not on the allow-list", name)
			}
			require.Equal(t, os.Getenv("PATH"), vars["PATH"])
			require.Equal(t, os.Getenv("HOME"), vars["HOME"])
			require.Equal(t, "C.UTF-8", vars["LC_ALL"], "LC_* passes")
			require.Equal(t, "-count=1", vars["GOFLAGS"])
			if mode == sandbox.Off {
				require.Equal(t, "/the/users/own/cache", vars["GOCACHE"], "off: the user's own cache, never one a sandboxed command writes")
			} else {
				require.Equal(t, s.Sandbox().GoCache, vars["GOCACHE"], "the workspace's build cache, not the user's")
			}
			tmp := vars["TMPDIR"]
			require.Regexp(t, `/harness-cmd-\d+$`, tmp, "a private temporary directory")
			require.NoDirExists(t, tmp, "removed after the command")
		})
	}
}

// Spec.Env adds names to the allow-list: names, and prefixes ending in
// "*".
func TestRunCommandEnvAllowMore(t *testing.T) {
	secretEnv(t)
	t.Setenv("HARNESS_TEST_KEEP", "kept")
	t.Setenv("MYAPP_ONE", "1")
	t.Setenv("MYAPP_TWO", "2")
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			s, _ := workspace(t, nil, tools.WithSandbox(sandbox.Spec{Mode: mode, Env: []string{"HARNESS_TEST_KEEP", "MYAPP_*"}}))
			vars := commandVars(t, s)
			require.Equal(t, "kept", vars["HARNESS_TEST_KEEP"])
			require.Equal(t, "1", vars["MYAPP_ONE"])
			require.Equal(t, "2", vars["MYAPP_TWO"])
			require.NotContains(t, vars, "HARNESS_TEST_UNLISTED")
			require.NotContains(t, vars, "OPENAI_API_KEY")
		})
	}
	tool, _ := func() (tools.Tool, bool) {
		s, _ := workspace(t, nil)
		return s.Lookup(tools.RunCommand)
	}()
	require.Contains(t, tool.Schema().Description, "The environment holds only PATH, HOME")
}
