package sandbox_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// TestRuntimeDirPath: $XDG_RUNTIME_DIR/harness when it is absolute and
// short enough for a socket beneath it; else harness-<uid> in the
// temporary directory; else in /tmp.
func TestRuntimeDirPath(t *testing.T) {
	uid := "harness-" + strconv.Itoa(os.Getuid())
	short := t.TempDir()
	t.Setenv("TMPDIR", short)
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/7")
	require.Equal(t, "/run/user/7/harness", sandbox.RuntimeDirPath())
	t.Setenv("XDG_RUNTIME_DIR", "relative/dir")
	require.Equal(t, filepath.Join(short, uid), sandbox.RuntimeDirPath(), "a relative XDG_RUNTIME_DIR is ignored")
	t.Setenv("XDG_RUNTIME_DIR", "/"+strings.Repeat("x", 80))
	require.Equal(t, filepath.Join(short, uid), sandbox.RuntimeDirPath(), "too long for a socket")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", "/"+strings.Repeat("y", 80))
	require.Equal(t, "/tmp/"+uid, sandbox.RuntimeDirPath())
}

// TestRuntimeDirIsPrivate: the directory is made 0700; one of the user's
// with a wider mode is narrowed; a symbolic link, a file, or another
// user's directory is refused, never used.
func TestRuntimeDirIsPrivate(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", base)
	d, err := sandbox.RuntimeDir()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(base, "harness"), d)
	fi, err := os.Stat(d)
	require.NoError(t, err)
	require.Equal(t, os.ModeDir|0o700, fi.Mode())

	require.NoError(t, os.Chmod(d, 0o777))
	_, err = sandbox.RuntimeDir()
	require.NoError(t, err)
	fi, err = os.Stat(d)
	require.NoError(t, err)
	require.Equal(t, os.ModeDir|0o700, fi.Mode(), "narrowed")

	require.NoError(t, os.Remove(d))
	require.NoError(t, os.Symlink(t.TempDir(), d))
	_, err = sandbox.RuntimeDir()
	require.ErrorIs(t, err, sandbox.ErrRuntimeDir)
	require.Contains(t, err.Error(), "not a directory")

	require.NoError(t, os.Remove(d))
	require.NoError(t, os.WriteFile(d, nil, 0o600))
	_, err = sandbox.RuntimeDir()
	require.ErrorIs(t, err, sandbox.ErrRuntimeDir)

	if runtime.GOOS == "windows" || os.Getuid() != 0 {
		return // giving a directory to another user needs root
	}
	require.NoError(t, os.Remove(d))
	require.NoError(t, os.Mkdir(d, 0o700))
	require.NoError(t, os.Chown(d, 65534, 65534))
	_, err = sandbox.RuntimeDir()
	require.ErrorIs(t, err, sandbox.ErrRuntimeDir)
	require.Contains(t, err.Error(), "belongs to user 65534")
}

// TestDefaultHidesTheRuntimeDir: every workspace's sandbox hides the
// user's runtime directory, made if it was missing, so that a server that
// starts while a command runs is hidden too.
func TestDefaultHidesTheRuntimeDir(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	spec, err := sandbox.Default(t.TempDir(), "")
	require.NoError(t, err)
	require.Contains(t, spec.Hidden, sandbox.RuntimeDirPath())
	require.DirExists(t, sandbox.RuntimeDirPath())
	require.Contains(t, spec.Record().Hidden, sandbox.RuntimeDirPath(), "and the record says so")
	require.NoError(t, spec.Validate())
}
