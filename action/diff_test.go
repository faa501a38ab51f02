package action

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

func TestDiff(t *testing.T) {
	f := func(path, digest string, mode fs.FileMode) FileState {
		return FileState{Path: path, Digest: digest, Mode: mode}
	}
	snap := func(files ...FileState) Snapshot { return Snapshot{Files: files} }
	cases := []struct {
		name          string
		before, after Snapshot
		want          []facts.PathChange
	}{
		{name: "both empty"},
		{
			name:   "unchanged",
			before: snap(f("a", "1", 0o644), f("b", "2", 0o755)),
			after:  snap(f("a", "1", 0o644), f("b", "2", 0o755)),
		},
		{
			name:   "added, removed, modified, sorted by path",
			before: snap(f("a", "1", 0o644), f("c", "3", 0o644), f("d", "4", 0o644)),
			after:  snap(f("b", "2", 0o644), f("c", "3", 0o644), f("d", "5", 0o644)),
			want: []facts.PathChange{
				{Path: "a", Before: "1", BeforeMode: 0o644},
				{Path: "b", After: "2", AfterMode: 0o644},
				{Path: "d", Before: "4", After: "5", BeforeMode: 0o644, AfterMode: 0o644},
			},
		},
		{
			name:   "executable bit: modified, digests equal",
			before: snap(f("run", "1", 0o644)),
			after:  snap(f("run", "1", 0o744)),
			want:   []facts.PathChange{{Path: "run", Before: "1", After: "1", BeforeMode: 0o644, AfterMode: 0o744}},
		},
		{
			name:   "file to symlink with the same digest: modified",
			before: snap(f("x", "1", 0o644)),
			after:  snap(f("x", "1", fs.ModeSymlink|0o777)),
			want:   []facts.PathChange{{Path: "x", Before: "1", After: "1", BeforeMode: 0o644}},
		},
		{
			name:   "group and other permission bits do not count",
			before: snap(f("p", "1", 0o644)),
			after:  snap(f("p", "1", 0o600)),
		},
		{
			name:   "a modified file has its whole permission bits on either side",
			before: snap(f("p", "1", 0o755)),
			after:  snap(f("p", "2", 0o640)),
			want:   []facts.PathChange{{Path: "p", Before: "1", After: "2", BeforeMode: 0o755, AfterMode: 0o640}},
		},
		{
			name:   "setuid, sticky and type bits are not permission bits",
			before: snap(f("p", "1", fs.ModeSetuid|fs.ModeSticky|0o755)),
			after:  snap(f("p", "2", fs.ModeSetgid|0o700)),
			want:   []facts.PathChange{{Path: "p", Before: "1", After: "2", BeforeMode: 0o755, AfterMode: 0o700}},
		},
		{
			name:   "a symlink records no mode",
			before: snap(f("l", "1", fs.ModeSymlink|0o777)),
			after:  snap(f("l", "2", 0o755)),
			want:   []facts.PathChange{{Path: "l", Before: "1", After: "2", AfterMode: 0o755}},
		},
		{
			name:   "everything removed",
			before: snap(f("a", "1", 0), f("b", "2", 0)),
			want:   []facts.PathChange{{Path: "a", Before: "1"}, {Path: "b", Before: "2"}},
		},
		{
			name:  "everything added",
			after: snap(f("a", "1", 0), f("b", "2", 0)),
			want:  []facts.PathChange{{Path: "a", After: "1"}, {Path: "b", After: "2"}},
		},
		{
			name:   "byte order: a.txt sorts before a/b",
			before: snap(f("a.txt", "1", 0), f("a/b", "2", 0)),
			after:  snap(f("a.txt", "1", 0), f("a/b", "3", 0), f("a0", "4", 0)),
			want:   []facts.PathChange{{Path: "a/b", Before: "2", After: "3"}, {Path: "a0", After: "4"}},
		},
		{
			name:   "unsorted snapshots (decoded from elsewhere)",
			before: snap(f("z", "1", 0), f("a", "2", 0)),
			after:  snap(f("m", "3", 0), f("a", "9", 0)),
			want: []facts.PathChange{
				{Path: "a", Before: "2", After: "9"},
				{Path: "m", After: "3"},
				{Path: "z", Before: "1"},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := append([]FileState(nil), c.before.Files...)
			require.Equal(t, c.want, Diff(c.before, c.after))
			require.Equal(t, before, c.before.Files, "the input is not reordered")
			// Reversed, added and removed swap.
			var back []facts.PathChange
			for _, ch := range c.want {
				back = append(back, facts.PathChange{Path: ch.Path, Before: ch.After, After: ch.Before, BeforeMode: ch.AfterMode, AfterMode: ch.BeforeMode})
			}
			require.Equal(t, back, Diff(c.after, c.before))
		})
	}
}

func TestPathMode(t *testing.T) {
	require.Equal(t, uint32(0o644), PathMode(0o644))
	require.Equal(t, uint32(0o755), PathMode(fs.ModeSetuid|0o755))
	require.Equal(t, uint32(0), PathMode(0), "no permission bits: not recorded")
	require.Equal(t, uint32(0), PathMode(fs.ModeSymlink|0o777))
	require.Equal(t, uint32(0), PathMode(fs.ModeDir|0o755))
}

// TestDiffAgreesWithHash: Diff is empty exactly when the hashes of the
// same file lists are equal.
func TestDiffAgreesWithHash(t *testing.T) {
	base := []FileState{{Path: "a", Digest: sum("a"), Mode: 0o644}, {Path: "b", Digest: sum("b"), Mode: 0o644}}
	variants := [][]FileState{
		base,
		{{Path: "a", Digest: sum("a"), Mode: 0o600}, {Path: "b", Digest: sum("b"), Mode: 0o640}},
		{{Path: "a", Digest: sum("a"), Mode: 0o755}, {Path: "b", Digest: sum("b"), Mode: 0o644}},
		{{Path: "a", Digest: sum("a"), Mode: fs.ModeSymlink}, {Path: "b", Digest: sum("b"), Mode: 0o644}},
		{{Path: "a", Digest: sum("x"), Mode: 0o644}, {Path: "b", Digest: sum("b"), Mode: 0o644}},
		{{Path: "a", Digest: sum("a"), Mode: 0o644}},
		{{Path: "a", Digest: sum("a"), Mode: 0o644}, {Path: "c", Digest: sum("b"), Mode: 0o644}},
	}
	for i, x := range variants {
		for j, y := range variants {
			sx, sy := Snapshot{Hash: hashFiles(x), Files: x}, Snapshot{Hash: hashFiles(y), Files: y}
			require.Equal(t, sx.Hash == sy.Hash, len(Diff(sx, sy)) == 0, "variants %d and %d", i, j)
		}
	}
}
