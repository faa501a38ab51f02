package action

import (
	"io/fs"
	"path"
	"testing"

	"github.com/stretchr/testify/require"
)

// Which paths in a .git or a .harness are left out (git's working data,
// the store's own files) and which are observed.
func TestGuardRules(t *testing.T) {
	for _, c := range []struct {
		rel  string
		dir  bool
		skip bool
	}{
		{".git", true, false},
		{".git/HEAD", false, true},
		{".git/index", false, true},
		{".git/index.lock", false, true},
		{".git/objects", true, true},
		{".git/refs", true, true},
		{".git/logs", true, true},
		{".git/sharedindex.0123", false, true},
		{".git/BISECT_LOG", false, true},
		{".git/config", false, false},
		{".git/config.worktree", false, false},
		{".git/commondir", false, false},
		{".git/description", false, false},
		{".git/hooks", true, false},
		{".git/hooks/pre-commit", false, false},
		{".git/info/attributes", false, false},
		{".git/rebase-merge/git-rebase-todo", false, false},
		{".git/sequencer/todo", false, false},
		{".git/unknown", false, false},
		{".git/modules/m/objects", true, false}, // entered: a control file may be below
		{".git/modules/m/objects/pack/p.pack", false, true},
		{".git/modules/m/HEAD", false, true},
		{".git/modules/m/config", false, false},
		{".git/modules/a/objects/config", false, false},     // a submodule named "a/objects"
		{".git/modules/a/objects/hooks/x", false, false},    // its hooks
		{".git/modules/m/refs/heads/hooks/x", false, false}, // a branch named hooks/x: observed, harmless
		{".git/worktrees/w/commondir", false, false},
		{".git/worktrees/w/index", false, true},
		{"sub/.git/HEAD", false, false}, // a nested repository's HEAD
		{"sub/.git/index", false, true},
		{"sub/.git/config", false, false},
		{"sub/.git/objects", true, true},
		{".harness", true, false},
		{".harness/db", true, true},
		{".harness/search", true, true},
		{".harness/search/000002.log", false, true},
		{".harness/searching.json", false, false},
		{".harness/serve.sock", false, false},
		{".harness/serve.json", false, false},
		{".harness/serve.log", false, false},
		{".harness/project.json", false, false},
		{".harness/config.json", false, false},
		{".harness/sub/serve.json", false, false},
		{"a/.harness/db/000001.log", false, true},
		{"a/.harness/project.json", false, false},
		{".git/x/.harness/db", true, true},
		{".harness/x/.git/HEAD", false, false},
		{"src/main.go", false, false},
	} {
		wk := &walk{w: &Workspace{skipPaths: map[string]bool{}}}
		st := sysStat{mode: 0o644}
		if c.dir {
			st.mode = fs.ModeDir | 0o755
		}
		name := path.Base(c.rel)
		require.Equal(t, c.skip, wk.skip(c.rel, name, &st), c.rel)
	}
	require.True(t, isGuarded(".git/config"))
	require.True(t, isGuarded("a/.harness"))
	require.False(t, isGuarded("a/.gitignore"))
	require.False(t, isGuarded(".harnessx/y"))
}
