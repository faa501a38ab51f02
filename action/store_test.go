package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// The Pebble store offers what the observer uses when a store has it.
var (
	_ Blobs       = (*thread.PebbleStore)(nil)
	_ Meta        = (*thread.PebbleStore)(nil)
	_ BlobChecker = (*thread.PebbleStore)(nil)
)

func openStore(t *testing.T, dir string) *thread.PebbleStore {
	t.Helper()
	s, err := thread.OpenPebble(dir)
	require.NoError(t, err)
	return s
}

// appendFact appends one user message to thread t1 of s.
func appendFact(t *testing.T, s *thread.PebbleStore, text string) {
	t.Helper()
	ctx := context.Background()
	h, err := s.Head(ctx, "t1")
	after := uint64(0)
	if err == nil {
		after = h.Seq
	}
	d, err := facts.NewDraft(facts.KindUserMessage, fmt.Sprintf("ingress/%d", after+1), facts.UserMessage{Text: text})
	require.NoError(t, err)
	_, err = s.Append(ctx, "t1", after, d)
	require.NoError(t, err)
}

// TestWorkspaceNeverObservesTheStore: with ".harness -> store/" inside the
// workspace (issue 10, finding 10), the store's own files — which change
// with every append — are never observed: not through the link, not at
// store/, whether the observer is told the store's path or learns it from
// the store it keeps blobs in.
func TestWorkspaceNeverObservesTheStore(t *testing.T) {
	for _, how := range []string{"the store's blobs", "its path, through the link"} {
		t.Run(how, func(t *testing.T) {
			forModes(t, func(t *testing.T, m testMode) {
				root := t.TempDir()
				put(t, root, "main.go", "package main\n", 0o644)
				require.NoError(t, os.Mkdir(filepath.Join(root, "store"), 0o755))
				require.NoError(t, os.Symlink("store", filepath.Join(root, ".harness")))
				s := openStore(t, filepath.Join(root, ".harness"))
				defer s.Close()
				symlink(t, root, "db", "store") // another way there, not named .harness
				opt := WithBlobs(s, 0)
				if how != "the store's blobs" {
					opt = WithStorePaths(filepath.Join(root, ".harness"))
				}
				w, err := m.newWorkspace(t, root, opt)
				require.NoError(t, err)
				before := observe(t, w)
				for i := range 20 {
					appendFact(t, s, strings.Repeat("a fact that grows the store's log ", i+1))
				}
				after := observe(t, w)
				require.Empty(t, Diff(before, after), "the store changed, the workspace did not")
				require.Equal(t, []string{".harness", "db", "main.go"}, paths(after), ".harness and db are links, recorded and not followed")
			})
		})
	}
}

// TestWorkspaceLeavesOutItsOwnFiles: `harness run … >out` inside the
// workspace (issue 12, finding 7): the file the harness writes its output
// to is not the action's effect, under its name or any other.
func TestWorkspaceLeavesOutItsOwnFiles(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "main.go", "package main\n", 0o644)
		out, err := os.Create(filepath.Join(root, "out"))
		require.NoError(t, err)
		defer out.Close()
		w, err := m.newWorkspace(t, root, WithOwnFiles(out, os.Stderr))
		require.NoError(t, err)
		before := observe(t, w)
		_, err = fmt.Fprintln(out, "   4  action.requested  1-call_1 write_file")
		require.NoError(t, err)
		require.NoError(t, os.Rename(filepath.Join(root, "out"), filepath.Join(root, "out.log")))
		_, err = fmt.Fprintln(out, "   5  action.completed")
		require.NoError(t, err)
		after := observe(t, w)
		require.Empty(t, Diff(before, after))
		require.Equal(t, []string{"main.go"}, paths(after))

		// A new file at the old name is not the harness's.
		put(t, root, "out", "the agent's", 0o644)
		require.Equal(t, []string{"main.go", "out"}, paths(observe(t, w)))
	})
	_, err := NewWorkspace(t.TempDir(), WithOwnFiles(nil))
	require.Error(t, err)
}

// countingStore counts the blobs a Pebble store is asked to keep.
type countingStore struct {
	*thread.PebbleStore
	puts atomic.Int64
}

func (c *countingStore) PutBlob(ctx context.Context, data []byte) (string, error) {
	c.puts.Add(1)
	return c.PebbleStore.PutBlob(ctx, data)
}

// PutNewBlob is counted too: the observer keeps bytes it takes to be new
// through it (see NewBlobPutter).
func (c *countingStore) PutNewBlob(ctx context.Context, data []byte) (string, error) {
	c.puts.Add(1)
	return c.PebbleStore.PutNewBlob(ctx, data)
}

// TestStatCacheAcrossProcesses: a new process's first observation, with the
// store an earlier one kept its stat cache in, reads and keeps again only
// what changed; a record that does not decode is ignored.
func TestStatCacheAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	root, dir := t.TempDir(), t.TempDir()
	for i := range 60 {
		put(t, root, fmt.Sprintf("d%d/f%02d", i%3, i), fmt.Sprint("content ", i), 0o644)
	}
	// process runs one observation as a new process would: the store
	// opened afresh, a new Workspace. It returns the snapshot, the files
	// read and the blobs put.
	process := func(t *testing.T, opts ...func(*countingStore) WorkspaceOption) (Snapshot, []string, int64) {
		s := &countingStore{PebbleStore: openStore(t, dir)}
		defer s.Close()
		o := []WorkspaceOption{WithBlobs(s, 0)}
		for _, f := range opts {
			o = append(o, f(s))
		}
		w, err := NewWorkspace(root, o...)
		require.NoError(t, err)
		w.now = func() time.Time { return time.Now().Add(time.Hour) }
		r := countReads(w)
		snap := observe(t, w)
		// Something synced makes the unsynced cache durable, as the
		// action.started after an observation does.
		appendFact(t, s.PebbleStore, "sync")
		return snap, r.take(), s.puts.Load()
	}

	first, read, puts := process(t)
	require.Len(t, read, 60)
	require.EqualValues(t, 60, puts)

	again, read, puts := process(t)
	require.Equal(t, first, again)
	require.Empty(t, read, "nothing changed since the last process: nothing is read")
	require.Zero(t, puts, "nor kept again")

	old := mtime(t, root, "d1/f01")
	put(t, root, "d1/f01", "CONTENT 1", 0o644) // same size, mtime put back
	backdate(t, root, "d1/f01", old)
	put(t, root, "d2/new", "new", 0o644)
	require.NoError(t, os.Remove(filepath.Join(root, "d0/f00")))
	now, read, puts := process(t)
	require.Equal(t, []string{"d1/f01", "d2/new"}, read)
	require.EqualValues(t, 2, puts)
	require.Equal(t, fresh(t, root), now)

	// A damaged record, and one of another version, are ignored: only
	// the files of those directories are read again.
	s := openStore(t, dir)
	key := func(rel string) []byte { return append([]byte(root+"\x00"), rel...) }
	v, err := s.GetMeta(ctx, statNamespace, key("d1"))
	require.NoError(t, err)
	v[len(v)/2] ^= 0xff
	require.NoError(t, s.PutMeta(ctx, statNamespace, one(key("d1"), v)))
	v, err = s.GetMeta(ctx, statNamespace, key("d2"))
	require.NoError(t, err)
	v[0] = recVersion + 1
	require.NoError(t, s.PutMeta(ctx, statNamespace, one(key("d2"), v)))
	appendFact(t, s, "sync")
	require.NoError(t, s.Close())
	_, read, puts = process(t)
	require.Len(t, read, 41, "d1 and d2, 20 and 21 files")
	for _, p := range read {
		require.True(t, strings.HasPrefix(p, "d1/") || strings.HasPrefix(p, "d2/"), p)
	}
	require.Zero(t, puts, "what was read is kept already: the store says so, and it is not put again")

	// A cache written by a process that kept no blobs does not vouch for
	// blobs; the store's HasBlob does.
	put(t, root, "d0/unkept", "not kept yet", 0o644)
	_, read, _ = process(t, func(s *countingStore) WorkspaceOption { return WithStatCache(nil) })
	require.Contains(t, read, "d0/unkept")
	s = openStore(t, dir)
	w, err := NewWorkspace(root, WithStatCache(s)) // no blobs
	require.NoError(t, err)
	w.now = func() time.Time { return time.Now().Add(time.Hour) }
	put(t, root, "d0/unkept2", "not kept", 0o644)
	observe(t, w)
	appendFact(t, s, "sync")
	require.NoError(t, s.Close())
	_, read, puts = process(t)
	require.Equal(t, []string{"d0/unkept2"}, read, "kept nowhere: read to be kept; d0/unkept is already kept")
	require.EqualValues(t, 1, puts)
}

// TestStatCacheForgetsRemovedDirectories: the records of a directory
// removed, and of everything under it, leave the store.
func TestStatCacheForgetsRemovedDirectories(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "keep/f", "f", 0o644)
		put(t, root, "gone/a/b/f", "f", 0o644)
		put(t, root, "gone/c/f", "f", 0o644)
		meta := newMemMeta()
		w, err := m.newWorkspace(t, root, WithStatCache(meta))
		require.NoError(t, err)
		observe(t, w)
		rec := func(rel string) string { return statNamespace + "\x00" + root + "\x00" + rel }
		require.Equal(t, []string{rec("."), rec("gone"), rec("gone/a"), rec("gone/a/b"), rec("gone/c"), rec("keep")}, meta.keys())
		require.NoError(t, os.RemoveAll(filepath.Join(root, "gone")))
		observe(t, w)
		require.Equal(t, []string{rec("."), rec("keep")}, meta.keys())

		// A new process that never read them forgets them too.
		put(t, root, "gone2/a/f", "f", 0o644)
		observe(t, w)
		require.NoError(t, os.RemoveAll(filepath.Join(root, "gone2")))
		w2, err := m.newWorkspace(t, root, WithStatCache(meta))
		require.NoError(t, err)
		observe(t, w2)
		require.Equal(t, []string{rec("."), rec("keep")}, meta.keys())
	})
}

// TestStatCacheRecordRoundTrip: a record decodes to what was encoded, and
// any truncation of it is refused.
func TestStatCacheRecordRoundTrip(t *testing.T) {
	root := t.TempDir()
	put(t, root, "sub/a", "a", 0o755)
	put(t, root, "sub/b", "b", 0o644)
	symlink(t, root, "sub/l", "a")
	put(t, root, "sub/.git/x", "x", 0o644)
	put(t, root, "sub/d/f", "f", 0o644)
	w := testMode{}.settled(t, root)
	observe(t, w)
	r := w.tree.ents[w.tree.find("sub")].dir
	enc := encodeRec(r)
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
}

// manifestStore is a PebbleStore that remembers the kind ('F' whole, 'D'
// delta) of each manifest put in it.
type manifestStore struct {
	*thread.PebbleStore
	kinds []byte
}

func (m *manifestStore) note(data []byte) {
	if strings.HasPrefix(string(data), manifestHeader) {
		m.kinds = append(m.kinds, data[len(manifestHeader)])
	}
}

func (m *manifestStore) PutBlob(ctx context.Context, data []byte) (string, error) {
	m.note(data)
	return m.PebbleStore.PutBlob(ctx, data)
}

func (m *manifestStore) PutNewBlob(ctx context.Context, data []byte) (string, error) {
	m.note(data)
	return m.PebbleStore.PutNewBlob(ctx, data)
}

// TestManifestAcrossProcesses: a new process's first manifest is a delta
// against the last one an earlier process kept of the same root (none at
// all when nothing changed, not even a permission the hash does not
// count), and loads back to exactly its reading; a note of the last
// manifest that is damaged, names bytes the store lacks, or claims a hash
// its chain does not list, is ignored (the manifest is kept whole); a
// true note of an older manifest gives a delta against that one.
func TestManifestAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	root, dir := t.TempDir(), t.TempDir()
	for i := range 300 {
		put(t, root, fmt.Sprintf("d%d/f%03d", i%3, i), fmt.Sprint("content ", i), 0o644)
	}
	// process keeps the manifest of one reading as a new process would,
	// and returns its digest and the kinds of manifests it put.
	process := func(t *testing.T) (string, string) {
		t.Helper()
		s := &manifestStore{PebbleStore: openStore(t, dir)}
		defer s.Close()
		w, err := NewWorkspace(root, WithBlobs(s, 0))
		require.NoError(t, err)
		snap, err := w.observeTree(ctx)
		require.NoError(t, err)
		d, err := w.KeepManifest(ctx, s, snap)
		require.NoError(t, err)
		back, err := LoadManifest(ctx, s, d)
		require.NoError(t, err)
		require.Equal(t, snap.Hash, back.Hash)
		require.Equal(t, snap.Listing(), back.Files)
		require.Equal(t, fresh(t, root).Files, back.Files, "what a fresh walk lists")
		appendFact(t, s.PebbleStore, "sync")
		return d, string(s.kinds)
	}
	first, kinds := process(t)
	require.Equal(t, "F", kinds)
	again, kinds := process(t)
	require.Equal(t, first, again)
	require.Empty(t, kinds, "nothing changed: no manifest is kept")

	require.NoError(t, os.Chmod(filepath.Join(root, "d1/f001"), 0o600))
	perm, kinds := process(t)
	require.NotEqual(t, first, perm, "a permission change the hash does not count is kept")
	require.Equal(t, "D", kinds)

	put(t, root, "d2/f002", "changed", 0o644)
	require.NoError(t, os.Remove(filepath.Join(root, "d0/f000")))
	changed, kinds := process(t)
	require.Equal(t, "D", kinds)

	note := func(v []byte) {
		s := openStore(t, dir)
		require.NoError(t, s.PutMeta(ctx, manifestNamespace, one([]byte(root), v)))
		appendFact(t, s, "sync")
		require.NoError(t, s.Close())
	}
	noted := func() []byte {
		s := openStore(t, dir)
		defer s.Close()
		v, err := s.GetMeta(ctx, manifestNamespace, []byte(root))
		require.NoError(t, err)
		return v
	}
	v := noted()
	digest, hash, depth, ops, ok := decodeLast(v)
	require.True(t, ok)
	require.Equal(t, changed, digest)
	require.Equal(t, 2, depth)

	damaged := append([]byte(nil), v...)
	damaged[len(damaged)/2] ^= 0xff
	for name, bad := range map[string][]byte{
		"damaged":        damaged,
		"other version":  append([]byte{lastVersion + 1}, v[1:]...),
		"bytes not kept": encodeLast(&manifestBase{digest: strings.Repeat("ab", 32), hash: hash, depth: depth, ops: ops}),
		"not a digest":   encodeLast(&manifestBase{digest: "../x", hash: hash}),
		"hash a lie":     encodeLast(&manifestBase{digest: first, hash: hash, depth: depth, ops: ops}),
	} {
		t.Run(name, func(t *testing.T) {
			note(bad)
			put(t, root, "d0/f003", "changed again for "+name, 0o644)
			_, kinds := process(t)
			require.Equal(t, "F", kinds, "the note is ignored")
		})
	}

	// A true note of an older manifest: the delta is against that one.
	s := openStore(t, dir)
	old, err := LoadManifest(ctx, s, perm)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	note(encodeLast(&manifestBase{digest: perm, hash: old.Hash, depth: 1, ops: 1}))
	put(t, root, "d1/f004", "and again", 0o644)
	d, kinds := process(t)
	require.Equal(t, "D", kinds)
	s = openStore(t, dir)
	data, err := s.GetBlob(ctx, d)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	m, err := decodeManifest(data)
	require.NoError(t, err)
	require.Equal(t, perm, m.base)
}

// TestWarm: a reading Warm takes in the background, from the stat cache a
// process left, is the base of the next observation, which looks only at
// what the feed reported — and still sees every change: made while the
// warm reading walked (in directories listed already and not yet), and
// made after, of the same size with the mtime put back. Its manifest is
// kept, so the next one of the same tree is not kept again. Close stops
// a warm reading that has not ended.
func TestWarm(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this system")
	}
	ctx := context.Background()
	root, dir := t.TempDir(), t.TempDir()
	for i := range 90 {
		put(t, root, fmt.Sprintf("d%d/f%02d", i%3, i), fmt.Sprint("content ", i), 0o644)
	}
	s := openStore(t, dir)
	w, err := NewWorkspace(root, WithBlobs(s, 0))
	require.NoError(t, err)
	w.now = func() time.Time { return time.Now().Add(time.Hour) } // all settled
	_, err = w.KeepManifest(ctx, s, observe(t, w))
	require.NoError(t, err)
	appendFact(t, s, "sync")
	require.NoError(t, s.Close())

	sameSize := func(rel, content string) {
		old := mtime(t, root, rel)
		put(t, root, rel, content, 0o644)
		backdate(t, root, rel, old)
	}
	ms := &manifestStore{PebbleStore: openStore(t, dir)}
	defer ms.Close()
	w, err = NewWorkspace(root, WithBlobs(ms, 0), WithChangeFeed(true))
	require.NoError(t, err)
	defer w.Close()
	w.now = func() time.Time { return time.Now().Add(time.Hour) }
	w.before = func(op, rel string) error {
		if op == "list" && rel == "d1" {
			sameSize("d0/f00", "CONTENT 0") // listed already, or not yet
			sameSize("d2/f02", "CONTENT 2") // the other
			put(t, root, "d1/new", "new", 0o644)
		}
		return nil
	}
	w.Warm()
	// The warm reading has begun once it is counted; taking the lock
	// waits for its end.
	require.Eventually(t, func() bool { return w.Readings() >= 1 }, 30*time.Second, time.Millisecond)
	w.mu.Lock()
	w.before = nil
	w.mu.Unlock()
	// Then it keeps its manifest (holding manMu throughout).
	require.Eventually(t, func() bool {
		w.manMu.Lock()
		defer w.manMu.Unlock()
		return w.manLooked
	}, 30*time.Second, time.Millisecond)
	w.manMu.Lock()
	require.Equal(t, "D", string(ms.kinds), "the warm reading's manifest: a delta against the last process's")
	ms.kinds = nil
	w.manMu.Unlock()
	sameSize("d1/f01", "CONTENT 1")
	snap, err := w.observeTree(ctx)
	require.NoError(t, err)
	require.Equal(t, fresh(t, root).Hash, snap.Hash)
	require.Equal(t, fresh(t, root).Files, snap.Listing())
	d, err := w.KeepManifest(ctx, ms, snap)
	require.NoError(t, err)
	require.Equal(t, "D", string(ms.kinds))
	back, err := LoadManifest(ctx, ms, d)
	require.NoError(t, err)
	require.Equal(t, snap.Listing(), back.Files)

	// Close stops a warm reading under way.
	w2, err := NewWorkspace(root, WithBlobs(ms, 0), WithChangeFeed(true))
	require.NoError(t, err)
	entered := make(chan struct{})
	release := make(chan struct{})
	var once atomic.Bool
	w2.before = func(op, rel string) error {
		if once.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
		return nil
	}
	w2.Warm()
	<-entered
	closed := make(chan error, 1)
	go func() { closed <- w2.Close() }()
	close(release)
	require.NoError(t, <-closed)
	_, err = w2.observeTree(ctx)
	require.ErrorIs(t, err, errClosed)
}

// TestReadingWaitGivesUp: an observation waiting for a warm reading to
// end (Ctrl-C while a new process's first look at a big tree runs) ends
// when its context is done, with the context's error, and leaves the
// warm reading to go on; the next observation, once it has ended, sees
// the tree.
func TestReadingWaitGivesUp(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed on this system")
	}
	root := t.TempDir()
	for i := range 20 {
		put(t, root, fmt.Sprintf("d%d/f%02d", i%2, i), fmt.Sprint("content ", i), 0o644)
	}
	w, err := NewWorkspace(root, WithChangeFeed(true))
	require.NoError(t, err)
	defer w.Close()
	entered, release := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	w.before = func(op, rel string) error {
		if once.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
		return nil
	}
	w.Warm()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	gave := make(chan error, 1)
	go func() {
		_, err := w.observeTree(ctx)
		gave <- err
	}()
	cancel()
	select {
	case err := <-gave:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("the observation waited for the warm reading despite its context")
	}
	close(release)
	snap, err := w.observeTree(context.Background())
	require.NoError(t, err)
	require.Equal(t, fresh(t, root).Hash, snap.Hash)
}

// TestForgedStatRecord: a stat-cache record that decodes but vouches for a
// file with a stat key the file does not have (a forged digest, or a
// record left from another file at the path) does not stand: the file is
// read again, and the observation is what a fresh walk gives. Only a key
// equal to the file's own is trusted, as git trusts its index.
func TestForgedStatRecord(t *testing.T) {
	ctx := context.Background()
	root, dir := t.TempDir(), t.TempDir()
	for i := range 30 {
		put(t, root, fmt.Sprintf("d%d/f%02d", i%3, i), fmt.Sprint("content ", i), 0o644)
	}
	settled := func(w *Workspace) { w.now = func() time.Time { return time.Now().Add(time.Hour) } }
	s := openStore(t, dir)
	w, err := NewWorkspace(root, WithBlobs(s, 0))
	require.NoError(t, err)
	settled(w)
	observe(t, w)
	appendFact(t, s, "sync")

	key := append([]byte(root+"\x00"), "d1"...)
	v, err := s.GetMeta(ctx, statNamespace, key)
	require.NoError(t, err)
	rec, err := decodeRec("d1", v)
	require.NoError(t, err)
	forged := strings.Repeat("0", 64)
	for i := range rec.ents {
		e := &rec.ents[i]
		if e.name == "f01" {
			e.Digest = forged
			e.key.mtime++ // not the file's key
		}
		if e.name == "f04" {
			e.Digest = forged
			e.key.ino++ // another file's
		}
	}
	require.NoError(t, s.PutMeta(ctx, statNamespace, one(key, encodeRec(rec))))
	appendFact(t, s, "sync")
	require.NoError(t, s.Close())

	s = openStore(t, dir)
	defer s.Close()
	w, err = NewWorkspace(root, WithBlobs(s, 0))
	require.NoError(t, err)
	settled(w)
	r := countReads(w)
	snap := observe(t, w)
	require.ElementsMatch(t, []string{"d1/f01", "d1/f04"}, r.take())
	require.Equal(t, fresh(t, root), snap)
	for _, f := range snap.Files {
		require.NotEqual(t, forged, f.Digest, f.Path)
	}
}
