package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/mcp"
)

func TestParsePromptRef(t *testing.T) {
	cases := []struct {
		ref    string
		args   []string
		server string
		name   string
		values map[string]string
		err    error
	}{
		{"t/review", nil, "t", "review", map[string]string{}, nil},
		{"t/review", []string{"file=a=b", "mode="}, "t", "review", map[string]string{"file": "a=b", "mode": ""}, nil},
		{"t/a/b", nil, "t", "a/b", map[string]string{}, nil},
		{"review", nil, "", "", nil, mcp.ErrPromptRef},
		{"/review", nil, "", "", nil, mcp.ErrPromptRef},
		{"t/", nil, "", "", nil, mcp.ErrPromptRef},
		{"t/review", []string{"file"}, "", "", nil, mcp.ErrPromptArgs},
		{"t/review", []string{"=x"}, "", "", nil, mcp.ErrPromptArgs},
		{"t/review", []string{"file=a", "file=b"}, "", "", nil, mcp.ErrPromptArgs},
	}
	for _, c := range cases {
		server, name, values, err := mcp.ParsePromptRef(c.ref, c.args)
		if c.err != nil {
			require.ErrorIs(t, err, c.err, "%s %q", c.ref, c.args)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, []any{c.server, c.name, c.values}, []any{server, name, values}, "%s %q", c.ref, c.args)
	}
}
