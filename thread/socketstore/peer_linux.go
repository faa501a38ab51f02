package socketstore

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// checkPeer refuses a connection whose other end is not of this process's
// user (root excepted) or not in this process's user namespace: on the
// server, a client; on a client, the listener. The user is kept out by
// the socket's mode too (this says so plainly if the mode was changed).
// The namespace is what keeps a sandboxed command out — the sandbox runs
// every command in a user namespace of its own, as the same user — should
// it ever reach the socket (the runtime directory is hidden from it, and
// below Landlock ABI 9 nothing else stops a connect to a named socket).
// On a client it refuses a listener a sandboxed command bound.
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("%w: the peer's credentials: %v", ErrRefused, err)
	}
	var cred *unix.Ucred
	pidfd := -1
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if cerr == nil {
			pidfd, cerr = peerPidfd(int(fd))
		}
	}); err != nil {
		return fmt.Errorf("%w: the peer's credentials: %v", ErrRefused, err)
	}
	if cerr != nil {
		return fmt.Errorf("%w: the peer's credentials: %v", ErrRefused, cerr)
	}
	if pidfd >= 0 {
		defer unix.Close(pidfd)
	}
	if me := os.Getuid(); int(cred.Uid) != me && cred.Uid != 0 {
		return fmt.Errorf("%w: user %d may not use the store of user %d", ErrRefused, cred.Uid, me)
	}
	return sameUserNamespace(int(cred.Pid), pidfd)
}

// peerPidfd is a pidfd of the socket's peer (SO_PEERPIDFD, Linux 6.5 and
// later), or -1 where the kernel has none to give; then the peer is known
// by its pid alone.
func peerPidfd(fd int) (int, error) {
	pidfd, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	switch {
	case err == nil:
		return pidfd, nil
	case errors.Is(err, unix.ENOPROTOOPT), errors.Is(err, unix.EINVAL):
		return -1, nil
	case errors.Is(err, unix.ESRCH):
		return -1, errors.New("the peer process is gone")
	}
	return -1, fmt.Errorf("SO_PEERPIDFD: %w", err)
}

// nsID identifies a namespace: the device and inode of its file in /proc.
type nsID struct{ dev, ino uint64 }

func userNamespaceOf(proc string) (nsID, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+proc+"/ns/user", &st); err != nil {
		return nsID{}, err
	}
	return nsID{dev: st.Dev, ino: st.Ino}, nil
}

// sameUserNamespace refuses the process pid unless it is in this
// process's user namespace. pidfd, when not -1, is a pidfd of that
// process, taken before: the process must still be alive once its
// namespace is read, so that pid named it all along, not a process that
// took the number after it ended. Without one, a peer that ends and whose
// pid is taken by a process of this namespace between the connect and
// this look would pass: the kernel gave no better handle.
func sameUserNamespace(pid, pidfd int) error {
	if pid <= 0 {
		return fmt.Errorf("%w: the peer is in a PID namespace this process cannot see", ErrRefused)
	}
	self, err := userNamespaceOf("self")
	if err != nil {
		return fmt.Errorf("%w: this process's user namespace: %v", ErrRefused, err)
	}
	peer, err := userNamespaceOf(strconv.Itoa(pid))
	if err != nil {
		return fmt.Errorf("%w: the user namespace of process %d: %v", ErrRefused, pid, err)
	}
	if pidfd >= 0 {
		// EPERM says it lives (another user's, root's); ESRCH that it is gone.
		if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("%w: process %d ended while its namespace was read: %v", ErrRefused, pid, err)
		}
	}
	if peer != self {
		return fmt.Errorf("%w: process %d is in another user namespace (a sandboxed command's): only the harness's own processes may use the store", ErrRefused, pid)
	}
	return nil
}

// peerPID is the pid of the socket's peer, or 0 where it cannot be read.
func peerPID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}
