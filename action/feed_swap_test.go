package action

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A directory the feed vouches for, which the walk only passes through, is
// swapped for another after the feed was read and before the walk opens
// it: the reading is one the workspace was in (the new directory in
// full), not the new directory's files in the old one's listing.
func TestFeedQuietDirectorySwappedDuringTheWalk(t *testing.T) {
	if !feedSupported {
		t.Skip()
	}
	root := t.TempDir()
	out := t.TempDir()
	put(t, root, "sub/x", "1", 0o644)
	put(t, root, "sub/y", "y", 0o644)
	put(t, out, "new/x", "evil", 0o644)
	put(t, out, "new/z", "z", 0o644)
	w := settled(t, root, WithChangeFeed(true))
	defer w.Close()
	observe(t, w)

	put(t, root, "sub/x", "2", 0o644) // the feed: sub/x written, sub only passed through
	swapped := false
	w.before = func(op, rel string) error {
		if op == "list" && rel == "sub" && !swapped {
			swapped = true
			require.NoError(t, os.Rename(filepath.Join(root, "sub"), filepath.Join(out, "old")))
			require.NoError(t, os.Rename(filepath.Join(out, "new"), filepath.Join(root, "sub")))
		}
		return nil
	}
	s := observe(t, w)
	require.True(t, swapped)
	w.before = nil
	f := fresh(t, root)
	s2 := observe(t, w)
	require.Equal(t, f, Snapshot{Hash: s2.Hash, Files: s2.Files}, "the next reading catches up")
	require.Equal(t, f, Snapshot{Hash: s.Hash, Files: s.Files}, "the reading is one the workspace was in")
}

// The same, with a symbolic link put in the directory's place.
func TestFeedQuietDirectorySwappedForALink(t *testing.T) {
	if !feedSupported {
		t.Skip()
	}
	root := t.TempDir()
	out := t.TempDir()
	put(t, root, "sub/x", "1", 0o644)
	put(t, out, "new/x", "evil", 0o644)
	w := settled(t, root, WithChangeFeed(true))
	defer w.Close()
	observe(t, w)
	put(t, root, "sub/x", "2", 0o644)
	w.before = func(op, rel string) error {
		if op == "list" && rel == "sub" {
			w.before = nil
			require.NoError(t, os.Rename(filepath.Join(root, "sub"), filepath.Join(out, "old")))
			require.NoError(t, os.Symlink(filepath.Join(out, "new"), filepath.Join(root, "sub")))
		}
		return nil
	}
	s := observe(t, w)
	f := fresh(t, root)
	require.Equal(t, f, Snapshot{Hash: s.Hash, Files: s.Files})
	s2 := observe(t, w)
	require.Equal(t, f, Snapshot{Hash: s2.Hash, Files: s2.Files})
}
