package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// outside is a directory beside the workspace holding secret.txt.
type confineEnv struct {
	root, outside string
	set           *tools.Set
}

func newConfineEnv(t *testing.T) confineEnv {
	t.Helper()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644))
	s, root := workspace(t, map[string]string{"in.txt": "inside\n", "sub/keep.txt": "keep\n"})
	relOut, err := filepath.Rel(root, filepath.Join(outside, "secret.txt"))
	require.NoError(t, err)
	for link, target := range map[string]string{
		"abs-out.txt": filepath.Join(outside, "secret.txt"), // a symlinked file, absolute target
		"rel-out.txt": relOut,                               // a symlinked file, relative target
		"outdir":      outside,                              // a symlinked parent directory
		"in-link.txt": "in.txt",                             // a link that stays inside
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, link)))
	}
	return confineEnv{root: root, outside: outside, set: s}
}

// requireOutsideUntouched checks that nothing outside the workspace was
// changed or created.
func (e confineEnv) requireOutsideUntouched(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(e.outside)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a file was created outside the workspace")
	require.Equal(t, "secret\n", readFile(t, e.outside, "secret.txt"))
}

func TestConfinement(t *testing.T) {
	type tc struct {
		name string
		path func(e confineEnv) string
		// want is "" for a path that stays inside, else what the refusal
		// says.
		want string
	}
	cases := []tc{
		{"dot dot", func(confineEnv) string { return "../secret.txt" }, `path "../secret.txt" climbs out of the workspace`},
		{"dot dot inside a path", func(confineEnv) string { return "sub/../../secret.txt" }, `path "sub/../../secret.txt" climbs out of the workspace`},
		{"absolute outside", func(e confineEnv) string { return filepath.Join(e.outside, "secret.txt") }, `is absolute and not under the workspace root`},
		{"symlinked file, absolute target", func(confineEnv) string { return "abs-out.txt" }, `path "abs-out.txt" leads outside the workspace through a symlink`},
		{"symlinked file, relative target", func(confineEnv) string { return "rel-out.txt" }, `path "rel-out.txt" leads outside the workspace through a symlink`},
		{"symlinked parent directory", func(confineEnv) string { return "outdir/secret.txt" }, `path "outdir/secret.txt" leads outside the workspace through a symlink`},
		{"absolute inside", func(e confineEnv) string { return filepath.Join(e.root, "in.txt") }, ""},
		{"dot dot that stays inside", func(confineEnv) string { return "sub/../in.txt" }, ""},
		{"symlink that stays inside", func(confineEnv) string { return "in-link.txt" }, ""},
	}
	type toolCase struct {
		tool string
		args func(path string) map[string]any
	}
	for _, tt := range []toolCase{
		{tools.ReadFile, func(p string) map[string]any { return map[string]any{"path": p} }},
		{tools.WriteFile, func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned\n"} }},
		{tools.EditFile, func(p string) map[string]any {
			old := "inside"
			if strings.Contains(p, "secret") || strings.Contains(p, "out") {
				old = "secret"
			}
			return map[string]any{"path": p, "old": old, "new": "pwned"}
		}},
	} {
		for _, c := range cases {
			t.Run(tt.tool+"/"+c.name, func(t *testing.T) {
				e := newConfineEnv(t)
				p := c.path(e)
				args := js(t, tt.args(p))
				rep := call(t, e.set, tt.tool, args)
				e.requireOutsideUntouched(t)
				if c.want == "" {
					require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
					return
				}
				require.Equal(t, facts.StatusFailed, rep.Status)
				require.Contains(t, rep.Error, tt.tool+": outside the workspace: ")
				require.Contains(t, rep.Error, c.want)
				require.Contains(t, rep.Error, p, "the error names the path")
				// edit_file's check reads the file, so it meets every
				// refusal; write_file's is lexical and meets the first three.
				if tool, _ := e.set.Lookup(tt.tool); tt.tool == tools.EditFile || tt.tool == tools.WriteFile && !strings.Contains(c.want, "symlink") {
					_, err := tool.Check([]byte(args))
					require.ErrorIs(t, err, tools.ErrOutsideWorkspace)
				}
			})
		}
	}
}

// A file created in a symlinked directory that leads out is refused, and
// nothing is created outside.
func TestConfinementNewFileThroughSymlinkedDir(t *testing.T) {
	for _, p := range []string{"outdir/new.txt", "outdir/deeper/new.txt"} {
		t.Run(p, func(t *testing.T) {
			e := newConfineEnv(t)
			rep := call(t, e.set, tools.WriteFile, js(t, map[string]string{"path": p, "content": "x"}))
			require.Equal(t, facts.StatusFailed, rep.Status)
			require.Contains(t, rep.Error, "leads outside the workspace through a symlink")
			e.requireOutsideUntouched(t)
		})
	}
}

// A symlink made a moment ago by a command is refused just the same: the
// check is made as each path is opened, not from a list made earlier.
func TestConfinementSymlinkCreatedByCommand(t *testing.T) {
	e := newConfineEnv(t)
	rep := call(t, e.set, tools.RunCommand, js(t, map[string]string{
		"command": "ln -s '" + e.outside + "' made && ln -s '" + filepath.Join(e.outside, "secret.txt") + "' made.txt",
	}))
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error+rep.Stderr)
	for _, tc := range []struct{ tool, args string }{
		{tools.ReadFile, `{"path": "made.txt"}`},
		{tools.ReadFile, `{"path": "made/secret.txt"}`},
		{tools.WriteFile, `{"path": "made.txt", "content": "pwned"}`},
		{tools.WriteFile, `{"path": "made/secret.txt", "content": "pwned"}`},
		{tools.WriteFile, `{"path": "made/new.txt", "content": "pwned"}`},
		{tools.EditFile, `{"path": "made.txt", "old": "secret", "new": "pwned"}`},
		{tools.ListFiles, `{"pattern": "made/*"}`},
	} {
		t.Run(tc.tool+"/"+tc.args, func(t *testing.T) {
			rep := call(t, e.set, tc.tool, tc.args)
			require.Equal(t, facts.StatusFailed, rep.Status)
			require.Contains(t, rep.Error, "leads outside the workspace through a symlink")
			require.Contains(t, rep.Error, `"made`)
			e.requireOutsideUntouched(t)
		})
	}
}

func TestListFilesConfinement(t *testing.T) {
	e := newConfineEnv(t)
	for _, tc := range []struct {
		pattern string
		want    string
	}{
		{"../**", `pattern "../**" climbs out of the workspace`},
		{"sub/../../*", `pattern "sub/../../*" climbs out of the workspace`},
		{filepath.Join(e.outside, "*"), "is absolute and not under the workspace root"},
		{"outdir/*", `path "outdir" leads outside the workspace through a symlink`},
		{"outdir/**", `path "outdir" leads outside the workspace through a symlink`},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			rep := call(t, e.set, tools.ListFiles, js(t, map[string]string{"pattern": tc.pattern}))
			require.Equal(t, facts.StatusFailed, rep.Status)
			require.Contains(t, rep.Error, "outside the workspace")
			require.Contains(t, rep.Error, tc.want)
		})
	}
	// A walk of the whole workspace lists links and never follows them.
	rep := call(t, e.set, tools.ListFiles, `{"pattern": "**"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "abs-out.txt\nin-link.txt\nin.txt\noutdir\nrel-out.txt\nsub/keep.txt\n", rep.Stdout)
}

// write_file and edit_file refuse the directories the runtime keeps.
func TestReservedDirectories(t *testing.T) {
	s, root := workspace(t, map[string]string{".git/config": "[core]\n", "sub/.git": "gitdir: x\n"})
	for _, tc := range []struct{ tool, args, want string }{
		{tools.WriteFile, `{"path": ".harness/log", "content": "x"}`, `path ".harness/log" is inside .harness, which the runtime keeps`},
		{tools.WriteFile, `{"path": ".harness", "content": "x"}`, `path ".harness" is inside .harness`},
		{tools.WriteFile, `{"path": "sub/.git/hooks/pre-commit", "content": "x"}`, `path "sub/.git/hooks/pre-commit" is inside sub/.git`},
		{tools.EditFile, `{"path": ".git/config", "old": "[core]", "new": "[x]"}`, `path ".git/config" is inside .git`},
		{tools.EditFile, `{"path": "sub/.git", "old": "x", "new": "y"}`, `path "sub/.git" is inside sub/.git`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			rep := call(t, s, tc.tool, tc.args)
			require.Equal(t, facts.StatusFailed, rep.Status)
			require.Contains(t, rep.Error, tc.want)
		})
	}
	require.Equal(t, "[core]\n", readFile(t, root, ".git/config"))
	// A .harness below the root is a store too — one a later run in sub/
	// would adopt, settings and all — so it is refused as the root's is.
	// (It used to be written as ordinary content.)
	rep := call(t, s, tools.WriteFile, `{"path": "sub/.harness/x", "content": "x"}`)
	require.Equal(t, facts.StatusFailed, rep.Status)
	require.Contains(t, rep.Error, `path "sub/.harness/x" is inside sub/.harness, which the runtime keeps`)
	require.NoDirExists(t, filepath.Join(root, "sub", ".harness"))
	// Reading them is allowed.
	rep = call(t, s, tools.ReadFile, `{"path": ".git/config"}`)
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "[core]\n", rep.Stdout)
}
