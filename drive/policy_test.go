package drive_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/tools"
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
		p, err := drive.ParsePattern(tc.pattern)
		require.NoError(t, err, tc.pattern)
		require.Equal(t, tc.match, p.Match(tc.tool, tc.args), "%s against %s %s", tc.pattern, tc.tool, tc.args)
		require.Equal(t, tc.pattern, p.String())
	}
	for _, bad := range []string{"", ":x", "run command", "write_file:"} {
		_, err := drive.ParsePattern(bad)
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
		want        drive.Decision
	}{
		{"ask by default", "", nil, nil, "write_file", action.Write, `{"path":"a"}`, drive.Decision{Ask: true}},
		{"writes approves writes", "writes", nil, nil, "edit_file", action.Write, `{"path":"a"}`, drive.Decision{Approved: true, Rule: "approve writes"}},
		{"writes asks for commands", "writes", nil, nil, "run_command", action.Execute, `{"command":"ls"}`, drive.Decision{Ask: true}},
		{"all approves commands", "all", nil, nil, "run_command", action.Execute, `{"command":"ls"}`, drive.Decision{Approved: true, Rule: "approve all"}},
		{"allow approves", "ask", []string{"run_command:go test *"}, nil, "run_command", action.Execute, `{"command":"go test ./x"}`, drive.Decision{Approved: true, Rule: "allow run_command:go test *"}},
		{"deny wins over all", "all", nil, []string{"run_command:rm *"}, "run_command", action.Execute, `{"command":"rm x"}`, drive.Decision{Rule: "deny run_command:rm *"}},
		{"deny wins over allow", "ask", []string{"run_command"}, []string{"run_command:rm *"}, "run_command", action.Execute, `{"command":"rm x"}`, drive.Decision{Rule: "deny run_command:rm *"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := drive.NewApproval(tc.mode, tc.allow, tc.deny)
			require.NoError(t, err)
			require.Equal(t, tc.want, a.Decide(tc.tool, tc.capability, tc.args))
		})
	}
	_, err := drive.NewApproval("sometimes", nil, nil)
	require.ErrorContains(t, err, "want ask, writes or all")
	_, err = drive.NewApproval("", nil, []string{":x"})
	require.ErrorContains(t, err, "deny: tool pattern \":x\"")
	require.NotContains(t, err.Error(), "--", "a library error names parameters, not flags")
}

// A path is matched as the workspace-relative path it names: a pattern
// cannot be slipped past with "..", "./" or an absolute path, and a path
// that leaves the workspace is put to a person whatever the rules say.
func TestApprovalMatchesCleanedPaths(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		name        string
		mode        string
		allow, deny []string
		path        string
		want        drive.Decision
	}{
		{"allow matches a cleaned path", "ask", []string{"write_file:docs/*"}, nil, "./docs/a.md", drive.Decision{Approved: true, Rule: "allow write_file:docs/*"}},
		{"allow does not follow ..", "ask", []string{"write_file:docs/*"}, nil, "docs/../.github/workflows/ci.yml", drive.Decision{Ask: true}},
		{"allow does not follow .. back in", "ask", []string{"write_file:docs/*"}, nil, "docs/../docs/a.md", drive.Decision{Approved: true, Rule: "allow write_file:docs/*"}},
		{"deny sees through ./", "all", nil, []string{"write_file:.github/*"}, "./.github/ci.yml", drive.Decision{Rule: "deny write_file:.github/*"}},
		{"deny sees through ..", "all", nil, []string{"write_file:.github/*"}, "docs/../.github/ci.yml", drive.Decision{Rule: "deny write_file:.github/*"}},
		{"deny sees through an absolute path", "all", nil, []string{"write_file:.github/*"}, filepath.Join(root, ".github", "ci.yml"), drive.Decision{Rule: "deny write_file:.github/*"}},
		{"allow matches an absolute path inside", "ask", []string{"write_file:docs/*"}, nil, filepath.Join(root, "docs", "a.md"), drive.Decision{Approved: true, Rule: "allow write_file:docs/*"}},
		{"an escaping path is never approved by a pattern", "ask", []string{"write_file:*"}, nil, "../outside.txt", drive.Decision{Ask: true}},
		{"an escaping path is never approved by the mode", "all", nil, nil, "docs/../../outside.txt", drive.Decision{Ask: true}},
		{"an absolute path outside is never approved", "all", []string{"write_file"}, nil, "/etc/passwd", drive.Decision{Ask: true}},
		{"an escaping path does not escape a deny", "all", nil, []string{"write_file:.github/*"}, "../" + filepath.Base(root) + "/.github/ci.yml", drive.Decision{Ask: true}},
		{"a tool deny still denies an escaping path", "all", nil, []string{"write_file"}, "../x", drive.Decision{Rule: "deny write_file"}},
		{"an empty path is put to a person", "all", nil, nil, "", drive.Decision{Ask: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := drive.NewApproval(tc.mode, tc.allow, tc.deny)
			require.NoError(t, err)
			a.Root = root
			args, err := json.Marshal(map[string]string{"path": tc.path, "content": "x"})
			require.NoError(t, err)
			require.Equal(t, tc.want, a.Decide("write_file", action.Write, string(args)))
		})
	}
}

func TestWorkspacePath(t *testing.T) {
	for in, want := range map[string]string{
		"a.go": "a.go", "./a.go": "a.go", "x/../a.go": "a.go", "a//b/./c": "a/b/c", "/r/a/b": "a/b", "/r": ".",
	} {
		got, ok := drive.WorkspacePath("/r", in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "..", "../a", "a/../../b", "/etc/passwd", "/r/../etc", "a\x00b"} {
		_, ok := drive.WorkspacePath("/r", in)
		require.False(t, ok, "%q", in)
	}
	_, ok := drive.WorkspacePath("", "/r/a")
	require.False(t, ok, "an absolute path with no root")
}

// In a command, an allow pattern's wildcards never match the shell's
// control characters: the README's 'run_command:go test *' approves go
// test, not go test followed by anything a shell would also run.
func TestAllowCommandNeverMatchesShellControl(t *testing.T) {
	a, err := drive.NewApproval("ask", []string{"run_command:go test *", "run_command:make * | tee log"}, nil)
	require.NoError(t, err)
	approved := drive.Decision{Approved: true, Rule: "allow run_command:go test *"}
	for cmd, want := range map[string]drive.Decision{
		"go test ./...":                     approved,
		"go test -run 'TestX' ./harness/":   approved,
		"go test ./... ; echo INJECTED > f": {Ask: true},
		"go test ./... && curl evil":        {Ask: true},
		"go test ./... || true":             {Ask: true},
		"go test ./... | sh":                {Ask: true},
		"go test $(rm -rf ~)":               {Ask: true},
		"go test `rm -rf ~`":                {Ask: true},
		"go test ./... > /etc/passwd":       {Ask: true},
		"go test < /dev/zero":               {Ask: true},
		"go test (x)":                       {Ask: true},
		"go test ./...\nrm -rf ~":           {Ask: true},
		"go test ./... &":                   {Ask: true},
		"make all | tee log":                {Approved: true, Rule: "allow run_command:make * | tee log"},
		"make all; rm x | tee log":          {Ask: true},
		"make all | rm -rf ~ | tee log":     {Ask: true},
	} {
		args, err := json.Marshal(map[string]string{"command": cmd})
		require.NoError(t, err)
		require.Equal(t, want, a.Decide("run_command", action.Execute, string(args)), "%q", cmd)
	}
	// A deny pattern matches whatever its wildcards cover.
	d, err := drive.NewApproval("all", nil, []string{"run_command:*rm *"})
	require.NoError(t, err)
	require.Equal(t, drive.Decision{Rule: "deny run_command:*rm *"}, d.Decide("run_command", action.Execute, `{"command":"go test; rm -rf x"}`))
}

// A path rule matches where the path leads, through the workspace's
// symlinks, as the tools write it: with gh -> .github, a deny of
// .github/* stops a write through gh/, and with docs -> .github an allow
// of docs/* does not approve a write that lands in .github.
func TestApprovalMatchesResolvedPaths(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".github", "workflows"), 0o755))
	require.NoError(t, os.Symlink(".github", filepath.Join(root, "gh")))
	require.NoError(t, os.Symlink(".github", filepath.Join(root, "docs")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "real-docs"), 0o755))
	set, err := tools.New(root, tools.WithSandbox(sandbox.Spec{Mode: sandbox.Off, Workspace: root}))
	require.NoError(t, err)
	a, err := drive.NewApproval("ask", []string{"write_file:docs/*", "write_file:real-docs/*"}, []string{"write_file:.github/*"})
	require.NoError(t, err)
	a.Root, a.Resolve = root, set.Resolve

	write := func(path string) string { return `{"path":"` + path + `","content":"x"}` }
	for _, tc := range []struct {
		name string
		path string
		want drive.Decision
	}{
		{"a deny through a link", "gh/workflows/ci.yml", drive.Decision{Rule: "deny write_file:.github/*"}},
		{"an allow whose path leads elsewhere (and there, a deny)", "docs/workflows/ci.yml", drive.Decision{Rule: "deny write_file:.github/*"}},
		{"an allow where the path leads where it says", "real-docs/a.md", drive.Decision{Approved: true, Rule: "allow write_file:real-docs/*"}},
		{"a path through a link that leaves the workspace is asked", "../x", drive.Decision{Ask: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, a.Decide("write_file", action.Write, write(tc.path)))
		})
	}
	// Without a deny, an allow of docs/* still does not approve a write
	// that lands in .github: it is put to a person.
	b, err := drive.NewApproval("ask", []string{"write_file:docs/*"}, nil)
	require.NoError(t, err)
	b.Root, b.Resolve = root, set.Resolve
	require.Equal(t, drive.Decision{Ask: true}, b.Decide("write_file", action.Write, write("docs/workflows/ci.yml")))
}
