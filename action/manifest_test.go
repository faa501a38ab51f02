package action

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

// TestManifestsAreDeltas: each manifest a Workspace keeps loads back to its
// snapshot exactly; after the first, each is a delta about the size of
// what changed, not of the tree; an unchanged workspace keeps no new one;
// and after manifestDepth deltas a whole one starts the chain again —
// whether the snapshots come as listings (Observe) or as the readings the
// Boundary takes (observeTree).
func TestManifestsAreDeltas(t *testing.T) {
	for _, asTree := range []bool{false, true} {
		t.Run(map[bool]string{false: "listing", true: "tree"}[asTree], func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			for i := range 1000 {
				put(t, root, fmt.Sprintf("pkg%d/file%03d.go", i%10, i), fmt.Sprint("package p // ", i), 0o644)
			}
			blobs := &memBlobs{m: map[string][]byte{}}
			w := testMode{}.settled(t, root)
			snap := func() Snapshot {
				if !asTree {
					return observe(t, w)
				}
				s, err := w.observeTree(ctx)
				require.NoError(t, err)
				require.Nil(t, s.Files)
				require.NotNil(t, s.tree)
				return s
			}
			keep := func() (Snapshot, string, []byte) {
				s := snap()
				d, err := w.KeepManifest(ctx, blobs, s)
				require.NoError(t, err)
				back, err := LoadManifest(ctx, blobs, d)
				require.NoError(t, err)
				require.Equal(t, s.Hash, back.Hash)
				require.Equal(t, s.Listing(), back.Files)
				return s, d, blobs.m[d]
			}
			_, first, whole := keep()
			require.Equal(t, byte('F'), whole[len(manifestHeader)])
			require.Less(t, len(whole), 1000*60, "a whole manifest: under 60 bytes a file")

			_, same, _ := keep()
			require.Equal(t, first, same, "nothing changed: the last manifest stands")

			require.NoError(t, os.Chmod(filepath.Join(root, "pkg3/file003.go"), 0o640))
			_, perm, delta := keep()
			require.NotEqual(t, first, perm, "a permission change the hash does not count is still kept")
			require.Equal(t, byte('D'), delta[len(manifestHeader)])

			for i := range manifestDepth(1000) - 1 {
				put(t, root, fmt.Sprintf("pkg%d/file%03d.go", i%10, i*10), fmt.Sprint("changed ", i), 0o644)
				if i%3 == 0 {
					put(t, root, fmt.Sprintf("new/n%d", i), "new", 0o644)
				}
				if i%5 == 0 {
					require.NoError(t, os.Remove(filepath.Join(root, fmt.Sprintf("pkg%d/file%03d.go", (991-i*10)%10, 991-i*10))))
				}
				_, _, delta := keep()
				require.Equal(t, byte('D'), delta[len(manifestHeader)], "delta %d", i)
				require.Less(t, len(delta), 400, "a delta is the size of the change")
			}
			put(t, root, "last", "last", 0o644)
			_, _, again := keep()
			require.Equal(t, byte('F'), again[len(manifestHeader)], "the chain starts again")

			other := &memBlobs{m: map[string][]byte{}}
			s := snap()
			d, err := w.KeepManifest(ctx, other, s)
			require.NoError(t, err)
			require.Equal(t, byte('F'), other.m[d][len(manifestHeader)], "another store: whole")
		})
	}
}

// TestManifestChainOfBigChanges: deltas that together list as many
// entries as the tree has start the chain again, so loading one never
// costs much more than a whole manifest.
func TestManifestChainOfBigChanges(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for i := range 200 {
		put(t, root, fmt.Sprintf("d/f%03d", i), "v0", 0o644)
	}
	blobs := &memBlobs{m: map[string][]byte{}}
	w := testMode{}.settled(t, root)
	var kinds []byte
	for round := range 6 {
		for i := range 200 {
			if i%2 == round%2 {
				put(t, root, fmt.Sprintf("d/f%03d", i), fmt.Sprint("v", round), 0o644)
			}
		}
		s, err := w.observeTree(ctx)
		require.NoError(t, err)
		d, err := w.KeepManifest(ctx, blobs, s)
		require.NoError(t, err)
		kinds = append(kinds, blobs.m[d][len(manifestHeader)])
		back, err := LoadManifest(ctx, blobs, d)
		require.NoError(t, err)
		require.Equal(t, s.Listing(), back.Files)
	}
	// 200 files: whole, then deltas of 100 each until they list 200.
	require.Equal(t, "FDDFDD", string(kinds))
}

func TestLoadManifest(t *testing.T) {
	ctx := context.Background()
	snap := Snapshot{Hash: "h", Files: []FileState{
		{Path: "a", Digest: sum("a"), Mode: 0o644, Size: 1},
		{Path: "a/b", Digest: sum("b"), Mode: 0o755, Size: 1},
		{Path: "l", Digest: sum("a"), Mode: fs.ModeSymlink | 0o777, Size: 1, Link: "a"},
		{Path: "odd", Digest: "not a sha256", Mode: 0o600},
	}}
	blobs := &memBlobs{m: map[string][]byte{}}

	t.Run("JSON, as earlier versions kept it", func(t *testing.T) {
		data, err := json.Marshal(snap)
		require.NoError(t, err)
		d, err := blobs.PutBlob(ctx, data)
		require.NoError(t, err)
		got, err := LoadManifest(ctx, blobs, d)
		require.NoError(t, err)
		require.Equal(t, snap, got)
	})
	t.Run("whole, of any observer's snapshot", func(t *testing.T) {
		d, err := keepWhole(ctx, blobs, snap)
		require.NoError(t, err)
		got, err := LoadManifest(ctx, blobs, d)
		require.NoError(t, err)
		require.Equal(t, snap, got)
	})
	t.Run("missing", func(t *testing.T) {
		_, err := LoadManifest(ctx, blobs, sum("never kept"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("a delta whose base is missing", func(t *testing.T) {
		d, err := blobs.PutBlob(ctx, encodeDelta(sum("no base"), "h", nil))
		require.NoError(t, err)
		_, err = LoadManifest(ctx, blobs, d)
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("damaged", func(t *testing.T) {
		whole := encodeWhole(snap.Hash, snap.Files)
		for _, bad := range [][]byte{
			[]byte("harness.manifest.v9\x00F"),
			whole[:len(whole)-1],
			append(append([]byte{}, whole...), 0),
			append([]byte(manifestHeader), 'X'),
			encodeWhole("h", []FileState{{Path: "b"}, {Path: "a"}}), // out of order
		} {
			d, err := blobs.PutBlob(ctx, bad)
			require.NoError(t, err)
			_, err = LoadManifest(ctx, blobs, d)
			require.ErrorIs(t, err, errBadManifest, "%q", bad)
		}
	})
}

// TestInterruptedReadsTheDeltaChain: a resume after a crash says which
// paths changed since action.started, through a manifest kept as a delta.
func TestInterruptedReadsTheDeltaChain(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		ctx := context.Background()
		root := t.TempDir()
		for i := range 100 {
			put(t, root, fmt.Sprintf("d%d/f%02d", i%5, i), fmt.Sprint(i), 0o644)
		}
		blobs := &memBlobs{m: map[string][]byte{}}
		w, err := m.newWorkspace(t, root, WithBlobs(blobs, 0))
		require.NoError(t, err)
		b := &Boundary{Observer: w, Granted: []Capability{Write}, Root: root, Blobs: blobs}
		var started facts.ActionStarted
		for i := range 5 {
			req := Request{ActionID: fmt.Sprint("a", i), Capability: Write, Adapter: "w"}
			bg, refused := b.Begin(ctx, req)
			require.Nil(t, refused)
			started = bg.Started
			if i < 4 {
				b.Finish(ctx, req, bg, writer(root, fmt.Sprintf("d%d/f%02d", i, i), fmt.Sprint("turn ", i)))
			}
		}
		// The process dies while the fifth action runs: its write lands,
		// action.completed never does.
		put(t, root, "d4/f04", "half done", 0o644)
		put(t, root, "d4/new", "new", 0o644)
		rec, err := b.Interrupted(ctx, started)
		require.NoError(t, err)
		require.Equal(t, []facts.PathChange{
			{Path: "d4/f04", Before: sum("4"), After: sum("half done"), BeforeMode: 0o644, AfterMode: 0o644},
			{Path: "d4/new", After: sum("new"), AfterMode: 0o644},
		}, rec.Changed)
		data := blobs.m[started.Manifest]
		require.Equal(t, byte('D'), data[len(manifestHeader)], "the manifest of action.started is a delta")
	})
}

// writer is an adapter that writes content to rel.
func writer(root, rel, content string) Adapter { return writeAdapter{root, rel, content} }

type writeAdapter struct{ root, rel, content string }

func (a writeAdapter) Name() string { return "w" }
func (a writeAdapter) Execute(context.Context, Request) (facts.Report, error) {
	err := os.WriteFile(filepath.Join(a.root, filepath.FromSlash(a.rel)), []byte(a.content), 0o644)
	return facts.Report{Status: facts.StatusSucceeded}, err
}

// TestManifestPacksOnlyLowerHexDigests: a digest is packed as 32 bytes
// only when it is 64 lower-case hex digits, so that it loads back as the
// same string; any other (upper-case, a digit short or over, a byte
// beside a hex digit) is kept as it is written.
func TestManifestPacksOnlyLowerHexDigests(t *testing.T) {
	ctx := context.Background()
	good := sum("x")
	odd := []string{
		strings.ToUpper(good),
		good[:63] + "A",
		good[:63],
		good + "0",
		good[:63] + "g",
		good[:63] + "/", // one below '0'
		good[:63] + ":", // one above '9'
		good[:63] + "`", // one below 'a'
		good[:63] + "\xff",
		"",
	}
	files := []FileState{{Path: "a", Digest: good, Mode: 0o644, Size: 1}}
	for i, d := range odd {
		files = append(files, FileState{Path: fmt.Sprintf("b%02d", i), Digest: d, Mode: 0o644, Size: 1})
	}
	blobs := &memBlobs{m: map[string][]byte{}}
	d, err := keepWhole(ctx, blobs, Snapshot{Hash: "h", Files: files})
	require.NoError(t, err)
	got, err := LoadManifest(ctx, blobs, d)
	require.NoError(t, err)
	require.Equal(t, files, got.Files)
	packed := encodeWhole("h", files[:1])
	require.Less(t, len(packed), len(manifestHeader)+2+64, "a lower-case SHA-256 is packed to 32 bytes")
	for _, d := range odd {
		_, ok := hexDigest(d)
		require.False(t, ok, "%q", d)
	}
}
