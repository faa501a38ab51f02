package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// swapper exchanges two entries of a directory (renameat2 with
// RENAME_EXCHANGE, atomic: each name always exists) in a tight loop until
// stopped, as a hostile command left running beside the tools would.
type swapper struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	swaps atomic.Int64
}

func swap(t *testing.T, a, b string) *swapper {
	t.Helper()
	s := &swapper{stop: make(chan struct{})}
	s.wg.Go(func() {
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err == nil {
				s.swaps.Add(1)
			}
		}
	})
	t.Cleanup(s.halt)
	return s
}

func (s *swapper) halt() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
}

// names lists the entries of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// A docs directory swapped for a symlink to .git/hooks while write_file
// and edit_file write docs/x.txt: each write lands in the real docs
// directory or is refused, and nothing — not the file, not a temporary
// file — ever lands in .git/hooks. (The tools resolved the path twice: to
// check it, then to write the temporary file and rename it, and about one
// write in 150 left its temporary file, holding the write's bytes, in
// .git/hooks.) The path is walked once, each directory held open, and the
// temporary file is made and renamed in that one directory.
func TestWriteWhileDirIsSwappedForSymlink(t *testing.T) {
	s, root := workspace(t, map[string]string{".git/hooks/README": "hooks\n", "docs/keep.md": "keep\n"})
	symlinks(t, root, map[string]string{"swap": ".git/hooks"})
	docs, err := os.OpenRoot(filepath.Join(root, "docs")) // the real docs, wherever it is renamed
	require.NoError(t, err)
	defer docs.Close()
	hooks := filepath.Join(root, ".git", "hooks")

	sw := swap(t, filepath.Join(root, "docs"), filepath.Join(root, "swap"))
	const writes = 600
	var wrote, refused int
	for i := range writes {
		tool, args := tools.WriteFile, js(t, map[string]string{"path": "docs/x.txt", "content": fmt.Sprintf("write %d\n", i)})
		if i%3 == 2 {
			require.NoError(t, docs.WriteFile("x.txt", []byte("old\n"), 0o644))
			tool, args = tools.EditFile, js(t, map[string]string{"path": "docs/x.txt", "old": "old", "new": fmt.Sprintf("edit %d", i)})
		}
		rep := call(t, s, tool, args)
		switch rep.Status {
		case facts.StatusSucceeded:
			wrote++
		default:
			refused++
			require.True(t, strings.Contains(rep.Error, "inside .git") || strings.Contains(rep.Error, "keeps changing while it is opened") || strings.Contains(rep.Error, "changed while it was being opened"),
				"a write is refused for leading into .git, or for a directory that changed under it: %s", rep.Error)
		}
		require.Equal(t, []string{"README"}, names(t, hooks), "write %d (%s) left something in .git/hooks", i, rep.Status)
	}
	sw.halt()
	require.Positive(t, sw.swaps.Load())
	require.Positive(t, wrote, "no write ever landed")
	require.Positive(t, refused, "no write met the symlink")
	got := names(t, filepath.Join(root, "docs"))
	if fi, err := os.Lstat(filepath.Join(root, "docs")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		got = names(t, filepath.Join(root, "swap"))
	}
	require.Equal(t, []string{"keep.md", "x.txt"}, got, "no temporary file is left in docs")
	require.Equal(t, []string{"README"}, names(t, hooks))
}

// A directory swapped for a FIFO, and back, while the file tools open
// paths through it: no call blocks (a FIFO opened as the directory would
// wait for a writer), whatever it finds.
func TestDirSwappedForFIFONeverBlocks(t *testing.T) {
	s, root := workspace(t, map[string]string{"d/x.txt": "old\n"})
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "f"), 0o644))
	sw := swap(t, filepath.Join(root, "d"), filepath.Join(root, "f"))
	for i := range 150 {
		for _, c := range []struct{ tool, args string }{
			{tools.ReadFile, `{"path": "d/x.txt"}`},
			{tools.ListFiles, `{"pattern": "d/*"}`},
			{tools.ListFiles, `{"pattern": "**"}`},
			{tools.WriteFile, js(t, map[string]string{"path": "d/x.txt", "content": fmt.Sprintf("old %d\n", i)})},
			{tools.EditFile, `{"path": "d/x.txt", "old": "old", "new": "old"}`},
			{tools.WriteFile, `{"path": "d/new/y.txt", "content": "y"}`},
		} {
			callWithin(t, s, c.tool, c.args)
		}
		if _, err := s.Resolve("d/x.txt"); err != nil {
			require.NotContains(t, err.Error(), "outside")
		}
	}
	sw.halt()
	require.Positive(t, sw.swaps.Load())
}
