package socketstore

import (
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// inUserNamespace starts a process in a user namespace of its own (as the
// sandbox runs every command), as the same user, and returns its pid.
func inUserNamespace(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("no user namespaces here: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// pidfdOf is a pidfd of pid, or skips the test where there are none.
func pidfdOf(t *testing.T, pid int) int {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Skipf("no pidfds here: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// TestSameUserNamespace: a process of this user namespace passes; one in
// a namespace of its own (a sandboxed command's) is refused, with or
// without a pidfd; a pid this process cannot see is refused; and a pid
// whose process ended after its pidfd was taken is refused, even when the
// pid now names a process of this namespace (a pid reused).
func TestSameUserNamespace(t *testing.T) {
	require.NoError(t, sameUserNamespace(os.Getpid(), -1))
	require.NoError(t, sameUserNamespace(os.Getpid(), pidfdOf(t, os.Getpid())))

	other := inUserNamespace(t)
	for _, fd := range []int{-1, pidfdOf(t, other)} {
		err := sameUserNamespace(other, fd)
		require.ErrorIs(t, err, ErrRefused)
		require.Contains(t, err.Error(), "another user namespace")
	}

	err := sameUserNamespace(0, -1)
	require.ErrorIs(t, err, ErrRefused)
	require.Contains(t, err.Error(), "cannot see")

	gone := exec.Command("true")
	require.NoError(t, gone.Start())
	fd := pidfdOf(t, gone.Process.Pid)
	require.NoError(t, gone.Wait())
	err = sameUserNamespace(os.Getpid(), fd)
	require.ErrorIs(t, err, ErrRefused, "the pidfd's process ended: the pid is not proof")
	require.Contains(t, err.Error(), "ended")
}

// TestCheckPeer: both ends of a connection within this process pass, on
// the server's side and the client's.
func TestCheckPeer(t *testing.T) {
	p := t.TempDir() + "/s"
	ln, err := net.Listen("unix", p)
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("unix", p)
	require.NoError(t, err)
	defer c.Close()
	s := <-accepted
	require.NotNil(t, s)
	defer s.Close()
	require.NoError(t, checkPeer(c))
	require.NoError(t, checkPeer(s))
}
