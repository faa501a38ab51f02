package stock

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSameDir: with birth times the inode and the birth time decide (a
// device renumbered at the next boot is the same directory); without
// them the device and the inode; an identity with a birth time and one
// without, or none, never match.
func TestSameDir(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"fe00:98:6a1b.5", "fe00:98:6a1b.5", true},
		{"fe00:98:6a1b.5", "2d:98:6a1b.5", true},
		{"fe00:98:6a1b.5", "fe00:99:6a1b.5", false},
		{"fe00:98:6a1b.5", "fe00:98:6a1b.6", false},
		{"fe00:98", "fe00:98", true},
		{"fe00:98", "2d:98", false},
		{"fe00:98", "fe00:98:6a1b.5", false},
		{"", "", false},
		{"fe00:98", "", false},
		{"x", "x", false},
	} {
		require.Equal(t, c.same, sameDir(c.a, c.b), "%q %q", c.a, c.b)
		require.Equal(t, c.same, sameDir(c.b, c.a), "%q %q", c.b, c.a)
	}

	// A directory is itself; made again, it is not, even where the
	// file system hands out its inode again — once the file system's
	// clock has moved: birth times come from a coarse clock (a tick of
	// 4–10 ms on ext4), and a directory removed and made again within one
	// tick, given the same inode, cannot be told apart (a clone takes
	// longer than that). It failed once without the pause.
	dir := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	id := dirIdentity(dir)
	require.NotEmpty(t, id)
	require.True(t, sameDir(id, dirIdentity(dir)))
	require.NoError(t, os.Remove(dir))
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.False(t, sameDir(id, dirIdentity(dir)))
	require.Empty(t, dirIdentity(filepath.Join(dir, "absent")))
}
