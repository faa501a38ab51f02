package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/tools"
)

// FuzzFileToolArgs feeds the file tools arbitrary arguments: they answer
// with a valid report and never panic. (run_command is left out: its
// arguments are a program.)
func FuzzFileToolArgs(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"path": "a.txt"}`, `{"path": "../a"}`, `{"path": "a.txt", "offset": 1e99}`,
		`{"path": "a.txt", "old": "a", "new": "b"}`, `{"pattern": "**/[a-"}`, `{"path": "\u0000"}`,
		`{"path": "a.txt", "content": "x", "content": 7}`, `{"path": "a.txt", "limit": -1, "max_bytes": 0}`,
	} {
		f.Add(seed)
	}
	root := f.TempDir()
	s, err := tools.New(root)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, args string) {
		for _, name := range []string{tools.ReadFile, tools.ListFiles, tools.WriteFile, tools.EditFile} {
			tool, _ := s.Lookup(name)
			rep, err := tool.Execute(context.Background(), action.Request{Payload: json.RawMessage(args)})
			require.NoError(t, err)
			require.NoError(t, rep.Status.Validate())
			_, _ = tool.Check(json.RawMessage(args))
		}
	})
}
