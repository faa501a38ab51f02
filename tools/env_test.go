//go:build unix

package tools_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
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

// run_command leaves the model providers' credentials, and any *_API_KEY,
// out of the command's environment, and keeps the rest.
func TestRunCommandDropsCredentials(t *testing.T) {
	secrets := []string{
		"OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
		"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "Mixed_Api_Key",
	}
	for _, name := range secrets {
		t.Setenv(name, "SECRET-"+name)
	}
	t.Setenv("HARNESS_TEST_KEEP", "kept")
	t.Setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
	s, _ := workspace(t, nil)
	vars := commandVars(t, s)
	for _, name := range secrets {
		require.NotContains(t, vars, name)
	}
	for name, value := range vars {
		require.NotContains(t, value, "SECRET-", "variable %s", name)
	}
	require.Equal(t, "kept", vars["HARNESS_TEST_KEEP"])
	require.Equal(t, "http://localhost:11434/v1", vars["OPENAI_BASE_URL"], "not a credential")
	require.NotEmpty(t, vars["PATH"])

	tool, _ := s.Lookup(tools.RunCommand)
	require.Contains(t, tool.Schema().Description, "OPENAI_API_KEY")
}

// WithEnvDrop leaves out more: names, and prefixes ending in "*".
func TestRunCommandWithEnvDrop(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "SECRET")
	t.Setenv("GITHUB_TOKEN", "SECRET")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "SECRET")
	t.Setenv("AWS_SESSION_TOKEN", "SECRET")
	t.Setenv("HARNESS_TEST_KEEP", "kept")
	s, _ := workspace(t, nil, tools.WithEnvDrop("github_token", "AWS_*"))
	vars := commandVars(t, s)
	for _, name := range []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		require.NotContains(t, vars, name)
	}
	require.Equal(t, "kept", vars["HARNESS_TEST_KEEP"])
}
