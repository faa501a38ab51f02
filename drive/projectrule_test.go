package drive

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func cmdArgs(c string) string {
	b, _ := json.Marshal(map[string]string{"command": c})
	return string(b)
}

// TestProjectAlways: the rule offered for the project is a command's
// program and subcommand with *, never a prefix of a program that runs
// its arguments, and the prefix rule does not approve a command that
// runs more behind it.
func TestProjectAlways(t *testing.T) {
	for cmd, want := range map[string]string{
		"go test ./... -run X":       "run_command:go test *",
		"npm run build":              "run_command:npm run *",
		"./gradlew build --info":     "run_command:./gradlew build *",
		"go test":                    "run_command:go test",
		"ls -la docs":                "run_command:ls -la docs",
		"sh -c 'rm -rf ~'":           "run_command:sh -c 'rm -rf ~'",
		"sudo rm -rf /":              "run_command:sudo rm -rf /",
		"xargs rm -f a":              "run_command:xargs rm -f a",
		"/usr/bin/env go test ./...": "run_command:/usr/bin/env go test ./...",
		"eval foo ';rm -rf ~'":       "run_command:eval foo ';rm -rf ~'",
		"FOO=1 go test ./...":        "run_command:FOO=1 go test ./...",
		"git status --short":         "run_command:git status *",
		// A prefix of these approves a command run behind them, with no
		// shell character: find . -exec rm -rf ~ +, git submodule
		// foreach 'curl x', git fetch --upload-pack=CMD.
		"find . -name '*.go'":         "run_command:find . -name '*.go'",
		"/usr/bin/find . -type f":     "run_command:/usr/bin/find . -type f",
		"git submodule update --init": "run_command:git submodule update --init",
		"git fetch origin main":       "run_command:git fetch origin main",
		"git grep -n TODO":            "run_command:git grep -n TODO",
		"npm exec eslint .":           "run_command:npm exec eslint .",
		"npx prettier --check .":      "run_command:npx prettier --check .",
	} {
		require.Equal(t, want, ProjectAlways("/w", "run_command", cmdArgs(cmd)).String(), cmd)
	}
	require.Equal(t, "write_file:docs/*", ProjectAlways("/w", "write_file", `{"path":"docs/a.md"}`).String())

	rule, err := ParsePattern("run_command:go test *")
	require.NoError(t, err)
	a := Approval{Allow: []Pattern{rule}}
	require.False(t, a.Decide("run_command", "execute", cmdArgs("go test ./b")).Ask)
	for _, hostile := range []string{
		"go test ./...; rm -rf /", "go test ./... && rm -rf /", "go test $(rm -rf /)", "go test `rm -rf /`",
		"go test ./... | sh", "go test ./...\nrm -rf /", "go test > /etc/passwd", "go testify", "gotest ./...",
	} {
		require.True(t, a.Decide("run_command", "execute", cmdArgs(hostile)).Ask, hostile)
	}
}
