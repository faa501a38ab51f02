package socket

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// checkPeer refuses a connection whose other end is another user than
// this process's (root excepted): on the server, a client (the socket's
// mode already keeps them out; this says so plainly if the mode was
// changed); on a client, the listener.
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
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return fmt.Errorf("%w: the peer's credentials: %v", ErrRefused, err)
	}
	if cerr != nil {
		return fmt.Errorf("%w: the peer's credentials: %v", ErrRefused, cerr)
	}
	if me := os.Getuid(); int(cred.Uid) != me && cred.Uid != 0 {
		return fmt.Errorf("%w: user %d may not use the store of user %d", ErrRefused, cred.Uid, me)
	}
	return nil
}
