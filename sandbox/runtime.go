package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// ErrRuntimeDir: the user's harness runtime directory (RuntimeDir) cannot
// be used: it is not a directory of this user's own that nobody else may
// enter.
var ErrRuntimeDir = errors.New("unsafe harness runtime directory")

// maxRuntimeDir is the longest runtime directory path RuntimeDirPath
// returns but for its last resort: a server's socket,
// <dir>/<24 hex digits>/serve.sock, must fit in a socket address (107
// bytes on Linux, 103 on the BSDs; 100 is the bound kept).
const maxRuntimeDir = 64

// RuntimeDirPath is where the user's harness runtime directory is (see
// RuntimeDir), made or not: $XDG_RUNTIME_DIR/harness when that variable
// names an absolute directory, else harness-<uid> in the system's
// temporary directory; where either is too long for a socket address
// beneath it, /tmp/harness-<uid>. Every process of the user with the same
// environment names the same directory.
func RuntimeDirPath() string {
	name := "harness-" + strconv.Itoa(os.Getuid())
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		if d := filepath.Join(x, "harness"); len(d) <= maxRuntimeDir {
			return d
		}
	}
	if d := filepath.Join(os.TempDir(), name); len(d) <= maxRuntimeDir {
		return d
	}
	return filepath.Join("/tmp", name)
}

// RuntimeDir returns the user's harness runtime directory, made if it is
// missing: where the harness keeps what no command may reach — the
// sockets of the servers of every workspace, and the files with their
// tokens (see package thread/socketstore). It is outside every workspace and
// store, and every sandbox hides it (Default), so a command can neither
// dial another workspace's server nor read its token; below Landlock ABI
// 9, which scopes connects to named Unix sockets, hiding is what keeps a
// command from them.
//
// The directory must be this user's own, mode 0700, and not a symbolic
// link; one that is another user's (planted in a shared /tmp) is
// ErrRuntimeDir, never used. One of this user's with a wider mode is
// narrowed to 0700.
func RuntimeDir() (string, error) {
	d := RuntimeDirPath()
	if err := PrivateDir(d); err != nil {
		return "", err
	}
	return d, nil
}

// PrivateDir makes the directory d with mode 0700 if it is missing (its
// parent must exist), and checks that it is private: a directory, not a
// symbolic link, owned by this user, that no one else may enter (a mode
// wider than 0700 is narrowed). Anything else is ErrRuntimeDir.
func PrivateDir(d string) error {
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: make %s: %w", ErrRuntimeDir, d, err)
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRuntimeDir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory (a symbolic link, or a file, is never followed there)", ErrRuntimeDir, d)
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to user %d, not to this user (%d); remove it", ErrRuntimeDir, d, uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("%w: %s has mode %v: %w", ErrRuntimeDir, d, fi.Mode().Perm(), err)
		}
	}
	return nil
}
