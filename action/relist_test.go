package action

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// entriesNamed is a directory record's entries with these names, sorted.
func entriesNamed(names ...string) []entry {
	ents := make([]entry, 0, len(names))
	for _, n := range slices.Sorted(slices.Values(names)) {
		ents = append(ents, entry{name: n, kind: kindFile})
	}
	return ents
}

// TestNamesLike: a directory's names are taken as those of the last
// listing only when they are exactly those, each once; any other listing
// comes back whole, as names gives it.
func TestNamesLike(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 300 { // more than one getdents call's worth on most file systems
		name := fmt.Sprintf("file-with-a-longish-name-%06d.go", i)
		names = append(names, name)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	names = append(names, "sub")
	list := func(old []entry) ([]string, bool) {
		t.Helper()
		d, err := openRootDir(dir)
		require.NoError(t, err)
		defer d.close()
		got, same, err := d.namesLike(old)
		require.NoError(t, err)
		if same {
			require.Nil(t, got)
		}
		return got, same
	}
	got, same := list(nil)
	require.False(t, same, "no last listing to be like")
	require.ElementsMatch(t, names, got)

	_, same = list(entriesNamed(names...))
	require.True(t, same)

	// The same count, one name swapped for another.
	swapped := slices.Clone(names)
	swapped[7] = "file-with-a-longish-name-999999.go"
	got, same = list(entriesNamed(swapped...))
	require.False(t, same)
	require.ElementsMatch(t, names, got)

	// One name fewer, one more, and a name twice in the last listing.
	for what, old := range map[string][]string{
		"fewer":     names[1:],
		"more":      append(slices.Clone(names), "zzz"),
		"twice":     append(slices.Clone(names[1:]), names[2]),
		"empty":     {},
		"only-dots": {".", ".."},
	} {
		got, same := list(entriesNamed(old...))
		require.False(t, same, what)
		require.ElementsMatch(t, names, got, what)
	}

	// An empty directory is like an empty listing.
	empty := t.TempDir()
	d, err := openRootDir(empty)
	require.NoError(t, err)
	defer d.close()
	got, same, err = d.namesLike([]entry{})
	require.NoError(t, err)
	require.True(t, same)
	require.Empty(t, got)
}

// TestRacyDirectoryListedAgain: with a racy window longer than the test,
// every directory's listing stays racily clean and is listed again at
// every observation; whatever comes, goes or is renamed in it between two
// observations — the same number of names, or not — is seen, exactly as a
// Workspace that remembers nothing sees it.
func TestRacyDirectoryListedAgain(t *testing.T) {
	forModes(t, func(t *testing.T, m testMode) {
		root := t.TempDir()
		dir := filepath.Join(root, "d")
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
		for i := range 50 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", i)), []byte{byte(i)}, 0o644))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "x"), []byte("x"), 0o644))
		w, err := m.newWorkspace(t, root, WithRacyWindow(time.Hour))
		require.NoError(t, err)
		require.Equal(t, fresh(t, root), observe(t, w))
		require.Equal(t, fresh(t, root), observe(t, w), "listed again, nothing changed")
		steps := []func(){
			func() { require.NoError(t, os.Rename(filepath.Join(dir, "f03"), filepath.Join(dir, "g03"))) },
			func() { require.NoError(t, os.Rename(filepath.Join(dir, "f04"), filepath.Join(dir, "a04"))) },
			func() { require.NoError(t, os.Remove(filepath.Join(dir, "f05"))) },
			func() { require.NoError(t, os.WriteFile(filepath.Join(dir, "f05"), []byte("back"), 0o644)) },
			func() { require.NoError(t, os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub2"))) },
			func() {
				// A name swapped for another and a file rewritten in one go.
				require.NoError(t, os.Remove(filepath.Join(dir, "f10")))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "f10x"), []byte("new"), 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "f11"), []byte("other"), 0o644))
			},
		}
		for i, step := range steps {
			step()
			require.Equal(t, fresh(t, root), observe(t, w), "step %d", i)
			require.Equal(t, fresh(t, root), observe(t, w), "step %d, again", i)
		}
	})
}
