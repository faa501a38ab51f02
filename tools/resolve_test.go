package tools_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// resolveEnv is a workspace with links a policy must see through:
// gh -> .github and docs -> .github (finding 7), nested and chained links,
// and links that leave.
func resolveEnv(t *testing.T) (*tools.Set, string) {
	t.Helper()
	s, root := workspace(t, map[string]string{
		".github/workflows/ci.yml": "on: push\n",
		"src/main.go":              "package main\n",
		"plain.txt":                "plain\n",
	})
	outside := t.TempDir()
	symlinks(t, root, map[string]string{
		"gh":          ".github",
		"docs":        ".github",
		"ci":          ".github/workflows/ci.yml",
		"chain":       "gh",
		"a/b/up":      "../../.github/workflows",
		"a/dotdot":    "../src/../.github",
		"dangling":    "nowhere/new.txt",
		"self":        ".",
		"loop1":       "loop2",
		"loop2":       "loop1",
		"out":         outside,
		"rel-out":     "../" + filepath.Base(outside),
		"src/link.go": "main.go",
	})
	return s, root
}

func TestResolve(t *testing.T) {
	s, root := resolveEnv(t)
	for _, tc := range []struct{ path, want string }{
		{"plain.txt", "plain.txt"},
		{"gh/workflows/ci.yml", ".github/workflows/ci.yml"},
		{"docs/workflows/ci.yml", ".github/workflows/ci.yml"},
		{"docs/workflows/new.yml", ".github/workflows/new.yml"}, // a file a write would create
		{"docs/new/deeper/x.yml", ".github/new/deeper/x.yml"},   // and its missing directories
		{"ci", ".github/workflows/ci.yml"},                      // a symlinked file
		{"chain/workflows", ".github/workflows"},
		{"a/b/up/ci.yml", ".github/workflows/ci.yml"},
		{"a/dotdot/workflows/ci.yml", ".github/workflows/ci.yml"},
		{"dangling", "nowhere/new.txt"},
		{"self/self/gh/x", ".github/x"},
		{"src/link.go", "src/main.go"},
		{"./src/../gh/x", ".github/x"},
		{"plain.txt/x", "plain.txt/x"}, // under a file: as written (the write fails)
		{".", "."},
		{"gh/..", "."},
		{filepath.Join(root, "gh", "workflows"), ".github/workflows"}, // absolute, under the root
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := s.Resolve(tc.path)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	for _, tc := range []struct {
		path string
		is   error
		want string
	}{
		{"../x", tools.ErrOutsideWorkspace, `climbs out of the workspace`},
		{"/etc/passwd", tools.ErrOutsideWorkspace, `is absolute and not under the workspace root`},
		{"out/secret", tools.ErrOutsideWorkspace, `path "out/secret" leads outside the workspace through a symlink`},
		{"rel-out", tools.ErrOutsideWorkspace, `path "rel-out" leads outside the workspace through a symlink`},
		{"gh/../../x", tools.ErrOutsideWorkspace, `climbs out of the workspace`},
		{"", tools.ErrInvalidArgs, `path is empty`},
		{"loop1", nil, `path "loop1": more than 40 symlinks`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, err := s.Resolve(tc.path)
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Resolve names the file a write lands in: after write_file of a path,
// the file at the resolved path holds the content. (A path rule matched
// against the resolved path is matched against where the write goes.)
func TestResolveIsWhereTheWriteLands(t *testing.T) {
	for _, p := range []string{"gh/workflows/deploy.yml", "docs/workflows/ci.yml", "ci", "a/b/up/new.yml", "dangling", "src/link.go", "self/gh/x/y.txt"} {
		t.Run(p, func(t *testing.T) {
			s, root := resolveEnv(t)
			real, err := s.Resolve(p)
			require.NoError(t, err)
			rep := call(t, s, tools.WriteFile, js(t, map[string]string{"path": p, "content": "landed\n"}))
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			require.Equal(t, "landed\n", readFile(t, root, real))
		})
	}
}
