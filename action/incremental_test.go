package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed-7cc7a084/harness/facts"
)

// fresh is what a Workspace that remembers nothing reads now: the ground
// truth an incremental observation must agree with.
func fresh(t *testing.T, root string) Snapshot {
	t.Helper()
	w, err := NewWorkspace(root)
	require.NoError(t, err)
	return observe(t, w)
}

// backdate sets rel's mtime to when, keeping its size: a change the mtime
// does not show.
func backdate(t *testing.T, root, rel string, when time.Time) {
	t.Helper()
	require.NoError(t, os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), when, when))
}

func mtime(t *testing.T, root, rel string) time.Time {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return fi.ModTime()
}

// TestWorkspaceModesAgreeWithAFreshReading changes a tree step by step, in
// every way a worker or a person can, and checks after each step that
// every mode's observation — remembering what it read, with its stat
// record trusted as far as the racy rule allows — is exactly what a
// workspace that remembers nothing reads.
func TestWorkspaceModesAgreeWithAFreshReading(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root, outside := t.TempDir(), t.TempDir()
		p := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
		for i := range 40 {
			put(t, root, fmt.Sprintf("d%d/e%d/f%02d.go", i%4, i%3, i), fmt.Sprint("package p // ", i), 0o644)
		}
		for i := range 600 { // more than one chunk in one directory
			put(t, root, fmt.Sprintf("flat/f%03d", i), fmt.Sprint(i), 0o644)
		}
		put(t, outside, "shared", "linked in", 0o644)
		w := m.settled(t, root)
		steps := []struct {
			name string
			do   func(t *testing.T)
		}{
			{"nothing", func(t *testing.T) {}},
			{"add a file", func(t *testing.T) { put(t, root, "new.txt", "new", 0o644) }},
			{"rewrite, same size, mtime put back", func(t *testing.T) {
				old := mtime(t, root, "d1/e1/f01.go")
				put(t, root, "d1/e1/f01.go", "package q // 1", 0o644)
				backdate(t, root, "d1/e1/f01.go", old)
			}},
			{"rewrite in a big directory", func(t *testing.T) { put(t, root, "flat/f300", "three hundred", 0o644) }},
			{"chmod +x", func(t *testing.T) { require.NoError(t, os.Chmod(p("d2/e2/f02.go"), 0o755)) }},
			{"chmod g+w only", func(t *testing.T) { require.NoError(t, os.Chmod(p("d3/e0/f03.go"), 0o664)) }},
			{"remove a file", func(t *testing.T) { require.NoError(t, os.Remove(p("d0/e0/f00.go"))) }},
			{"mkdir -p with files", func(t *testing.T) {
				put(t, root, "a/b/c/deep.go", "deep", 0o644)
				put(t, root, "a/b/x", "x", 0o644)
			}},
			{"rename a file in its directory", func(t *testing.T) { require.NoError(t, os.Rename(p("a/b/x"), p("a/b/y"))) }},
			{"move a file to another directory", func(t *testing.T) { require.NoError(t, os.Rename(p("a/b/y"), p("d0/y"))) }},
			{"rename a directory", func(t *testing.T) { require.NoError(t, os.Rename(p("a/b"), p("a/renamed"))) }},
			{"change under the renamed directory", func(t *testing.T) { put(t, root, "a/renamed/c/deep.go", "deeper", 0o644) }},
			{"replace a directory with a file", func(t *testing.T) {
				require.NoError(t, os.RemoveAll(p("a/renamed")))
				put(t, root, "a/renamed", "now a file", 0o644)
			}},
			{"replace a file with a directory", func(t *testing.T) {
				require.NoError(t, os.Remove(p("new.txt")))
				put(t, root, "new.txt/inside", "inside", 0o644)
			}},
			{"replace a file with a link", func(t *testing.T) {
				require.NoError(t, os.Remove(p("d0/e1/f04.go")))
				symlink(t, root, "d0/e1/f04.go", "../../flat/f001")
			}},
			{"retarget the link", func(t *testing.T) {
				require.NoError(t, os.Remove(p("d0/e1/f04.go")))
				symlink(t, root, "d0/e1/f04.go", "../../flat/f002")
			}},
			{"a hard link from outside", func(t *testing.T) {
				require.NoError(t, os.Link(filepath.Join(outside, "shared"), p("d2/hard")))
			}},
			{"a change through the link outside, mtime put back", func(t *testing.T) {
				o := filepath.Join(outside, "shared")
				fi, err := os.Stat(o)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(o, []byte("LINKED IN"), 0o644))
				require.NoError(t, os.Chtimes(o, fi.ModTime(), fi.ModTime()))
			}},
			{"git and a nested store change", func(t *testing.T) {
				put(t, root, ".git/index", "index", 0o644)
				put(t, root, "d3/.harness/db/1.log", "log", 0o644)
			}},
			{"a commondir, a hook and a nested repository are planted", func(t *testing.T) {
				put(t, root, ".git/commondir", "../d3", 0o644)
				put(t, root, ".git/hooks/post-checkout", "#!/bin/sh\n", 0o755)
				put(t, root, "d2/.git/config", "[core]\n\tfsmonitor = ./x\n", 0o644)
				put(t, root, "d3/.harness/project.json", "{}", 0o644)
			}},
			{"a pipe appears", func(t *testing.T) { require.NoError(t, syscall.Mkfifo(p("d3/pipe"), 0o644)) }},
			{"remove a tree", func(t *testing.T) { require.NoError(t, os.RemoveAll(p("d1"))) }},
			{"the tree comes back, other contents", func(t *testing.T) { put(t, root, "d1/e1/f01.go", "back", 0o644) }},
			{"empty a big directory", func(t *testing.T) {
				require.NoError(t, os.RemoveAll(p("flat")))
				require.NoError(t, os.Mkdir(p("flat"), 0o755))
			}},
		}
		for _, s := range steps {
			s.do(t)
			got, want := observe(t, w), fresh(t, root)
			require.Equal(t, want.Files, got.Files, "after %q", s.name)
			require.Equal(t, want.Hash, got.Hash, "after %q", s.name)
		}
	})
}

// TestWorkspaceFindsAFileChangedBehindTheCache: a file rewritten with the
// same size and its mtime put back is still seen to change — whether its
// reading was racily clean (the real clock: it was written just now) or
// clean (the stat record's ctime, which no one can put back, moved), and,
// with the feed, because the feed reported the write.
func TestWorkspaceFindsAFileChangedBehindTheCache(t *testing.T) {
	for _, clock := range []string{"racily clean", "clean"} {
		t.Run(clock, func(t *testing.T) {
			forModes(t, func(t *testing.T, m testMode) {
				root := t.TempDir()
				put(t, root, "cache.toml", "ttl_seconds = 100", 0o644)
				put(t, root, "other", "o", 0o644)
				old := mtime(t, root, "cache.toml")
				w, err := m.newWorkspace(t, root)
				require.NoError(t, err)
				if clock == "clean" {
					w.now = func() time.Time { return time.Now().Add(time.Hour) }
				}
				before := observe(t, w)
				if clock == "clean" {
					e := remembered(w, "cache.toml")
					require.NotNil(t, e)
					require.True(t, e.clean, "the reading is remembered as clean: only the stat record can tell")
				}
				put(t, root, "cache.toml", "ttl_seconds = 300", 0o644)
				backdate(t, root, "cache.toml", old)
				after := observe(t, w)
				require.Equal(t, []facts.PathChange{{Path: "cache.toml", Before: sum("ttl_seconds = 100"), After: sum("ttl_seconds = 300"), BeforeMode: 0o644, AfterMode: 0o644}},
					Diff(before, after))
			})
		})
	}
}

// TestFeedFindsWhatTheStatRecordHides: on a file system whose stat record
// cannot tell a rewrite (no ctime, say — simulated by making the reading
// remember the new stat record), a stat-only re-validation trusts the
// cache, by design; the feed saw the write and the file is read again.
func TestFeedFindsWhatTheStatRecordHides(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	for _, m := range []testMode{{name: "memory"}, {name: "feed", feed: true}} {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			put(t, root, "f", "aaaa", 0o644)
			w := m.settled(t, root)
			observe(t, w)
			put(t, root, "f", "bbbb", 0o644)
			d, err := openRootDir(root)
			require.NoError(t, err)
			st, err := d.lstat("f")
			d.close()
			require.NoError(t, err)
			replant(t, w, "f", func(e *entry) { e.key = st.key })
			f, _ := file(observe(t, w), "f")
			if m.feed {
				require.Equal(t, sum("bbbb"), f.Digest, "the feed reported the write")
			} else {
				require.Equal(t, sum("aaaa"), f.Digest, "what the stat record cannot see is not seen without a feed")
			}
		})
	}
}

// listings counts the directories a workspace opens below the root, and
// the files it reads.
type listings struct {
	mu          sync.Mutex
	lists, read int
}

func countOps(w *Workspace) *listings {
	l := &listings{}
	w.before = func(op, _ string) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		if op == "list" {
			l.lists++
		} else {
			l.read++
		}
		return nil
	}
	return l
}

func (l *listings) take() (lists, reads int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lists, reads, l.lists, l.read = l.lists, l.read, 0, 0
	return lists, reads
}

// bigTree makes 10 × 10 directories of 10 files.
func bigTree(t *testing.T) string {
	root := t.TempDir()
	for i := range 1000 {
		put(t, root, fmt.Sprintf("d%d/e%d/f%03d", i%10, (i/10)%10, i), fmt.Sprint(i), 0o644)
	}
	return root
}

// TestFeedLooksOnlyAtWhatChanged: with the feed, an observation of an
// unchanged tree opens no directory and reads no file; one change opens
// the directories above it and reads it. Without one, every directory is
// opened (and every entry stat'ed), and still only the change is read.
func TestFeedLooksOnlyAtWhatChanged(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	for _, m := range []testMode{{name: "memory"}, {name: "feed", feed: true}} {
		t.Run(m.name, func(t *testing.T) {
			root := bigTree(t)
			w := m.settled(t, root)
			ops := countOps(w)
			observe(t, w)
			lists, reads := ops.take()
			require.Equal(t, 110, lists)
			require.Equal(t, 1000, reads)

			s := observe(t, w)
			lists, reads = ops.take()
			require.Zero(t, reads)
			if m.feed {
				require.Zero(t, lists, "nothing reported, nothing to look at")
			} else {
				require.Equal(t, 110, lists)
			}
			require.Equal(t, fresh(t, root), s)

			put(t, root, "d3/e7/f173", "changed", 0o644)
			s = observe(t, w)
			lists, reads = ops.take()
			require.Equal(t, 1, reads)
			if m.feed {
				require.Equal(t, 2, lists, "d3 and d3/e7")
			} else {
				require.Equal(t, 110, lists)
			}
			require.Equal(t, fresh(t, root), s)
		})
	}
}

// TestFeedOverflowFallsBackToTheWalk: events the kernel's queue could not
// hold are lost; the observation after an overflow looks at everything,
// sees what changed meanwhile, and the feed is made again.
func TestFeedOverflowFallsBackToTheWalk(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	require.NoError(t, err)
	var limit int
	_, err = fmt.Sscan(strings.TrimSpace(string(b)), &limit)
	require.NoError(t, err)

	root := bigTree(t)
	w, err := testMode{feed: true}.newWorkspace(t, root, WithChangeFeed(true))
	require.NoError(t, err)
	w.now = func() time.Time { return time.Now().Add(time.Hour) }
	var hold sync.RWMutex
	w.feedHold = &hold
	ops := countOps(w)
	observe(t, w)
	ops.take()
	epoch := w.epoch

	hold.Lock() // the feed takes no event: the kernel's queue fills
	put(t, root, "d5/e5/f555", "changed while nobody listened", 0o644)
	a, c := filepath.Join(root, "d0/e0/f000"), filepath.Join(root, "d0/e0/f100")
	for i := range limit + 4096 + 100 {
		mode := os.FileMode(0o644)
		if i%4 < 2 {
			mode = 0o600
		}
		require.NoError(t, os.Chmod([]string{a, c}[i%2], mode))
	}
	hold.Unlock()

	s := observe(t, w)
	lists, _ := ops.take()
	require.Equal(t, 110, lists, "after an overflow everything is looked at")
	require.Greater(t, w.epoch, epoch, "the watches were made again")
	require.Equal(t, fresh(t, root), s)
	f, _ := file(s, "d5/e5/f555")
	require.Equal(t, sum("changed while nobody listened"), f.Digest)

	put(t, root, "d6/e6/f666", "after", 0o644)
	s = observe(t, w)
	lists, _ = ops.take()
	require.Equal(t, 2, lists, "the new feed vouches again")
	require.Equal(t, fresh(t, root), s)
}

// TestFeedWatchLimitFallsBackToTheWalk: when a watch cannot be added (the
// kernel's limit on watches), the feed stops, says why, and the workspace
// walks as without one — still seeing every change.
func TestFeedWatchLimitFallsBackToTheWalk(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	root := bigTree(t)
	w, err := testMode{}.newWorkspace(t, root, WithChangeFeed(true))
	require.NoError(t, err)
	w.now = func() time.Time { return time.Now().Add(time.Hour) }
	w.watchHook = func(rel string) error {
		if rel == "d4/e2" {
			return syscall.ENOSPC
		}
		return nil
	}
	ops := countOps(w)
	require.Equal(t, fresh(t, root), observe(t, w))
	on, why := w.Feed()
	require.False(t, on)
	require.ErrorIs(t, why, syscall.ENOSPC)
	require.ErrorContains(t, why, "d4/e2")
	require.ErrorContains(t, why, "max_user_watches")
	ops.take()

	put(t, root, "d4/e2/f042", "changed", 0o644)
	require.Equal(t, fresh(t, root), observe(t, w))
	lists, reads := ops.take()
	require.Equal(t, 110, lists, "without the feed every directory is looked at")
	require.Equal(t, 1, reads)
}

// TestFeedIsOffWhereItCannotBeTrusted: the feed is used on a local file
// system only; a Workspace that does not want one has none.
func TestFeedIsOffWhereItCannotBeTrusted(t *testing.T) {
	ok, _, err := localFS(t.TempDir())
	require.NoError(t, err)
	require.Equal(t, feedSupported, ok, "a test's temporary directory is on a local file system")

	w, err := NewWorkspace(t.TempDir())
	require.NoError(t, err)
	observe(t, w)
	on, why := w.Feed()
	require.False(t, on)
	require.NoError(t, why, "none was wanted: nothing to explain")
}

// inotifyOpen reports whether descriptor fd of this process is an inotify
// instance.
func inotifyOpen(fd int) bool {
	target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	return err == nil && strings.Contains(target, "inotify")
}

// TestFeedCloseReleasesIt: Close releases the feed's inotify instance and
// leaves no goroutine behind; observing after Close is an error.
func TestFeedCloseReleasesIt(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root := bigTree(t)
	w, err := NewWorkspace(root, WithChangeFeed(true))
	require.NoError(t, err)
	observe(t, w)
	f := w.feed
	require.True(t, inotifyOpen(f.fd))
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "closing twice is harmless")
	require.True(t, f.isClosed())
	require.False(t, inotifyOpen(f.fd))
	_, err = w.Observe(context.Background())
	require.ErrorIs(t, err, errClosed)
}

// TestFeedOfAWorkspaceNeverClosed: a Workspace dropped without Close
// still releases its feed once it is collected.
func TestFeedOfAWorkspaceNeverClosed(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this platform")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root := bigTree(t)
	var f *feed
	func() {
		w, err := NewWorkspace(root, WithChangeFeed(true))
		require.NoError(t, err)
		observe(t, w)
		f = w.feed
	}()
	require.Eventually(t, func() bool {
		runtime.GC()
		return f.isClosed()
	}, 10*time.Second, 10*time.Millisecond, "the feed is closed")
	require.False(t, inotifyOpen(f.fd))
}

// replant changes what the workspace remembers of the entry at rel.
func replant(t testing.TB, w *Workspace, rel string, change func(*entry)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var re func(r *dirRec, parts []string) *dirRec
	re = func(r *dirRec, parts []string) *dirRec {
		c := *r
		c.ents = append([]entry(nil), r.ents...)
		j := c.find(parts[0])
		require.GreaterOrEqual(t, j, 0, rel)
		if len(parts) == 1 {
			change(&c.ents[j])
		} else {
			c.ents[j].dir = re(c.ents[j].dir, parts[1:])
		}
		c.finish(w.epoch)
		return &c
	}
	w.tree = re(w.tree, strings.Split(rel, "/"))
	w.hash = treeHash(w.tree.sum)
}

// TestPathKeyCompare: entries order as their paths do, a directory's name
// standing for every path under it.
func TestPathKeyCompare(t *testing.T) {
	parts := []string{"a", "b", ".", "-", "0", "~", "é"}
	var names []string
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		if prefix != "" {
			names = append(names, prefix)
		}
		if depth == 3 {
			return
		}
		for _, p := range parts {
			gen(prefix+p, depth+1)
		}
	}
	gen("", 0)
	sign := func(c int) int { return min(max(c, -1), 1) }
	for _, a := range names {
		for _, b := range names {
			for _, ka := range []byte{kindFile, kindDir} {
				for _, kb := range []byte{kindFile, kindDir} {
					ea, eb := entry{name: a, kind: ka}, entry{name: b, kind: kb}
					want := strings.Compare(pathKey(&ea)+"\x01", pathKey(&eb)+"\x01")
					if a == b && ka != kb {
						continue // one name is one entry
					}
					require.Equal(t, sign(want), sign(pathKeyCompare(&ea, &eb)), "%q(%c) vs %q(%c)", a, ka, b, kb)
				}
			}
		}
	}
}
