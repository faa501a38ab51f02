package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFeedWalkOfAFewPathsStaysAlone: changes the feed reports in several
// directories — a write, a new file, a removal, in three subtrees — are
// walked by the caller alone: no worker is started, none is woken. The
// reading is still exactly a fresh one.
func TestFeedWalkOfAFewPathsStaysAlone(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	root := t.TempDir()
	for i := range 40 {
		put(t, root, fmt.Sprintf("d%02d/e/f/file%d", i, i), fmt.Sprint(i), 0o644)
	}
	w := settled(t, root, WithChangeFeed(true))
	defer w.Close()
	observe(t, w)

	put(t, root, "d03/e/f/file3", "three", 0o644)
	put(t, root, "d07/e/f/new", "new", 0o644)
	require.NoError(t, os.Remove(filepath.Join(root, "d20/e/f/file20")))
	w.started.Store(0)
	s := observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})
	require.Zero(t, w.started.Load(), "three paths the feed reported are walked by the caller")
}

// TestFeedWalkOfABigChangeIsShared: what the feed cannot vouch for in
// bulk — a new tree of 400 files, or 300 files rewritten — is still
// shared among workers once the walk has looked at a few entries alone.
func TestFeedWalkOfABigChangeIsShared(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	root := t.TempDir()
	for i := range 300 {
		put(t, root, fmt.Sprintf("old/d%02d/f%03d", i%30, i), fmt.Sprint(i), 0o644)
	}
	w := settled(t, root, WithChangeFeed(true))
	defer w.Close()
	observe(t, w)

	for i := range 400 {
		put(t, root, fmt.Sprintf("new/d%02d/f%03d", i%20, i), fmt.Sprint(i), 0o644)
	}
	w.started.Store(0)
	s := observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})
	require.NotZero(t, w.started.Load(), "a new tree is walked in parallel")

	for i := range 300 {
		put(t, root, fmt.Sprintf("old/d%02d/f%03d", i%30, i), fmt.Sprint("again ", i), 0o644)
	}
	w.started.Store(0)
	s = observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})
	require.NotZero(t, w.started.Load(), "300 rewritten files are read in parallel")
}

// TestFeedReadsTheQueueDry: a change that leaves more events than one
// read of the queue takes (600 new files with long names: about 400 KiB
// of events, the read buffer is 64 KiB) is seen whole; sync stops after
// one read only when that read had room left.
func TestFeedReadsTheQueueDry(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	root := t.TempDir()
	put(t, root, "d/seed", "seed", 0o644)
	w := settled(t, root, WithChangeFeed(true))
	defer w.Close()
	observe(t, w)

	long := strings.Repeat("n", 200)
	for i := range 600 {
		put(t, root, fmt.Sprintf("d/%s%04d", long, i), fmt.Sprint(i), 0o644)
	}
	// The listing of d alone would find the new names: make their content
	// what only the events tell apart, by writing each again after the
	// observation below lists d.
	s := observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})
	for i := range 600 {
		put(t, root, fmt.Sprintf("d/%s%04d", long, i), fmt.Sprint("again ", i), 0o644)
	}
	s = observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})
	on, why := w.Feed()
	require.True(t, on, "the feed is still on: %v", why)
}

// TestFeedReadOfAFileThatGrows: with the feed on, a read that comes back
// short with the size lstat gave ends the file; a file that grew after
// lstat is read to its end, is not remembered as clean, and the feed's
// event for the growth makes the next observation read it again.
func TestFeedReadOfAFileThatGrows(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	root := t.TempDir()
	put(t, root, "d/f", "aaaa", 0o644)
	put(t, root, "d/big", strings.Repeat("x", 100<<10), 0o644)
	w := settled(t, root, WithChangeFeed(true))
	defer w.Close()
	observe(t, w)

	put(t, root, "d/f", "bbbb", 0o644)
	put(t, root, "d/big", strings.Repeat("y", 100<<10), 0o644)
	grow := map[string]string{"d/f": "cccc", "d/big": strings.Repeat("z", 70<<10)}
	w.before = func(op, rel string) error {
		if more, ok := grow[rel]; ok && op == "read" {
			delete(grow, rel)
			f, err := os.OpenFile(filepath.Join(root, rel), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(more)
			return err
		}
		return nil
	}
	s := observe(t, w)
	f, _ := file(s, "d/f")
	require.Equal(t, sum("bbbbcccc"), f.Digest, "read to its end")
	big, _ := file(s, "d/big")
	require.Equal(t, sum(strings.Repeat("y", 100<<10)+strings.Repeat("z", 70<<10)), big.Digest)
	w.mu.Lock()
	d := w.tree.ents[w.tree.find("d")].dir
	for _, name := range []string{"f", "big"} {
		require.False(t, d.ents[d.find(name)].clean, "%s read more than lstat said: not clean", name)
	}
	w.mu.Unlock()
	s = observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})
}

// TestStatCacheSkipsUnsettledListings: a name that comes and goes in a
// directory between observations (git's index.lock, with every git
// command) moves the directory's times but not its listing: while the
// listing is not clean, its record is not kept again; a new process
// starting from the record kept before lists it again and reads nothing
// it need not; once the listing settles, it is kept. In every mode.
func TestStatCacheSkipsUnsettledListings(t *testing.T) {
	for _, feed := range []bool{false, true} {
		t.Run(fmt.Sprint("feed=", feed), func(t *testing.T) {
			root := t.TempDir()
			for i := range 10 {
				put(t, root, fmt.Sprintf(".git/objects/f%02d", i), fmt.Sprint("object ", i), 0o644)
				put(t, root, fmt.Sprintf("src/f%02d", i), fmt.Sprint("file ", i), 0o644)
			}
			time.Sleep(50 * time.Millisecond)
			since := time.Now()
			time.Sleep(50 * time.Millisecond)
			clock := func() time.Time { return since }
			meta := newMemMeta()
			w, err := NewWorkspace(root, WithStatCache(meta), WithRacyWindow(0), WithChangeFeed(feed))
			require.NoError(t, err)
			defer w.Close()
			w.now = clock
			first := observe(t, w)
			kept := meta.puts

			lock := filepath.Join(root, ".git", "index.lock")
			for round := range 3 {
				require.NoError(t, os.WriteFile(lock, []byte("lock"), 0o644))
				require.NoError(t, os.Remove(lock))
				s := observe(t, w)
				require.Equal(t, first.Hash, s.Hash)
				require.Equal(t, kept, meta.puts, "round %d: only .git's times moved, and its listing is not clean", round)
			}

			// A new process lists .git again (its key moved on since
			// the record) and reads nothing.
			w2, err := NewWorkspace(root, WithStatCache(meta), WithRacyWindow(0))
			require.NoError(t, err)
			w2.now = clock
			r := countReads(w2)
			s := observe(t, w2)
			require.Equal(t, []string{}, r.take())
			require.Equal(t, fresh(t, root), s)

			// A name that stays is kept at once, unsettled or not.
			require.NoError(t, os.WriteFile(lock, []byte("lock"), 0o644))
			observe(t, w)
			require.Greater(t, meta.puts, kept, "a new listing is kept")
			require.NoError(t, os.Remove(lock))
			observe(t, w)
			kept = meta.puts

			// Settled: kept, and a new process reads nothing.
			later := func() time.Time { return time.Now().Add(time.Hour) }
			w.now = later
			observe(t, w)
			require.Greater(t, meta.puts, kept, "settled: kept")
			w3, err := NewWorkspace(root, WithStatCache(meta))
			require.NoError(t, err)
			w3.now = later
			l := countOps(w3)
			s = observe(t, w3)
			require.Equal(t, fresh(t, root), s)
			lists, reads := l.take()
			require.Zero(t, reads)
			require.Equal(t, 2, lists, ".git and src opened")
		})
	}
}

// TestFeedKeptRootFollowsThePath: with the feed on, the root's descriptor
// is kept between observations, and each checks that the root's path
// still names it. A directory above the root moved away, and another tree
// made at the root's path, is what the next observation reads — not the
// directory the kept descriptor holds, wherever it went.
func TestFeedKeptRootFollowsThePath(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	top := t.TempDir()
	root := filepath.Join(top, "p", "ws")
	put(t, root, "d/f", "first tree", 0o644)
	w := settled(t, root, WithChangeFeed(true))
	defer w.Close()
	s := observe(t, w)
	require.True(t, w.box.root().ok, "the root is kept while the feed runs")
	// The root's listing, read again on the descriptor kept, is whole.
	for _, name := range []string{"top1", "top2"} {
		put(t, root, name, name, 0o644)
		s := observe(t, w)
		require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})
	}

	require.NoError(t, os.Rename(filepath.Join(top, "p"), filepath.Join(top, "moved")))
	put(t, root, "d/f", "second tree", 0o644)
	put(t, root, "e/g", "only here", 0o644)
	s = observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})

	// The moved tree changes; the root's does not see it.
	put(t, filepath.Join(top, "moved", "ws"), "d/f", "changed where it went", 0o644)
	put(t, root, "e/g", "changed here", 0o644)
	s = observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})

	require.NoError(t, w.Close())
	require.False(t, w.box.root().ok, "Close releases the root")
}

// TestChangedBytesArePutWithoutAsking: small new bytes of a file the
// reading knew go straight to PutBlob (the store does not keep them
// twice); bytes of a file the reading did not know, and big bytes, are
// asked about first, and not put when the store has them.
func TestChangedBytesArePutWithoutAsking(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		big := strings.Repeat("b", askAbove+1)
		put(t, root, "d/f", "one", 0o644)
		put(t, root, "d/big", big, 0o644)
		b := &askingBlobs{memBlobs: memBlobs{m: map[string][]byte{}}}
		w, err := m.newWorkspace(t, root, WithBlobs(b, 0))
		require.NoError(t, err)
		w.now = func() time.Time { return time.Now().Add(time.Hour) }
		observe(t, w)
		has0, puts0 := b.asked()
		require.Equal(t, 2, has0, "files the reading did not know: asked first")
		require.Equal(t, 2, puts0)

		put(t, root, "d/f", "two", 0o644)
		observe(t, w)
		has, puts := b.asked()
		require.Equal(t, has0, has, "new small bytes of a known file: not asked")
		require.Equal(t, puts0+1, puts)

		put(t, root, "d/f", "one", 0o644) // back to bytes the store has
		put(t, root, "d/big", strings.Repeat("c", askAbove+1), 0o644)
		observe(t, w)
		has, puts = b.asked()
		require.Equal(t, has0+1, has, "big bytes: asked")
		require.Equal(t, puts0+3, puts)
		require.Len(t, b.m, 4, "one, two and the two big contents, each kept once")
		got, err := b.GetBlob(context.Background(), sum("one"))
		require.NoError(t, err)
		require.Equal(t, "one", string(got))
	})
}

// TestFeedTrustsAQuietDirectory: a directory the walk passes through for
// a change below it, of which the feed reported nothing, is not described
// again; its record stays what its stat record says — a change of its
// mode or times raises an event, and it is described then.
func TestFeedTrustsAQuietDirectory(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	root := t.TempDir()
	put(t, root, "a/b/c/f", "f", 0o644)
	put(t, root, "a/b/c/g", "g", 0o644)
	w := settled(t, root, WithChangeFeed(true))
	defer w.Close()
	observe(t, w)
	agree := func(step string) {
		t.Helper()
		s := observe(t, w)
		require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files}, step)
		w.mu.Lock()
		defer w.mu.Unlock()
		r := w.tree
		for _, rel := range []string{"a", "a/b", "a/b/c"} {
			_, name := splitRel(rel)
			r = r.ents[r.find(name)].dir
			d, err := openRootDir(filepath.Join(root, filepath.FromSlash(rel)))
			require.NoError(t, err)
			st, err := d.stat()
			d.close()
			require.NoError(t, err)
			require.Equal(t, st.key, r.key, "%s: the record of %s", step, rel)
		}
	}
	put(t, root, "a/b/c/f", "F", 0o644)
	agree("a write below")
	require.NoError(t, os.Chmod(filepath.Join(root, "a", "b"), 0o700))
	put(t, root, "a/b/c/f", "f again", 0o644)
	agree("a/b's mode changed")
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(root, "a", "b", "c"), old, old))
	put(t, root, "a/b/c/g", "G", 0o644)
	agree("a/b/c's times changed")
}
