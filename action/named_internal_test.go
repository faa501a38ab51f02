package action

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// namedOnDisk is what Named should say of root, from a walk of the disk:
// the entries named .harness, and nothing below one.
func namedOnDisk(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		if d.Name() == ".harness" {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	}))
	slices.Sort(out)
	return out
}

// TestNamedSearchesOnlyWhatChanged: Named's cost follows what changed
// since the last reading, not the size of the workspace (the sandbox asks
// it before every command): a directory record a reading shares with the
// last one is not searched again, and the answers stay those of the disk
// through additions, removals and replacements of nested stores, with
// and without the change feed.
func TestNamedSearchesOnlyWhatChanged(t *testing.T) {
	for _, feedOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("feed=%v", feedOn), func(t *testing.T) {
			if feedOn && !feedSupported {
				t.Skip("no change feed on this platform")
			}
			root := t.TempDir()
			for i := range 40 {
				put(t, root, fmt.Sprintf("d%02d/e/f/file%d", i, i), fmt.Sprint(i), 0o644)
			}
			put(t, root, "d05/.harness/db/LOG", "x", 0o644)
			put(t, root, "d10/e/.harness", "a file", 0o644)
			w := settled(t, root, WithChangeFeed(feedOn))
			defer w.Close()
			names := []string{".harness"}
			check := func(what string, most uint64) {
				t.Helper()
				observe(t, w)
				before := w.namedScans
				paths, _, ok := w.Named(names)
				require.True(t, ok, what)
				require.Equal(t, namedOnDisk(t, root), paths, what)
				require.LessOrEqual(t, w.namedScans-before, most, "%s: directory records searched", what)
				again, _, _ := w.Named(names)
				require.Equal(t, paths, again, what)
			}
			check("the first reading", 200)
			require.GreaterOrEqual(t, w.namedScans, uint64(120), "the first answer searches every directory")

			check("nothing changed", 0)
			put(t, root, "d07/e/f/new", "new", 0o644)
			check("a file three levels down", 4)
			require.NoError(t, os.MkdirAll(filepath.Join(root, "d20/e/.harness"), 0o755))
			check("a nested store made", 3)
			require.NoError(t, os.RemoveAll(filepath.Join(root, "d05/.harness")))
			check("a nested store removed", 2)
			require.NoError(t, os.Remove(filepath.Join(root, "d10/e/.harness")))
			require.NoError(t, os.Symlink("/nowhere", filepath.Join(root, "d10/e/.harness")))
			check("a file replaced by a link", 3)
			require.NoError(t, os.Rename(filepath.Join(root, "d20"), filepath.Join(root, "d41")))
			// A directory renamed makes the feed watch anew, and every
			// record of that reading is new: all are searched once, and
			// the answer is still the disk's.
			check("a directory holding one renamed", 200)
			check("nothing changed after the rename", 0)

			// Other names are answered on their own, and the first
			// names' answer stays right afterwards; askers that take
			// turns (the sandbox at a command's start, the boundary at
			// an action's) do not make each other search again.
			paths, _, ok := w.Named([]string{"f"})
			require.True(t, ok)
			require.Len(t, paths, 40)
			check("asked again after other names", 0)
			before := w.namedScans
			paths, _, _ = w.Named([]string{"f"})
			require.Len(t, paths, 40)
			require.Equal(t, before, w.namedScans, "the other names' answer was searched again")
			put(t, root, "d07/e/f/newer", "new", 0o644)
			check("a file changed, the other names asked between", 4)
		})
	}
}
