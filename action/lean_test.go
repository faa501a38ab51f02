package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// TestFeedWalkRunsOnOneGoroutine: with the feed, an observation of one
// file changed three directories down starts no goroutine besides the
// caller's (each level was handed to a new worker before, and the hand-over
// was most of what a small observation cost); a walk of the whole tree
// still shares its directories among workers.
func TestFeedWalkRunsOnOneGoroutine(t *testing.T) {
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
	require.NotZero(t, w.started.Load(), "the first reading walks the whole tree, in parallel")

	put(t, root, "d07/e/f/file7", "seven", 0o644)
	w.started.Store(0)
	s := observe(t, w)
	require.Equal(t, fresh(t, root), Snapshot{Hash: s.Hash, Files: s.Files})
	require.Zero(t, w.started.Load(), "one path the feed reported is walked down by the caller")

	plain := settled(t, root)
	observe(t, plain)
	plain.started.Store(0)
	observe(t, plain)
	require.NotZero(t, plain.started.Load(), "without a feed every directory is looked at, in parallel")
}

// settled is NewWorkspace with a clock an hour ahead: every file is clean
// from its first reading.
func settled(t *testing.T, root string, opts ...WorkspaceOption) *Workspace {
	t.Helper()
	w, err := NewWorkspace(root, opts...)
	require.NoError(t, err)
	w.now = func() time.Time { return time.Now().Add(time.Hour) }
	return w
}

// askingBlobs is a memBlobs that can say whether it has a digest, and
// counts what it is asked.
type askingBlobs struct {
	memBlobs
	mu  sync.Mutex
	has int
}

func (b *askingBlobs) HasBlob(_ context.Context, digest string) (bool, error) {
	b.mu.Lock()
	b.has++
	b.mu.Unlock()
	b.memBlobs.mu.Lock()
	defer b.memBlobs.mu.Unlock()
	_, ok := b.m[digest]
	return ok, nil
}

func (b *askingBlobs) asked() (has, puts int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.memBlobs.mu.Lock()
	defer b.memBlobs.mu.Unlock()
	return b.has, b.puts
}

// TestRacyRereadIsNotKeptAgain: a racily clean file is read again by
// every observation until it is clean, and found as it was it is not
// handed to the store again (nor is the store asked about it: the last
// reading kept those very bytes). Changed, it is.
func TestRacyRereadIsNotKeptAgain(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "src/hot.txt", "one", 0o644)
		b := &askingBlobs{memBlobs: memBlobs{m: map[string][]byte{}}}
		w, err := m.newWorkspace(t, root, WithBlobs(b, 0))
		require.NoError(t, err)
		r := countReads(w)
		observe(t, w)
		require.Equal(t, []string{"src/hot.txt"}, r.take())
		has, puts := b.asked()
		require.Equal(t, 1, puts)

		observe(t, w)
		require.Equal(t, []string{"src/hot.txt"}, r.take(), "written just now: not clean, read again")
		h, p := b.asked()
		require.Equal(t, has, h, "the store is not asked about bytes the last reading kept")
		require.Equal(t, puts, p, "nor handed them again")

		put(t, root, "src/hot.txt", "two", 0o644)
		s := observe(t, w)
		require.Equal(t, []string{"src/hot.txt"}, r.take())
		_, p = b.asked()
		require.Equal(t, puts+1, p, "new bytes are kept")
		got, err := b.GetBlob(context.Background(), s.Files[0].Digest)
		require.NoError(t, err)
		require.Equal(t, "two", string(got))
	})
}

// TestStatCacheSkipsUnsettledRewrites: a file rewritten by every action,
// never clean, does not rewrite its directory's record in the store with
// every observation; a new process starting from the record kept reads
// exactly what the in-memory reading would, that file; and the record is
// kept again once it settles, or once anything else in it changes.
func TestStatCacheSkipsUnsettledRewrites(t *testing.T) {
	root := t.TempDir()
	for i := range 20 {
		put(t, root, fmt.Sprintf("d/f%02d", i), fmt.Sprint("file ", i), 0o644)
	}
	put(t, root, "d/hot", "round 0", 0o644)
	// The snapshot time: after everything above (and a tick of the
	// kernel's coarse clock), before every write below.
	time.Sleep(50 * time.Millisecond)
	since := time.Now()
	time.Sleep(50 * time.Millisecond)
	clock := func() time.Time { return since }
	meta := newMemMeta()
	w, err := NewWorkspace(root, WithStatCache(meta), WithRacyWindow(0))
	require.NoError(t, err)
	w.now = clock
	put(t, root, "d/hot", "round 1", 0o644)
	observe(t, w)
	kept := meta.puts
	require.Equal(t, 2, kept, "the root's record and d's, at first sight")

	for round := 2; round <= 4; round++ {
		put(t, root, "d/hot", fmt.Sprint("round ", round), 0o644)
		s := observe(t, w)
		require.Equal(t, fresh(t, root).Hash, s.Hash)
		require.Equal(t, kept, meta.puts, "round %d: only d/hot changed, and it is not clean", round)
	}

	// A new process, from the records kept: it reads d/hot, not clean in
	// the record either way, and nothing else.
	w2, err := NewWorkspace(root, WithStatCache(meta), WithRacyWindow(0))
	require.NoError(t, err)
	w2.now = clock
	r := countReads(w2)
	s := observe(t, w2)
	require.Equal(t, []string{"d/hot"}, r.take())
	require.Equal(t, fresh(t, root).Hash, s.Hash)

	// A new name in d: the record is kept.
	put(t, root, "d/new", "new", 0o644)
	observe(t, w)
	require.Greater(t, meta.puts, kept, "a new listing is kept")
	kept = meta.puts

	// d/hot settles: the record is kept, and a new process reads nothing.
	later := func() time.Time { return time.Now().Add(time.Hour) }
	w.now = later
	observe(t, w)
	require.Greater(t, meta.puts, kept, "settled: kept")
	w3, err := NewWorkspace(root, WithStatCache(meta))
	require.NoError(t, err)
	w3.now = later
	r = countReads(w3)
	observe(t, w3)
	require.Equal(t, []string{}, r.take())
}

// TestOutsideWriteBetweenActionsIsNoActions: a file rewritten by someone
// else between two actions — same size, its mtime put back to the same
// second — is the workspace's change before the second action
// (workspace.changed), not the second action's effect, in every mode; and
// the second action's own same-size write is seen.
func TestOutsideWriteBetweenActionsIsNoActions(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		ctx := context.Background()
		root := t.TempDir()
		put(t, root, "notes.md", "aaaa", 0o644)
		put(t, root, "out.txt", "1111", 0o644)
		b := &askingBlobs{memBlobs: memBlobs{m: map[string][]byte{}}}
		w, err := m.newWorkspace(t, root, WithBlobs(b, 0))
		require.NoError(t, err)
		bd := &Boundary{Observer: w, Granted: []Capability{Write}, Root: root, Blobs: b}
		act := func(id, content string) (Begun, facts.ActionCompleted) {
			req := Request{ActionID: id, Capability: Write, Adapter: "write_file"}
			bg, refused := bd.Begin(ctx, req)
			require.Nil(t, refused)
			end := bd.Finish(ctx, req, bg, runAdapter(func() { put(t, root, "out.txt", content, 0o644) }))
			return bg, *end.Completed
		}
		_, first := act("a1", "2222")
		require.Equal(t, []string{"out.txt"}, changedPaths(first.Observation.Changed))
		bd.Since = Observed{Seq: 1, Hash: first.Observation.After, Manifest: first.Observation.Manifest}

		old := mtime(t, root, "notes.md")
		put(t, root, "notes.md", "bbbb", 0o644) // someone else
		backdate(t, root, "notes.md", old)

		bg, second := act("a2", "3333")
		require.NotNil(t, bg.Changed, "the outside write is the workspace's change")
		require.Equal(t, []string{"notes.md"}, changedPaths(bg.Changed.Changed))
		require.Equal(t, []string{"out.txt"}, changedPaths(second.Observation.Changed), "the second action changed out.txt only")
		require.Equal(t, facts.EffectObserved, second.EffectState)
	})
}

// runAdapter is an adapter that runs f and succeeds.
type runAdapter func()

func (runAdapter) Name() string { return "write_file" }

func (f runAdapter) Execute(context.Context, Request) (facts.Report, error) {
	f()
	return facts.Report{Status: facts.StatusSucceeded}, nil
}

// TestListingChangeOutOfScopeRehashesNothing: names that come and go
// without changing what is observed — git's index.lock made and renamed
// away by every git command, an empty directory — make the directories
// they are in listed again, and nothing more: no digest is computed (the
// rows are the same), and the parent's record in the stat cache stays as
// it was (a subdirectory's entry there keeps only its identity, not the
// times that move with its listing).
func TestListingChangeOutOfScopeRehashesNothing(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		put(t, root, "a/f", "f", 0o644)
		put(t, root, "a/b/g", "g", 0o644)
		put(t, root, ".git/config", "[core]\n", 0o644)
		put(t, root, ".git/index", "DIRC", 0o644)
		meta := newMemMeta()
		w, err := m.newWorkspace(t, root, WithStatCache(meta))
		require.NoError(t, err)
		w.now = func() time.Time { return time.Now().Add(time.Hour) }
		first := observe(t, w)
		rootKey := statNamespace + "\x00" + string(w.recKey("."))
		rootRec := meta.m[rootKey]
		require.NotEmpty(t, rootRec)

		put(t, root, ".git/index.lock", "DIRC2", 0o644)
		require.NoError(t, os.Rename(filepath.Join(root, ".git/index.lock"), filepath.Join(root, ".git/index")))
		require.NoError(t, os.Mkdir(filepath.Join(root, "a", "empty"), 0o755))
		w.digests.Store(0)
		s := observe(t, w)
		require.Equal(t, first.Hash, s.Hash)
		require.Equal(t, fresh(t, root).Hash, s.Hash)
		if !m.store { // the store mode reads every record afresh, and hashes each once
			require.EqualValues(t, 1, w.digests.Load(), "no row changed: the only digest computed is the new empty directory's own")
		}
		require.Equal(t, rootRec, meta.m[rootKey], "the root's record is as it was")

		put(t, root, "a/empty/h", "h", 0o644)
		s = observe(t, w)
		require.NotEqual(t, first.Hash, s.Hash)
		require.Equal(t, fresh(t, root).Hash, s.Hash)
	})
}
