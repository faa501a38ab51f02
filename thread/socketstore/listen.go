package socketstore

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// listenPrivate listens on a Unix socket at p, in a directory of the
// user's own (mode 0700), that no other user could connect to even were
// the directory opened: it is bound beside p under a name of this
// process's, made 0600, and only then renamed into place.
func listenPrivate(p string) (net.Listener, error) {
	bound := filepath.Join(filepath.Dir(p), fmt.Sprintf(".%d.sock", os.Getpid()))
	if err := os.Remove(bound); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ln, err := net.Listen("unix", bound)
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	// The listener must not remove the path it was bound to when it
	// closes: the socket lives at p now.
	ul.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, error) {
		ln.Close()
		os.Remove(bound)
		return nil, err
	}
	if err := os.Chmod(bound, 0o600); err != nil {
		return fail(err)
	}
	if err := os.Rename(bound, p); err != nil {
		return fail(fmt.Errorf("put the socket in place: %w", err))
	}
	return &unlinking{UnixListener: ul, path: p}, nil
}

// unlinking removes its socket file when it is closed. No other server
// can have replaced the file meanwhile: a server listens only while it
// holds the store, and this one still does.
type unlinking struct {
	*net.UnixListener
	path string
}

// Close stops listening and removes the socket, and the store's runtime
// directory if nothing else is left in it (a background server's log
// stays, and the directory with it).
func (l *unlinking) Close() error {
	err := l.UnixListener.Close()
	os.Remove(l.path)
	os.Remove(filepath.Dir(l.path)) // only if empty
	return err
}
