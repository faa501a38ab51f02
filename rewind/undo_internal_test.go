package rewind

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// restoreFile looks once more just before it replaces a file: a change
// made after the plan, or a parent turned into a link, is refused and
// nothing is written.
func TestRestoreFileChecksJustBefore(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644))
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if os.IsNotExist(err) {
			return "(absent)"
		}
		require.NoError(t, err)
		return string(b)
	}

	// The plan saw "left"; someone wrote "theirs" since.
	write("a.txt", "theirs")
	err := restoreErr(root, UndoStep{Path: "a.txt", Left: sum("left"), Restore: sum("orig")}, []byte("orig"))
	require.ErrorContains(t, err, "restore a.txt: changed while the undo ran")
	require.Equal(t, "theirs", read("a.txt"))
	err = restoreErr(root, UndoStep{Path: "a.txt", Left: sum("left")}, nil)
	require.ErrorContains(t, err, "restore a.txt: changed while the undo ran")
	require.Equal(t, "theirs", read("a.txt"))
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")

	// As planned: restored, and removed.
	require.NoError(t, restoreErr(root, UndoStep{Path: "a.txt", Left: sum("theirs"), Restore: sum("orig")}, []byte("orig")))
	require.Equal(t, "orig", read("a.txt"))
	require.NoError(t, restoreErr(root, UndoStep{Path: "a.txt", Left: sum("orig")}, nil))
	require.Equal(t, "(absent)", read("a.txt"))
	require.NoError(t, restoreErr(root, UndoStep{Path: "new/dir/b.txt", Restore: sum("b")}, []byte("b")))
	require.Equal(t, "b", read("new/dir/b.txt"))

	// A parent that is a link, to outside or inside.
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
	err = restoreErr(root, UndoStep{Path: "out/sub/f.txt", Restore: sum("x")}, []byte("x"))
	require.ErrorContains(t, err, "restore out/sub/f.txt: its parent directory out is a symbolic link")
	_, err = os.Lstat(filepath.Join(outside, "sub"))
	require.ErrorIs(t, err, os.ErrNotExist)
	write("e/f.txt", "other")
	require.NoError(t, os.Symlink("e", filepath.Join(root, "d")))
	err = restoreErr(root, UndoStep{Path: "d/f.txt", Left: sum("other"), Restore: sum("x")}, []byte("x"))
	require.ErrorContains(t, err, "its parent directory d is a symbolic link")
	err = restoreErr(root, UndoStep{Path: "d/f.txt", Left: sum("other")}, nil)
	require.ErrorContains(t, err, "its parent directory d is a symbolic link")
	require.Equal(t, "other", read("e/f.txt"))

	// A path that is not clean is refused outright.
	err = restoreErr(root, UndoStep{Path: "../x", Restore: sum("x")}, []byte("x"))
	require.ErrorContains(t, err, "not a clean path inside the workspace")
}

// A step with modes checks the mode it planned on just before it acts,
// and puts back the mode it restores; a step whose content stays changes
// the mode in place.
func TestRestoreFileModes(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "run.sh")
	put := func(content string, perm os.FileMode) {
		require.NoError(t, os.WriteFile(p, []byte(content), perm))
		require.NoError(t, os.Chmod(p, perm))
	}
	perm := func() os.FileMode {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		return fi.Mode().Perm()
	}
	modeOnly := UndoStep{Path: "run.sh", Left: sum("echo"), Restore: sum("echo"), LeftMode: 0o755, RestoreMode: 0o644}

	// The owner-execute bit changed again, or the content did, since the
	// plan.
	put("echo", 0o644)
	require.ErrorContains(t, restoreErr(root, modeOnly, nil), "restore the mode of run.sh: its mode changed while the undo ran (mode 0755 when planned, mode 0644 now)")
	require.Equal(t, os.FileMode(0o644), perm())
	put("echo more", 0o755)
	require.ErrorContains(t, restoreErr(root, modeOnly, nil), "restore the mode of run.sh: changed while the undo ran")
	require.Equal(t, os.FileMode(0o755), perm())

	// A link now stands at the path: the file it leads to is not touched.
	require.NoError(t, os.WriteFile(filepath.Join(root, "target"), []byte("echo"), 0o755))
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Symlink("target", p))
	require.ErrorContains(t, restoreErr(root, modeOnly, nil), "restore the mode of run.sh: it is no longer the regular file the plan saw")
	fi, err := os.Stat(filepath.Join(root, "target"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	require.NoError(t, os.Remove(p))

	// As planned: the mode alone, then the content with its mode.
	put("echo", 0o755)
	require.NoError(t, restoreErr(root, modeOnly, nil))
	require.Equal(t, os.FileMode(0o644), perm())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "echo", string(b))

	withContent := UndoStep{Path: "run.sh", Left: sum("echo"), Restore: sum("orig"), LeftMode: 0o700, RestoreMode: 0o750}
	err = restoreErr(root, withContent, []byte("orig"))
	require.ErrorContains(t, err, "restore run.sh: its mode changed while the undo ran (mode 0700 when planned, mode 0644 now)")
	require.NoError(t, os.Chmod(p, 0o700))
	require.NoError(t, restoreErr(root, withContent, []byte("orig")))
	require.Equal(t, os.FileMode(0o750), perm())
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "orig", string(b))

	// Recreated with its mode.
	require.NoError(t, restoreErr(root, UndoStep{Path: "new.sh", Restore: sum("x"), RestoreMode: 0o700}, []byte("x")))
	fi, err = os.Lstat(filepath.Join(root, "new.sh"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	// Content equal and no mode recorded: nothing to do.
	require.NoError(t, restoreErr(root, UndoStep{Path: "run.sh", Left: sum("orig"), Restore: sum("orig")}, nil))
	require.Equal(t, os.FileMode(0o750), perm())

	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, entries, 3, "no temporary file is left behind")
}

// restoreErr is restoreFile's error.
func restoreErr(root string, s UndoStep, content []byte) error {
	_, err := restoreFile(root, s, content)
	return err
}

// A restore keeps the permission bits the observer does not track where
// they are no longer those the thread left (someone tightened them), and
// the setuid, setgid and sticky bits the file has; it puts back the
// recorded mode whole where they are as the thread left them.
func TestRestoreFileKeepsBitsChangedSince(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "run.sh")
	put := func(content string, mode os.FileMode) {
		require.NoError(t, os.RemoveAll(p))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		require.NoError(t, os.Chmod(p, mode))
	}
	mode := func() os.FileMode {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		return fi.Mode()
	}
	modeOnly := UndoStep{Path: "run.sh", Left: sum("echo"), Restore: sum("echo"), LeftMode: 0o755, RestoreMode: 0o644}

	// chmod +x by the thread, chmod 700 since: the owner-x bit goes, the
	// group and other bits stay shut.
	put("echo", 0o700)
	m, err := restoreFile(root, modeOnly, nil)
	require.NoError(t, err)
	require.Equal(t, uint32(0o600), m)
	require.Equal(t, os.FileMode(0o600), mode())

	// As the thread left them: the recorded mode, whole.
	put("echo", 0o755)
	m, err = restoreFile(root, modeOnly, nil)
	require.NoError(t, err)
	require.Equal(t, uint32(0o644), m)
	require.Equal(t, os.FileMode(0o644), mode())

	// setuid, setgid and sticky stay (f.Chmod of the bits alone would
	// clear them), on a mode restore and on a content restore.
	put("echo", 0o755|os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
	_, err = restoreFile(root, modeOnly, nil)
	require.NoError(t, err)
	require.Equal(t, 0o644|os.ModeSetuid|os.ModeSetgid|os.ModeSticky, mode())
	put("echo", 0o755|os.ModeSetuid)
	_, err = restoreFile(root, UndoStep{Path: "run.sh", Left: sum("echo"), Restore: sum("orig"), LeftMode: 0o755, RestoreMode: 0o750}, []byte("orig"))
	require.NoError(t, err)
	require.Equal(t, 0o750|os.ModeSetuid, mode())

	// A content restore over a file made private since (chmod 600).
	put("secret", 0o600)
	m, err = restoreFile(root, UndoStep{Path: "run.sh", Left: sum("secret"), Restore: sum("orig"), LeftMode: 0o644, RestoreMode: 0o644}, []byte("orig"))
	require.NoError(t, err)
	require.Equal(t, uint32(0o600), m)
	require.Equal(t, os.FileMode(0o600), mode())

	// A regular file the thread replaced with a symlink of the same
	// digest comes back whole, as a file.
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Symlink("orig", p))
	_, err = restoreFile(root, UndoStep{Path: "run.sh", Left: sum("orig"), Restore: sum("orig"), RestoreMode: 0o640}, []byte("orig"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), mode())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "orig", string(b))
}

// A named pipe put in place of the file after it was looked at does not
// make a restore wait for a writer (Undo holds the thread meanwhile), and
// a mode changed while the file was read is the one checked.
func TestRestoreFileLooksSafely(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "run.sh")
	require.NoError(t, os.WriteFile(p, []byte("echo"), 0o755))
	require.NoError(t, os.Chmod(p, 0o755))
	modeOnly := UndoStep{Path: "run.sh", Left: sum("echo"), Restore: sum("echo"), LeftMode: 0o755, RestoreMode: 0o644}
	if _, err := exec.LookPath("mkfifo"); err != nil {
		t.Skip("no mkfifo")
	}
	t.Cleanup(func() { lookHook = nil })

	lookHook = func(stage, rel string) {
		if stage == "open" {
			require.NoError(t, os.Remove(p))
			require.NoError(t, exec.Command("mkfifo", p).Run())
		}
	}
	done := make(chan error, 1)
	go func() { done <- restoreErr(root, modeOnly, nil) }()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "restore the mode of run.sh: it is no longer the regular file the plan saw")
	case <-time.After(5 * time.Second):
		// Let the blocked open go, so the test can end.
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		require.NoError(t, err)
		w.Close()
		t.Fatal("the restore waited on a named pipe")
	}

	require.NoError(t, os.Remove(p))
	require.NoError(t, os.WriteFile(p, []byte("echo"), 0o755))
	require.NoError(t, os.Chmod(p, 0o755))
	lookHook = func(stage, rel string) {
		if stage == "read" {
			require.NoError(t, os.Chmod(p, 0o644))
		}
	}
	require.ErrorContains(t, restoreErr(root, modeOnly, nil), "its mode changed while the undo ran (mode 0755 when planned, mode 0644 now)")
	require.ErrorContains(t, restoreErr(root, UndoStep{Path: "run.sh", Left: sum("echo"), Restore: sum("x"), LeftMode: 0o755, RestoreMode: 0o644}, []byte("x")),
		"its mode changed while the undo ran (mode 0755 when planned, mode 0644 now)")
}
