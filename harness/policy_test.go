package harness_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/harness"
)

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern, tool, args string
		match               bool
	}{
		{"read_file", "read_file", `{"path":"a.go"}`, true},
		{"read_file", "write_file", `{"path":"a.go"}`, false},
		{"*", "run_command", `{"command":"ls"}`, true},
		{"write_file:*.md", "write_file", `{"path":"docs/guide.md"}`, true},
		{"write_file:*.md", "write_file", `{"path":"main.go"}`, false},
		{"write_file:docs/*", "write_file", `{"path":"docs/a/b.md"}`, true},
		{"run_command:go test *", "run_command", `{"command":"go test ./..."}`, true},
		{"run_command:go test *", "run_command", `{"command":"go vet ./..."}`, false},
		{"run_command:rm *", "run_command", `{"command":"rm -rf /"}`, true},
		{"run_command:rm *", "run_command", `{"command":"echo rm -rf"}`, false},
		{"*:*.env", "read_file", `{"path":"prod.env"}`, true},
		{"list_files:src/?", "list_files", `{"pattern":"src/a"}`, true},
		{"list_files:src/?", "list_files", `{"pattern":"src/ab"}`, false},
		{"write_file:*", "write_file", `not json`, false},
	}
	for _, tc := range cases {
		p, err := harness.ParsePattern(tc.pattern)
		require.NoError(t, err, tc.pattern)
		require.Equal(t, tc.match, p.Match(tc.tool, tc.args), "%s against %s %s", tc.pattern, tc.tool, tc.args)
		require.Equal(t, tc.pattern, p.String())
	}
	for _, bad := range []string{"", ":x", "run command", "write_file:"} {
		_, err := harness.ParsePattern(bad)
		require.Error(t, err, bad)
	}
}

func TestApprovalDecide(t *testing.T) {
	cases := []struct {
		name        string
		mode        string
		allow, deny []string
		tool        string
		capability  action.Capability
		args        string
		want        harness.Decision
	}{
		{"ask by default", "", nil, nil, "write_file", action.Write, `{"path":"a"}`, harness.Decision{Ask: true}},
		{"writes approves writes", "writes", nil, nil, "edit_file", action.Write, `{"path":"a"}`, harness.Decision{Approved: true, Rule: "approve writes"}},
		{"writes asks for commands", "writes", nil, nil, "run_command", action.Execute, `{"command":"ls"}`, harness.Decision{Ask: true}},
		{"all approves commands", "all", nil, nil, "run_command", action.Execute, `{"command":"ls"}`, harness.Decision{Approved: true, Rule: "approve all"}},
		{"allow approves", "ask", []string{"run_command:go test *"}, nil, "run_command", action.Execute, `{"command":"go test ./x"}`, harness.Decision{Approved: true, Rule: "allow run_command:go test *"}},
		{"deny wins over all", "all", nil, []string{"run_command:rm *"}, "run_command", action.Execute, `{"command":"rm x"}`, harness.Decision{Rule: "deny run_command:rm *"}},
		{"deny wins over allow", "ask", []string{"run_command"}, []string{"run_command:rm *"}, "run_command", action.Execute, `{"command":"rm x"}`, harness.Decision{Rule: "deny run_command:rm *"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := harness.NewApproval(tc.mode, tc.allow, tc.deny)
			require.NoError(t, err)
			require.Equal(t, tc.want, a.Decide(tc.tool, tc.capability, tc.args))
		})
	}
	_, err := harness.NewApproval("sometimes", nil, nil)
	require.ErrorContains(t, err, "want ask, writes or all")
	_, err = harness.NewApproval("", nil, []string{":x"})
	require.ErrorContains(t, err, "--deny")
}
