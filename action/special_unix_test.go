//go:build unix

package action

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// A FIFO (or socket, or device) has no content to read, but it is there:
// a command that makes one, or puts one where a file was, changed the
// workspace (whoever opens it next waits for a writer), and the record
// says so — with a digest that names its kind, never by opening it.
func TestWorkspaceSeesSpecialFiles(t *testing.T) {
	fifo := SpecialDigest(os.ModeNamedPipe)
	require.Equal(t, facts.SpecialDigestPrefix+"fifo", fifo)
	require.Equal(t, "FIFO", facts.SpecialKind(fifo))
	mkfifo := func(t *testing.T, root, rel string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, syscall.Mkfifo(p, 0o644))
	}
	forModes(t, func(t *testing.T, m testMode) {
		for _, c := range []struct {
			name          string
			setup, change func(t *testing.T, root string)
			want          []facts.PathChange
		}{
			{
				name:   "a FIFO made",
				change: func(t *testing.T, root string) { mkfifo(t, root, "sub/pipe") },
				want:   []facts.PathChange{{Path: "sub/pipe", After: fifo}},
			},
			{
				name:  "a file replaced by a FIFO",
				setup: func(t *testing.T, root string) { put(t, root, "conf", "x", 0o644) },
				change: func(t *testing.T, root string) {
					require.NoError(t, os.Remove(filepath.Join(root, "conf")))
					mkfifo(t, root, "conf")
				},
				want: []facts.PathChange{{Path: "conf", Before: sum("x"), After: fifo, BeforeMode: 0o644}},
			},
			{
				name:   "a FIFO removed",
				setup:  func(t *testing.T, root string) { mkfifo(t, root, "pipe") },
				change: func(t *testing.T, root string) { require.NoError(t, os.Remove(filepath.Join(root, "pipe"))) },
				want:   []facts.PathChange{{Path: "pipe", Before: fifo}},
			},
			{
				name:   "a FIFO kept, another file changed: the FIFO is no change",
				setup:  func(t *testing.T, root string) { mkfifo(t, root, "pipe") },
				change: func(t *testing.T, root string) { put(t, root, "keep.txt", "changed", 0o644) },
				want:   []facts.PathChange{{Path: "keep.txt", Before: sum("unchanged"), After: sum("changed"), BeforeMode: 0o644, AfterMode: 0o644}},
			},
		} {
			t.Run(c.name, func(t *testing.T) {
				root := t.TempDir()
				put(t, root, "keep.txt", "unchanged", 0o644)
				if c.setup != nil {
					c.setup(t, root)
				}
				w, err := m.newWorkspace(t, root)
				require.NoError(t, err)
				before := observe(t, w)
				c.change(t, root)
				after := observe(t, w)
				require.Equal(t, c.want, Diff(before, after))
				require.NotEqual(t, before.Hash, after.Hash)
				require.Equal(t, after.Hash, hashFiles(after.Listing()), "the tree's hash is its listing's")
			})
		}
	})
}
