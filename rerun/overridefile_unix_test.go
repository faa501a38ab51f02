//go:build unix

package rerun_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/rerun"
)

// An override's file (--instructions, --system-prompt-file) is read with
// a bound, and only a regular file: a repository's "AGENTS.alt.md" that
// is a symlink to /dev/zero, or a FIFO, neither fills memory nor hangs
// the rerun.
func TestReadOverrideFileBounded(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.md")
	require.NoError(t, os.WriteFile(ok, []byte("Be brief.\n"), 0o644))
	b, err := rerun.ReadOverrideFile(ok)
	require.NoError(t, err)
	require.Equal(t, "Be brief.\n", string(b))

	big := filepath.Join(dir, "big.md")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("x", rerun.MaxOverrideFile+1)), 0o644))
	zero := filepath.Join(dir, "zero.md")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	fifo := filepath.Join(dir, "fifo.md")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, name := range []string{big, zero, fifo, dir} {
		done := make(chan error, 1)
		go func() { _, err := rerun.ReadOverrideFile(name); done <- err }()
		select {
		case err := <-done:
			require.ErrorIs(t, err, rerun.ErrOverride, name)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the read did not end", name)
		}
	}
}
