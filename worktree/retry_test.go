package worktree_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/worktree"
)

// TestCreateAfterAHalfMadeTree: a worktree whose directory went away
// after git registered it and made its branch (a try cut short: a killed
// process, a loaded machine) is made again on that branch — the stale
// registration pruned, the branch at the same base checked out — rather
// than refused, which would leave the thread working in the workspace.
func TestCreateAfterAHalfMadeTree(t *testing.T) {
	ctx := context.Background()
	ws := repo(t)
	write(t, ws, "a.txt", "one\n")
	opts := worktree.Options{Dir: t.TempDir(), Exclude: []string{".harness"}}
	a, err := worktree.Create(ctx, ws, "t1", opts)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(a.Path))

	again, err := worktree.Create(ctx, ws, "t1", opts)
	require.NoError(t, err)
	require.Equal(t, a, again)
	require.Equal(t, "one\n", read(t, again.Root, "a.txt"))
	require.Equal(t, a.Branch+"\n", gitIn(t, again.Path, "rev-parse", "--abbrev-ref", "HEAD"))
}
