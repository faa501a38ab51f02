package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// Precheck refuses, without running anything, the calls the tool itself
// would refuse for their arguments or their paths; each refusal is the
// very error the call's failed report carries, and nothing changes.
func TestPrecheck(t *testing.T) {
	s, root := workspace(t, map[string]string{
		"a.txt":             "a\n",
		".git/config":       "[core]\n",
		"sub/.harness/x":    "x\n",
		"state/db":          "db\n",
		"sub/file.txt":      "f\n",
		"docs/readme.md":    "r\n",
		".github/ci/ci.yml": "on: push\n",
	}, tools.WithProtected("state"))
	outside := t.TempDir()
	symlinks(t, root, map[string]string{"g": ".git", "st": "state", "nested": "sub/.harness", "out": outside})
	for _, tc := range []struct {
		name, tool, args string
		is               error
		want             string // "" for a call Precheck lets through
	}{
		{"unknown tool", "rm_rf", `{}`, tools.ErrUnknownTool, `no such tool: "rm_rf" (the tools are read_file, list_files, write_file, edit_file, run_command)`},
		{"malformed", tools.WriteFile, `{"path": "a.txt"`, tools.ErrInvalidArgs, "malformed JSON at byte"},
		{"no arguments", tools.ReadFile, ``, tools.ErrInvalidArgs, "no arguments; want a JSON object"},
		{"duplicate key", tools.WriteFile, `{"path": "a.txt", "content": "safe", "content": "evil"}`, facts.ErrDuplicateKey, `duplicate key "content" in the top-level object`},
		{"duplicate path", tools.EditFile, `{"path": "a.txt", "old": "a", "new": "b", "path": ".git/config"}`, facts.ErrDuplicateKey, `duplicate key "path"`},
		{"duplicate command", tools.RunCommand, `{"command": "ls", "command": "rm -rf ~"}`, facts.ErrDuplicateKey, `duplicate key "command"`},
		{"duplicate nested", tools.ListFiles, `{"pattern": {"a": 1, "a": 2}}`, facts.ErrDuplicateKey, `duplicate key "a" in the object at $.pattern`},
		{"unknown field", tools.RunCommand, `{"command": "ls", "cwd": "/"}`, tools.ErrInvalidArgs, `unknown field "cwd"`},
		{"missing field", tools.RunCommand, `{}`, tools.ErrInvalidArgs, `missing required field "command"`},
		{"wrong type", tools.ReadFile, `{"path": 7}`, tools.ErrInvalidArgs, `field "path": got number, want string`},
		{"range", tools.ReadFile, `{"path": "a.txt", "offset": 0}`, tools.ErrInvalidArgs, `field "offset" is 0; want at least 1`},
		{"read climbs out", tools.ReadFile, `{"path": "../etc/passwd"}`, tools.ErrOutsideWorkspace, `climbs out of the workspace`},
		{"read through a link out", tools.ReadFile, `{"path": "out/x"}`, tools.ErrOutsideWorkspace, `path "out/x" leads outside the workspace through a symlink`},
		{"list climbs out", tools.ListFiles, `{"pattern": "../*"}`, tools.ErrOutsideWorkspace, `climbs out of the workspace`},
		{"list bad pattern", tools.ListFiles, `{"pattern": "[a-"}`, tools.ErrInvalidArgs, `syntax error in pattern`},
		{"write .git", tools.WriteFile, `{"path": ".git/hooks/pre-commit", "content": "x"}`, tools.ErrProtected, `path ".git/hooks/pre-commit" is inside .git`},
		{"write through g -> .git", tools.WriteFile, `{"path": "g/hooks/pre-commit", "content": "x"}`, tools.ErrProtected, `leads through a symlink to .git/hooks/pre-commit, inside .git`},
		{"write a nested store", tools.WriteFile, `{"path": "sub/.harness/config.json", "content": "{}"}`, tools.ErrProtected, `inside sub/.harness`},
		{"write through a link to a nested store", tools.WriteFile, `{"path": "nested/config.json", "content": "{}"}`, tools.ErrProtected, `leads through a symlink to sub/.harness/config.json, inside sub/.harness`},
		{"write protected", tools.WriteFile, `{"path": "st/db", "content": "x"}`, tools.ErrProtected, `inside state`},
		{"write out", tools.WriteFile, `{"path": "out/x", "content": "x"}`, tools.ErrOutsideWorkspace, `leads outside the workspace through a symlink`},
		{"edit .git", tools.EditFile, `{"path": "g/config", "old": "[core]", "new": "[x]"}`, tools.ErrProtected, `inside .git`},
		{"edit empty old", tools.EditFile, `{"path": "a.txt", "old": "", "new": "b"}`, tools.ErrInvalidArgs, `field "old" is empty`},

		// What Precheck cannot be sure of is let through.
		{"read a missing file", tools.ReadFile, `{"path": "nope.txt"}`, nil, ""},
		{"write a new file", tools.WriteFile, `{"path": "docs/new/x.md", "content": "x"}`, nil, ""},
		{"write .github", tools.WriteFile, `{"path": ".github/ci/ci.yml", "content": "x"}`, nil, ""},
		{"edit a missing file", tools.EditFile, `{"path": "nope.txt", "old": "a", "new": "b"}`, nil, ""},
		{"edit text that is not there", tools.EditFile, `{"path": "a.txt", "old": "zzz", "new": "b"}`, nil, ""},
		{"a command", tools.RunCommand, `{"command": "exit 1"}`, nil, ""},
		{"list", tools.ListFiles, `{}`, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tree(t, root)
			err := s.Precheck(tc.tool, []byte(tc.args))
			require.Equal(t, before, tree(t, root), "Precheck changed the workspace")
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.want)
			if tc.is == tools.ErrUnknownTool {
				return
			}
			// The tool refuses the call the same way.
			rep := call(t, s, tc.tool, tc.args)
			require.Equal(t, facts.StatusFailed, rep.Status)
			require.Equal(t, err.Error(), rep.Error)
			require.Equal(t, before, tree(t, root), "a refused call changed the workspace")
		})
	}
}
