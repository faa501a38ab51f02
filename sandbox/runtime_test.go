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

// TestRuntimeDirPath: /run/user/<uid>/harness where /run/user/<uid> is
// as systemd makes it, else /tmp/harness-<uid>; never a place
// $XDG_RUNTIME_DIR or $TMPDIR names, so a server and a command whose
// processes see different ones agree on it. Either is short enough for a
// server's socket beneath it.
func TestRuntimeDirPath(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	envs := [][2]string{{"", ""}, {"/run/user/7", t.TempDir()}, {t.TempDir(), "/var/tmp"}, {"relative/dir", "/" + strings.Repeat("y", 80)}}
	real := sandbox.RuntimeDirPath()
	require.Contains(t, []string{"/run/user/" + uid + "/harness", "/tmp/harness-" + uid}, real)
	for _, e := range envs {
		t.Setenv("XDG_RUNTIME_DIR", e[0])
		t.Setenv("TMPDIR", e[1])
		require.Equal(t, real, sandbox.RuntimeDirPath(), "XDG_RUNTIME_DIR=%q TMPDIR=%q", e[0], e[1])
	}
	for _, d := range []string{"/run/user/4294967295/harness", "/tmp/harness-4294967295"} {
		require.LessOrEqual(t, len(d+"/0123456789abcdef01234567/serve.sock"), 100, "a socket address holds it")
	}

	runUser, tmp := t.TempDir(), t.TempDir()
	sandbox.SetRuntimeRoots(t, runUser, tmp)
	ru := filepath.Join(runUser, uid)
	check := func(want, why string) {
		t.Helper()
		for _, e := range envs {
			t.Setenv("XDG_RUNTIME_DIR", e[0])
			t.Setenv("TMPDIR", e[1])
			require.Equal(t, want, sandbox.RuntimeDirPath(), "%s (XDG_RUNTIME_DIR=%q TMPDIR=%q)", why, e[0], e[1])
		}
	}
	check(filepath.Join(tmp, "harness-"+uid), "no /run/user/<uid>")
	require.NoError(t, os.Mkdir(ru, 0o700))
	check(filepath.Join(ru, "harness"), "/run/user/<uid> as systemd makes it")
	require.NoError(t, os.Chmod(ru, 0o755))
	check(filepath.Join(tmp, "harness-"+uid), "/run/user/<uid> others may enter")
	require.NoError(t, os.Remove(ru))
	other := t.TempDir()
	require.NoError(t, os.Chmod(other, 0o700))
	require.NoError(t, os.Symlink(other, ru))
	check(filepath.Join(tmp, "harness-"+uid), "/run/user/<uid> a symbolic link")
	require.NoError(t, os.Remove(ru))
	require.NoError(t, os.WriteFile(ru, nil, 0o600))
	check(filepath.Join(tmp, "harness-"+uid), "/run/user/<uid> a file")
	if runtime.GOOS == "windows" || os.Getuid() != 0 {
		return // giving a directory to another user needs root
	}
	require.NoError(t, os.Remove(ru))
	require.NoError(t, os.Mkdir(ru, 0o700))
	require.NoError(t, os.Chown(ru, 65534, 65534))
	check(filepath.Join(tmp, "harness-"+uid), "/run/user/<uid> another user's")
}

// TestRuntimeDirIsPrivate: the directory is made 0700; one of the user's
// with a wider mode is narrowed; a symbolic link, a file, or another
// user's directory is refused, never used.
func TestRuntimeDirIsPrivate(t *testing.T) {
	base := t.TempDir()
	sandbox.SetRuntimeRoots(t, t.TempDir(), base)
	d, err := sandbox.RuntimeDir()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(base, "harness-"+strconv.Itoa(os.Getuid())), d)
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
// user's runtime directory in both of the places it may be, whatever the
// environment names: made if missing, so that a server that starts while
// a command runs is hidden too; /run/user/<uid>/harness only where
// /run/user/<uid> exists (an older server's there is hidden even where
// /run/user/<uid> is not fit for this one's); a symbolic link planted at
// /tmp/harness-<uid> is never followed.
func TestDefaultHidesTheRuntimeDir(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	runUser, tmp := t.TempDir(), t.TempDir()
	sandbox.SetRuntimeRoots(t, runUser, tmp)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	ru, th := filepath.Join(runUser, uid), filepath.Join(tmp, "harness-"+uid)
	hidden := func() []string {
		t.Helper()
		spec, err := sandbox.Default(t.TempDir(), "")
		require.NoError(t, err)
		require.NoError(t, spec.Validate())
		require.Equal(t, spec.Hidden, spec.Record().Hidden, "the record says so")
		return spec.Hidden[1:] // after the workspace's own .harness
	}

	require.Equal(t, []string{th}, hidden(), "no /run/user/<uid>: only /tmp/harness-<uid>")
	require.DirExists(t, th, "made, for a server that starts later")
	require.NoDirExists(t, filepath.Join(ru, "harness"))

	require.NoError(t, os.Mkdir(ru, 0o700))
	require.NoError(t, os.Remove(th))
	require.Equal(t, []string{filepath.Join(ru, "harness"), th}, hidden(), "both")
	require.DirExists(t, filepath.Join(ru, "harness"))
	require.DirExists(t, th)
	require.Equal(t, filepath.Join(ru, "harness"), sandbox.RuntimeDirPath())

	require.NoError(t, os.Chmod(ru, 0o755))
	require.Equal(t, []string{th, filepath.Join(ru, "harness")}, hidden(), "an older server's under an unfit /run/user/<uid>: hidden")
	require.NoError(t, os.Remove(filepath.Join(ru, "harness")))
	require.Equal(t, []string{th}, hidden(), "nothing made under an unfit /run/user/<uid>")
	require.NoDirExists(t, filepath.Join(ru, "harness"))

	require.NoError(t, os.Remove(th))
	require.NoError(t, os.Symlink(t.TempDir(), th))
	require.Empty(t, hidden(), "a planted link is neither followed nor hidden")
}
