package action

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// digests counts the directory digests a workspace computes.
type digests struct {
	w    *Workspace
	m    testMode
	last uint64
}

// since returns how many directory digests were computed since the last
// call. In the mode where every observation is a new process's (the
// stat cache in a store, no feed) every directory is hashed once, from
// its kept record: dirs is how many there are; in the others, what
// changed is (inMemory).
func (d *digests) since(inMemory, dirs int) int {
	n := d.w.digests.Load()
	got := int(n - d.last)
	d.last = n
	if d.m.store && !d.m.feed {
		return got - dirs + inMemory
	}
	return got
}

// changedPaths is the paths of a list of changes, in order.
func changedPaths(cs []facts.PathChange) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

// TestTreeRehashesOnlyTheDirectoriesAboveAChange: in every mode, an
// observation of an unchanged tree computes no directory digest, and a
// change deep in a big tree rehashes exactly the directories on the way
// from it to the root, and is found (the reading is what a fresh one is,
// and the diff names it alone).
func TestTreeRehashesOnlyTheDirectoriesAboveAChange(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := bigTree(t) // 10 × 10 directories of 10 files: 111 directories with the root
		deep := strings.Repeat("deep/", 20) + "leaf.go"
		put(t, root, deep, "package deep", 0o644)
		w := m.settled(t, root)
		const dirs = 111 + 20
		d := &digests{w: w, m: m}

		s0 := observe(t, w)
		require.Equal(t, dirs, d.since(dirs, dirs), "the first reading hashes every directory once")

		s := observe(t, w)
		require.Zero(t, d.since(0, dirs), "nothing changed: no directory is hashed again")
		require.Equal(t, s0.Hash, s.Hash)

		// A change in place 20 directories down: the directory's own
		// times do not move, only the file's stat record does.
		put(t, root, deep, "package deeper", 0o644)
		s = observe(t, w)
		require.Equal(t, 21, d.since(21, dirs), "the 20 directories above the file and the root")
		require.Equal(t, fresh(t, root), s)
		require.Equal(t, []string{deep}, changedPaths(Diff(s0, s)))

		// A file in place in one of the hundred leaf directories.
		before := s
		put(t, root, "d3/e7/f173", "changed", 0o644)
		s = observe(t, w)
		require.Equal(t, 3, d.since(3, dirs), "d3/e7, d3 and the root")
		require.Equal(t, fresh(t, root), s)
		require.Equal(t, []string{"d3/e7/f173"}, changedPaths(Diff(before, s)))

		// A file put back with its old mtime (touch -d): the size and the
		// ctime give it away.
		before = s
		old := mtime(t, root, "d1/e1/f011")
		put(t, root, "d1/e1/f011", "touched back", 0o644)
		backdate(t, root, "d1/e1/f011", old)
		s = observe(t, w)
		require.Equal(t, 3, d.since(3, dirs))
		require.Equal(t, []string{"d1/e1/f011"}, changedPaths(Diff(before, s)))

		s = observe(t, w)
		require.Zero(t, d.since(0, dirs))
	})
}

// TestTreeDirectoryReplacedByAFile: a directory replaced by a file of the
// same name, and back, is seen as its files gone and the file come (and
// the other way), rehashing the parent and the root only.
func TestTreeDirectoryReplacedByAFile(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := bigTree(t)
		w := m.settled(t, root)
		d := &digests{w: w, m: m}
		s0 := observe(t, w)
		d.since(0, 0)

		require.NoError(t, os.RemoveAll(filepath.Join(root, "d5", "e2")))
		put(t, root, "d5/e2", "now a file", 0o644)
		s1 := observe(t, w)
		require.Equal(t, 2, d.since(2, 110), "d5 and the root")
		require.Equal(t, fresh(t, root), s1)
		var want []string
		for i := range 1000 {
			if i%10 == 5 && (i/10)%10 == 2 {
				want = append(want, fmt.Sprintf("d5/e2/f%03d", i))
			}
		}
		want = append([]string{"d5/e2"}, want...)
		require.Equal(t, want, changedPaths(Diff(s0, s1)))

		// And back: the file replaced by a directory with other content.
		require.NoError(t, os.Remove(filepath.Join(root, "d5", "e2")))
		put(t, root, "d5/e2/only", "one file", 0o644)
		s2 := observe(t, w)
		require.Equal(t, 3, d.since(3, 111), "d5/e2, d5 and the root")
		require.Equal(t, fresh(t, root), s2)
		require.Equal(t, []string{"d5/e2", "d5/e2/only"}, changedPaths(Diff(s1, s2)))
	})
}

// TestTreeSymlinkLoops: links that loop — to themselves, to each other,
// to the directory they are in, to its parent — are observed as links
// (their targets hashed), never followed, so the observation ends; a loop
// retargeted is a change of that link alone.
func TestTreeSymlinkLoops(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := bigTree(t)
		symlink(t, root, "loop/self", "self")
		symlink(t, root, "loop/a", "b")
		symlink(t, root, "loop/b", "a")
		symlink(t, root, "loop/here", ".")
		symlink(t, root, "loop/up", "..")
		symlink(t, root, "d1/e1/root", "../../..")
		symlink(t, root, "d1/e1/abs", root)
		w := m.settled(t, root)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s0, err := w.Observe(ctx)
		require.NoError(t, err)
		require.Len(t, s0.Files, 1000+7, "the links are listed, nothing is reached through them")
		for _, f := range s0.Files {
			if strings.HasPrefix(f.Path, "loop/") {
				require.Equal(t, os.ModeSymlink, f.Mode.Type(), f.Path)
			}
		}
		require.Equal(t, fresh(t, root), s0)

		d := &digests{w: w, m: m}
		d.since(0, 0)
		require.NoError(t, os.Remove(filepath.Join(root, "loop", "a")))
		symlink(t, root, "loop/a", "a")
		s1 := observe(t, w)
		require.Equal(t, 2, d.since(2, 112), "loop and the root")
		require.Equal(t, fresh(t, root), s1)
		require.Equal(t, []string{"loop/a"}, changedPaths(Diff(s0, s1)))
	})
}

// TestStatKeyHasTheDevice: the stat cache's key is git's — device, inode,
// mtime, ctime and size: a file remembered on another device (a mount
// over its directory: root's doing) with every other field the same is
// read again, not taken from the cache.
func TestStatKeyHasTheDevice(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the device is in the key on Linux")
	}
	root := t.TempDir()
	put(t, root, "d/f", "real", 0o644)
	w := testMode{}.settled(t, root)
	observe(t, w)
	e := remembered(w, "d/f")
	require.NotZero(t, e.key.dev)
	e.key.dev++
	r := countReads(w)
	observe(t, w)
	require.Equal(t, []string{"d/f"}, r.take())
}

// TestStatCacheIgnoresOldRecords: a record kept by an earlier version
// (version 1, without the device) does not decode: the directory is read
// again, as with no record.
func TestStatCacheIgnoresOldRecords(t *testing.T) {
	root := t.TempDir()
	put(t, root, "sub/a", "a", 0o644)
	w := testMode{}.settled(t, root)
	observe(t, w)
	enc := encodeRec(w.tree.ents[w.tree.find("sub")].dir)
	_, err := decodeRec("sub", enc)
	require.NoError(t, err)
	old := append([]byte{1}, enc[1:len(enc)-4]...)
	old = binary.LittleEndian.AppendUint32(old, crc32.Checksum(old, castagnoli))
	_, err = decodeRec("sub", old)
	require.ErrorIs(t, err, errBadRec)
}
