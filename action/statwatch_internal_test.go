package action

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEntryMadeBetweenStatAndWatch: a new process's first reading (here
// Warm's) starts from the stat cache an earlier process kept. A name made
// in a directory after the walk stat'ed it and before its watch was added
// raised no event (no watch yet), and the stat taken before may equal the
// kept record, so the kept listing would be used and the feed would vouch
// for the directory from then on: no later reading would list it. The walk
// stats a directory again once its watch is added.
func TestEntryMadeBetweenStatAndWatch(t *testing.T) {
	if !feedSupported {
		t.Skip("no change feed")
	}
	ctx := context.Background()
	root, dir := t.TempDir(), t.TempDir()
	for i := range 30 {
		put(t, root, fmt.Sprintf("d%d/f%02d", i%3, i), fmt.Sprint("content ", i), 0o644)
	}
	// The tree is older than the racy window, as a tree in use is.
	settled := func(w *Workspace) { w.now = func() time.Time { return time.Now().Add(time.Hour) } }
	s := openStore(t, dir)
	w, err := NewWorkspace(root, WithBlobs(s, 0)) // the earlier process
	require.NoError(t, err)
	settled(w)
	observe(t, w)
	appendFact(t, s, "sync")
	require.NoError(t, s.Close())

	s = openStore(t, dir)
	defer s.Close()
	w, err = NewWorkspace(root, WithBlobs(s, 0), WithChangeFeed(true))
	require.NoError(t, err)
	defer w.Close()
	settled(w)
	made := false
	w.watchHook = func(rel string) error {
		if rel == "d1" && !made {
			made = true
			put(t, root, "d1/late.txt", "made while the first reading ran", 0o644)
		}
		return nil
	}
	w.Warm()
	require.Eventually(t, func() bool { return w.Readings() >= 1 }, 30*time.Second, time.Millisecond)
	w.mu.Lock() // the warm reading holds it to its end
	w.mu.Unlock()
	require.True(t, made)
	for i := range 3 {
		snap, err := w.observeTree(ctx)
		require.NoError(t, err)
		require.True(t, slices.ContainsFunc(snap.Listing(), func(f FileState) bool { return f.Path == "d1/late.txt" }),
			"reading %d after the first does not list d1/late.txt", i+1)
	}
}
