package action

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// sparse makes root/rel a sparse file of size bytes: no disk used.
func sparse(t *testing.T, root, rel string, size int64) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Truncate(p, size))
}

// writeAt writes b into root/rel at off, keeping its size when it fits.
func writeAt(t *testing.T, root, rel string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(rel)), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// ctimeOf is rel's ctime, ns.
func ctimeOf(t *testing.T, root, rel string) int64 {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	_, c := inoCtime(fi.Sys())
	return c
}

const tenGiB = 10 << 30

// TestHugeFileIsKnownByItsStatRecord: a 10 GiB sparse file is never read
// (the read hook never names it) in any mode: its digest is a stat
// digest, its size the stat record's, and its bytes are not kept. It
// stays unchanged across observations and across a new Workspace over
// the same stat cache; a byte appended, a write in the middle that keeps
// its size (with its mtime put back), or a new inode under its name shows
// as modified; a small file beside it is read and hashed as ever.
func TestHugeFileIsKnownByItsStatRecord(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		ctx := context.Background()
		root := t.TempDir()
		put(t, root, "small.txt", "small\n", 0o644)
		sparse(t, root, "big.bin", tenGiB)
		s := openStore(t, t.TempDir())
		defer s.Close()
		w := m.settled(t, root, WithBlobs(s, 0))
		r := countReads(w)

		first := observe(t, w)
		require.Equal(t, []string{"small.txt"}, r.take(), "the big file is not read")
		big, ok := file(first, "big.bin")
		require.True(t, ok)
		require.True(t, facts.IsStatDigest(big.Digest), big.Digest)
		require.Len(t, big.Digest, len(facts.StatDigestPrefix)+64)
		require.EqualValues(t, tenGiB, big.Size)
		has, err := s.HasBlob(ctx, strings.TrimPrefix(big.Digest, facts.StatDigestPrefix))
		require.NoError(t, err)
		require.False(t, has, "nothing of it is kept")
		fi, err := os.Lstat(filepath.Join(root, "big.bin"))
		require.NoError(t, err)
		require.Equal(t, big.Digest, StatDigest(fi), "what an undo compares, without reading")
		small, _ := file(first, "small.txt")
		require.False(t, facts.IsStatDigest(small.Digest))

		again := observe(t, w)
		require.Empty(t, r.take())
		require.Equal(t, first.Hash, again.Hash, "untouched: unchanged")
		require.Empty(t, Diff(first, again))

		// A new process over the same stat cache (the store mode shares
		// one Meta between its Workspaces only through w's; use w's).
		w2 := m.settled(t, root, WithBlobs(s, 0), WithStatCache(w.meta))
		r2 := countReads(w2)
		other := observe(t, w2)
		require.Equal(t, first.Hash, other.Hash, "another Workspace: the same digest")
		if w.meta != nil {
			require.Empty(t, r2.take(), "the stat cache spares even the small file")
		}

		// One byte appended.
		f, err := os.OpenFile(filepath.Join(root, "big.bin"), os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.Write([]byte{1})
		require.NoError(t, err)
		require.NoError(t, f.Close())
		grown := observe(t, w)
		require.Empty(t, r.take())
		require.Equal(t, []facts.PathChange{{Path: "big.bin", Before: big.Digest, After: mustFile(t, grown, "big.bin").Digest,
			BeforeMode: PathMode(big.Mode), AfterMode: PathMode(big.Mode)}}, Diff(first, grown))
		require.True(t, facts.IsStatDigest(mustFile(t, grown, "big.bin").Digest))

		// A write in the middle, the size kept, the mtime put back: the
		// ctime moved, and so did the digest.
		was := mtime(t, root, "big.bin")
		c0 := ctimeOf(t, root, "big.bin")
		waitCtimeTick(t, root, c0)
		writeAt(t, root, "big.bin", tenGiB/2, []byte("hidden?"))
		backdate(t, root, "big.bin", was)
		require.NotEqual(t, c0, ctimeOf(t, root, "big.bin"))
		middle := observe(t, w)
		require.Empty(t, r.take())
		require.Len(t, Diff(grown, middle), 1)
		require.Equal(t, "big.bin", Diff(grown, middle)[0].Path)

		// Another file under its name, of the same size and times.
		tmp := filepath.Join(root, "big.tmp")
		require.NoError(t, os.WriteFile(tmp, nil, 0o644))
		require.NoError(t, os.Truncate(tmp, tenGiB+1))
		require.NoError(t, os.Chtimes(tmp, was, was))
		require.NoError(t, os.Rename(tmp, filepath.Join(root, "big.bin")))
		swapped := observe(t, w)
		require.Empty(t, r.take())
		require.Len(t, Diff(middle, swapped), 1, "a new inode is a change")
		require.Equal(t, observe(t, testMode{}.settled(t, root)).Hash, swapped.Hash, "what a Workspace that remembers nothing reads")
	})
}

func mustFile(t *testing.T, s Snapshot, p string) FileState {
	t.Helper()
	f, ok := file(s, p)
	require.True(t, ok, p)
	return f
}

// waitCtimeTick waits until a file written now gets a ctime other than
// c: the kernel's clock has moved on.
func waitCtimeTick(t *testing.T, root string, c int64) {
	t.Helper()
	probe := filepath.Join(root, ".tick")
	deadline := time.Now().Add(30 * time.Second)
	for {
		require.NoError(t, os.WriteFile(probe, nil, 0o644))
		if ctimeOf(t, root, ".tick") != c {
			require.NoError(t, os.Remove(probe))
			return
		}
		require.True(t, time.Now().Before(deadline), "the kernel's clock does not move")
		time.Sleep(time.Millisecond)
	}
}

// TestHashLimit: WithHashLimit sets the limit; a file at it is read and
// kept, one byte more is not; a stat digest cannot equal any content's
// digest, even of the bytes it hashes; a file that grows past the limit
// while it is read is known by its stat record, and looked at again; a
// limit raised reads a file known by its stat record.
func TestHashLimit(t *testing.T) {
	_, err := NewWorkspace(t.TempDir(), WithHashLimit(0))
	require.ErrorIs(t, err, ErrBadOption)

	root := t.TempDir()
	put(t, root, "at", strings.Repeat("a", 100), 0o644)
	put(t, root, "over", strings.Repeat("o", 101), 0o644)
	s := openStore(t, t.TempDir())
	defer s.Close()
	w := testMode{}.settled(t, root, WithBlobs(s, 0), WithHashLimit(100))
	r := countReads(w)
	snap := observe(t, w)
	require.Equal(t, []string{"at"}, r.take())
	at, over := mustFile(t, snap, "at"), mustFile(t, snap, "over")
	require.False(t, facts.IsStatDigest(at.Digest))
	require.True(t, facts.IsStatDigest(over.Digest))
	_, err = s.GetBlob(context.Background(), at.Digest)
	require.NoError(t, err, "at the limit: read and kept")

	// The digest is no content's, not even that of a file holding the
	// very bytes it hashes: a file put in place of a huge one cannot
	// pass for it.
	e := &w.tree.ents[w.tree.find("over")]
	require.Equal(t, statDigest(e.key), over.Digest)
	pre := statPreimage(e.key)
	put(t, root, "forged", string(pre[:]), 0o644)
	snap = observe(t, w)
	require.Equal(t, []string{"forged"}, r.take())
	forged := mustFile(t, snap, "forged")
	require.Equal(t, strings.TrimPrefix(over.Digest, facts.StatDigestPrefix), forged.Digest, "the same hash of the same bytes")
	require.NotEqual(t, over.Digest, forged.Digest, "and still another digest")
	require.NoError(t, os.Remove(filepath.Join(root, "forged")))

	// Grows past the limit between lstat and the read.
	put(t, root, "grows", "small", 0o644)
	w.before = func(op, rel string) error {
		if op == "read" && rel == "grows" {
			put(t, root, "grows", strings.Repeat("x", 200), 0o644)
		}
		return nil
	}
	snap = observe(t, w)
	g := mustFile(t, snap, "grows")
	require.True(t, facts.IsStatDigest(g.Digest), "grew past the limit while it was read")
	require.False(t, w.tree.ents[w.tree.find("grows")].clean, "looked at again next time")
	w.before = nil
	snap = observe(t, w)
	require.True(t, facts.IsStatDigest(mustFile(t, snap, "grows").Digest))
	require.EqualValues(t, 200, mustFile(t, snap, "grows").Size)

	// The limit raised: what is under it now is read.
	w3 := testMode{}.settled(t, root, WithBlobs(s, 0), WithStatCache(w.meta), WithHashLimit(1<<20))
	snap = observe(t, w3)
	require.False(t, facts.IsStatDigest(mustFile(t, snap, "over").Digest))
	require.Equal(t, observe(t, testMode{}.settled(t, root)).Hash, snap.Hash)
}

// TestHugeFileTimesSettle: a huge file written just now (its ctime not
// older than the snapshot time) is stat'ed again once its ctime is older
// than the racy window, and then remembered as clean; all such files wait
// together, not one after another; a clock that never lets it settle
// gives up after twice the window, not clean; a cancelled observation
// stops waiting.
func TestHugeFileTimesSettle(t *testing.T) {
	root := t.TempDir()
	const n = 64
	for i := range n {
		put(t, root, "f"+string(rune('a'+i%26))+string(rune('a'+i/26)), "more than ten bytes", 0o644)
	}
	w, err := NewWorkspace(root, WithHashLimit(10), WithRacyWindow(500*time.Millisecond))
	require.NoError(t, err)
	start := time.Now()
	observe(t, w)
	// One after another would take n × the window: 32 s.
	require.Less(t, time.Since(start), 10*time.Second, "the files wait together")
	for _, e := range w.tree.ents {
		require.True(t, e.clean, "%s settled", e.name)
	}

	// A clock that stays behind the files' times: no settling.
	w2, err := NewWorkspace(root, WithHashLimit(10), WithRacyWindow(50*time.Millisecond))
	require.NoError(t, err)
	w2.now = func() time.Time { return time.Now().Add(-time.Hour) }
	observe(t, w2)
	for _, e := range w2.tree.ents {
		require.False(t, e.clean, "%s cannot settle", e.name)
	}

	// A cancelled observation does not wait the window out.
	w3, err := NewWorkspace(root, WithHashLimit(10), WithRacyWindow(time.Hour))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = w3.Observe(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// TestStatDigestRecord: a record with a stat digest is kept as version 3
// without the digest's bytes, decodes to the same entries, and is refused
// as version 2 (which has no stat digests) or truncated; one without is
// version 2 as before.
func TestStatDigestRecord(t *testing.T) {
	root := t.TempDir()
	put(t, root, "sub/small", "small", 0o644)
	put(t, root, "sub/big", strings.Repeat("b", 64), 0o644)
	put(t, root, "plain/f", "f", 0o644)
	w := testMode{}.settled(t, root, WithHashLimit(10))
	observe(t, w)
	r := w.tree.ents[w.tree.find("sub")].dir
	enc := encodeRec(r)
	require.EqualValues(t, recStatVersion, enc[0])
	got, err := decodeRec("sub", enc)
	require.NoError(t, err)
	require.Equal(t, enc, encodeRec(got))
	for i := range r.ents {
		want, have := r.ents[i], got.ents[i]
		want.dir = nil
		require.Equal(t, want, have)
	}
	for n := range len(enc) {
		_, err := decodeRec("sub", enc[:n])
		require.Error(t, err, "truncated to %d bytes", n)
	}
	old := append([]byte{}, enc...)
	old[0] = recVersion
	body := old[:len(old)-4]
	binary.LittleEndian.PutUint32(old[len(old)-4:], crc32.Checksum(body, castagnoli))
	_, err = decodeRec("sub", old)
	require.Error(t, err, "version 2 has no stat digests")

	plain := encodeRec(w.tree.ents[w.tree.find("plain")].dir)
	require.EqualValues(t, recVersion, plain[0])
}

// BenchmarkHugeFileObservation: a first observation (a new Workspace, no
// stat cache) of a tree of 100 small files and one 10 GiB sparse file,
// against the same tree with a 1 KiB file in its place, in the same run.
// ratio is huge/small: the big file costs what a small one does, never
// its size (hashing it would take ~17 s here).
func BenchmarkHugeFileObservation(b *testing.B) {
	tree := func(big bool) string {
		root := b.TempDir()
		for i := range 100 {
			put(b, root, "d/f"+string(rune('a'+i%26))+string(rune('a'+i/26)), "content\n", 0o644)
		}
		if big {
			p := filepath.Join(root, "big.bin")
			require.NoError(b, os.WriteFile(p, nil, 0o644))
			require.NoError(b, os.Truncate(p, tenGiB))
		} else {
			put(b, root, "big.bin", strings.Repeat("x", 1024), 0o644)
		}
		return root
	}
	roots := [2]string{tree(false), tree(true)}
	var ns [2]time.Duration
	for b.Loop() {
		for i, root := range roots {
			w, err := NewWorkspace(root)
			require.NoError(b, err)
			w.now = func() time.Time { return time.Now().Add(time.Hour) }
			start := time.Now()
			_, err = w.Observe(context.Background())
			ns[i] += time.Since(start)
			require.NoError(b, err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(ns[0].Nanoseconds())/n, "small-ns/op")
	b.ReportMetric(float64(ns[1].Nanoseconds())/n, "huge-ns/op")
	b.ReportMetric(float64(ns[1])/float64(ns[0]), "ratio")
}
