package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// FuzzFileToolArgs feeds the file tools arbitrary arguments: they answer
// with a valid report and never panic, and whatever Precheck refuses, the
// tool refuses with the same error. (run_command is left out: its
// arguments are a program.)
func FuzzFileToolArgs(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"path": "a.txt"}`, `{"path": "../a"}`, `{"path": "a.txt", "offset": 1e99}`,
		`{"path": "a.txt", "old": "a", "new": "b"}`, `{"pattern": "**/[a-"}`, `{"path": "\u0000"}`,
		`{"path": "a.txt", "content": "x", "content": 7}`, `{"path": "a.txt", "limit": -1, "max_bytes": 0}`,
		`{"path": "g/hooks/x", "content": "x"}`, `{"path": "sub/.harness/config.json", "content": "{}"}`, `{"path": "out/x"}`,
		`{"path": "a.txt", "old": "a", "new": "b", "x": {"k": 1, "k": 2}}`,
	} {
		f.Add(seed)
	}
	root := f.TempDir()
	require.NoError(f, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	require.NoError(f, os.Symlink(".git", filepath.Join(root, "g")))
	require.NoError(f, os.Symlink(f.TempDir(), filepath.Join(root, "out")))
	s, err := tools.New(root)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, args string) {
		for _, name := range []string{tools.ReadFile, tools.ListFiles, tools.WriteFile, tools.EditFile} {
			tool, _ := s.Lookup(name)
			pre := s.Precheck(name, []byte(args))
			rep, err := tool.Execute(context.Background(), action.Request{Payload: json.RawMessage(args)})
			require.NoError(t, err)
			require.NoError(t, rep.Status.Validate())
			if pre != nil {
				require.Equal(t, facts.StatusFailed, rep.Status, "Precheck refused %s %s: %v", name, args, pre)
				require.Equal(t, pre.Error(), rep.Error)
			}
			_, _ = tool.Check(json.RawMessage(args))
		}
	})
}
