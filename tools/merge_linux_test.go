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
	"github.com/seed-7cc7a084/harness/worktree"
)

// A child's worktree is another directory: a file there that write_file
// would refuse in the workspace (a config the person's git config
// includes, a hook in the hooks directory core.hooksPath names) is an
// ordinary file in the worktree, which the child may write. Its merge
// into the workspace is refused whole, before anything is applied, as a
// write_file there would be; a change to other files merges.
func TestMergeRefusesWhatWriteFileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		setup      func(t *testing.T, ws string)
	}{
		{"an included config", ".gitconfig", func(t *testing.T, ws string) {
			git(t, ws, "config", "include.path", "../.gitconfig")
		}},
		{"a hook in core.hooksPath", "githooks/pre-commit", func(t *testing.T, ws string) {
			git(t, ws, "config", "core.hooksPath", filepath.Join(ws, "githooks"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ws := t.TempDir()
			git(t, ws, "init", "-q")
			write := func(root, rel, content string) {
				p := filepath.Join(root, filepath.FromSlash(rel))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			}
			write(ws, tc.file, "# the person's\n")
			write(ws, "a.txt", "a\n")
			git(t, ws, "add", "-A")
			git(t, ws, "commit", "-q", "-m", "base")
			tc.setup(t, ws)

			tr, err := worktree.Create(ctx, ws, "t1", worktree.Options{Dir: t.TempDir()})
			require.NoError(t, err)
			write(tr.Root, tc.file, "[core]\n\tfsmonitor = touch pwned\n")
			write(tr.Root, "a.txt", "a, by the child\n")
			f, err := worktree.Finish(ctx, tr, "t1", false)
			require.NoError(t, err)

			s, err := tools.New(ws)
			require.NoError(t, err)
			rep := call(t, s, tools.WriteFile, js(t, map[string]string{"path": tc.file, "content": "x\n"}))
			require.Equal(t, facts.StatusFailed, rep.Status, "write_file refuses it: %s", rep.Stdout)

			merge := s.MergeTool()
			args := js(t, map[string]string{"branch": f.Branch, "base": f.Base, "head": f.Head})
			rep, err = merge.Execute(ctx, action.Request{Adapter: tools.MergeWorktree, Payload: json.RawMessage(args)})
			require.NoError(t, err)
			require.Equal(t, facts.StatusFailed, rep.Status, "the merge is refused: %s", rep.Stdout)
			require.Contains(t, rep.Error, tc.file)
			require.Contains(t, rep.Error, "nothing was changed")
			require.Equal(t, "# the person's\n", readFile(t, ws, tc.file))
			require.Equal(t, "a\n", readFile(t, ws, "a.txt"), "nothing of the change is applied")

			// Without the kept file, the same kind of change merges.
			tr2, err := worktree.Create(ctx, ws, "t2", worktree.Options{Dir: t.TempDir()})
			require.NoError(t, err)
			write(tr2.Root, "a.txt", "a, by the child\n")
			f2, err := worktree.Finish(ctx, tr2, "t2", false)
			require.NoError(t, err)
			args = js(t, map[string]string{"branch": f2.Branch, "base": f2.Base, "head": f2.Head})
			rep, err = merge.Execute(ctx, action.Request{Adapter: tools.MergeWorktree, Payload: json.RawMessage(args)})
			require.NoError(t, err)
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			require.Equal(t, "a, by the child\n", readFile(t, ws, "a.txt"))
		})
	}
}
