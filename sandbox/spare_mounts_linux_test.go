package sandbox_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// A spare helper copies the harness's mount table when it is made, and a
// command may come long after: a spare made before the mount table
// changed is not used. A volume the person unmounted after the spare was
// made is not visible to the next command, and one mounted since is.
// (Mounting needs root; the test is skipped without.)
func TestSpareIsNotUsedAfterTheMountsChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	if chosen, why := sandbox.UseHelper(t, helperProgram(t)); !chosen {
		t.Fatal(why)
	}
	spec := defaultSpec(t)
	mnt, err := os.MkdirTemp("/var/tmp", "harness-spare-mounts-")
	require.NoError(t, err)
	t.Cleanup(func() { os.Remove(mnt) })
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "secret"), []byte("unmounted-volume"), 0o600))

	c0, _ := startSleep(t, spec)
	launcher := parentOf(t, c0.Pid())
	c0.Kill()
	_, _ = c0.Wait()
	spareOf(t, launcher, c0.Pid()) // made while the volume was there

	require.NoError(t, syscall.Unmount(mnt, 0))
	mounted = false
	out, _ := run(t, spec, "cat "+filepath.Join(mnt, "secret"))
	require.NotContains(t, out, "unmounted-volume", "a command sees a volume unmounted before it started")

	spareOf(t, launcher) // made while the volume was not there
	require.NoError(t, syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"))
	mounted = true
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "new"), []byte("mounted-since"), 0o600))
	out, e := run(t, spec, "cat "+filepath.Join(mnt, "new"))
	require.Equal(t, 0, e.Code, out)
	require.Contains(t, out, "mounted-since", "a command does not see a volume mounted before it started")
}
