package rewind_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
)

// A file larger than the observer's hash limit is known by its stat record
// alone, and its bytes are never kept: an undo that would put back its
// earlier content refuses and says why, in words; one that removes a huge
// file the thread made does so; a diff of the change says the content was
// not kept. Nothing is read: the files are sparse, 2 GiB and more.
func TestUndoOfAFileTooLargeToHash(t *testing.T) {
	t.Run("grown", func(t *testing.T) {
		e := harnesstest.NewStock(t, commandScript("truncate -s 3G big.bin"))
		f, err := os.Create(filepath.Join(e.Root, "big.bin"))
		require.NoError(t, err)
		require.NoError(t, f.Truncate(2<<30))
		require.NoError(t, f.Close())
		require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
		changed := observed(e, "t")
		require.Len(t, changed, 1)
		c := changed[0]
		require.Equal(t, "big.bin", c.Path)
		require.True(t, facts.IsStatDigest(c.Before), c.Before)
		require.True(t, facts.IsStatDigest(c.After), c.After)
		require.NotEqual(t, c.Before, c.After)
		require.Equal(t, "modified", present.ChangeKind(c))

		d := present.DiffOf(ctx, c, e.RT.Services.Blobs)
		require.Empty(t, d.Diff)
		require.Contains(t, d.Note, "sha256 not computed (larger than 1 GiB")
		require.Contains(t, d.Note, "its content was not kept")

		_, err = rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.ErrorIs(t, err, rewind.ErrUndoRefused)
		require.ErrorContains(t, err, "big.bin: its earlier content was never read (larger than 1073741824 bytes, the observer's hash limit")
		require.ErrorContains(t, err, "undo cannot restore it; restore it by hand")
		fi, err := os.Stat(filepath.Join(e.Root, "big.bin"))
		require.NoError(t, err)
		require.EqualValues(t, 3<<30, fi.Size(), "nothing was changed")
	})
	t.Run("made", func(t *testing.T) {
		e := harnesstest.NewStock(t, commandScript("truncate -s 2G new.bin"))
		require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
		changed := observed(e, "t")
		require.Len(t, changed, 1)
		require.Equal(t, "", changed[0].Before)
		require.True(t, facts.IsStatDigest(changed[0].After))

		plan, err := rewind.Undo(ctx, e.RT, e.Stock.Actor, "t", 0, "ana")
		require.NoError(t, err)
		require.Len(t, plan.Steps, 1)
		require.Equal(t, "(absent)", e.Read("new.bin"), "what the thread made, as it left it, is removed")
	})
}
