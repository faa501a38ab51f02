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

// The roots of the two places the runtime directory may be. They are
// fixed: no environment variable, flag or setting moves them, so that
// every process of the user — a desktop shell, cron, ssh, tmux, an IDE,
// whatever $XDG_RUNTIME_DIR and $TMPDIR it sees — names the same
// directory, and the sandbox of every one of them hides it. Only this
// package's tests change them (export_test.go).
var (
	runUserRoot = "/run/user"
	tmpRoot     = "/tmp"
)

// RuntimeDirPath is where the user's harness runtime directory is (see
// RuntimeDir), made or not: /run/user/<uid>/harness when /run/user/<uid>
// is as systemd makes it (a directory, not a symbolic link, of this
// user's own, that no one else may enter), else /tmp/harness-<uid>. It
// never reads $XDG_RUNTIME_DIR or $TMPDIR: a server and a command whose
// processes see different ones must still agree on it (Default hides it;
// a directory named by an environment variable would be hidden only from
// the commands of the processes that share that variable). Both are short
// enough for a socket beneath them (<dir>/<24 hex digits>/serve.sock is
// at most 64 bytes, well within a socket address).
func RuntimeDirPath() string {
	if d, ok := runUserDir(); ok {
		return filepath.Join(d, "harness")
	}
	return tmpRuntimeDir()
}

// tmpRuntimeDir is /tmp/harness-<uid>, the runtime directory where there
// is no /run/user/<uid>.
func tmpRuntimeDir() string {
	return filepath.Join(tmpRoot, "harness-"+strconv.Itoa(os.Getuid()))
}

// runUserDir is /run/user/<uid>, and whether it is fit to hold the
// runtime directory: a directory (a symbolic link is not followed), owned
// by this user, with no access for group or others (systemd-logind makes
// it so, mode 0700).
func runUserDir() (string, bool) {
	d := filepath.Join(runUserRoot, strconv.Itoa(os.Getuid()))
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return d, false
	}
	if uid, ok := ownerOf(fi); !ok || uid != os.Getuid() {
		return d, false
	}
	return d, true
}

// runtimeDirs are the places a server of this user may keep its socket
// and token, of this layout or an older one, that Default hides: the
// runtime directory first (made if it is missing, so that a server that
// starts while a command runs is hidden all the same), then the other
// fixed place, /tmp/harness-<uid> (made too: a process that finds no
// /run/user/<uid>, one started before a login, say, serves there) or
// /run/user/<uid>/harness where /run/user/<uid> exists. Only directories
// are returned: a symbolic link planted in a shared /tmp is not followed.
func runtimeDirs() []string {
	tmp := tmpRuntimeDir()
	_ = PrivateDir(tmp)
	cands := []string{tmp}
	if ru, ok := runUserDir(); ok {
		_ = PrivateDir(filepath.Join(ru, "harness"))
		cands = []string{filepath.Join(ru, "harness"), tmp}
	} else if fi, err := os.Lstat(ru); err == nil && fi.IsDir() {
		cands = append(cands, filepath.Join(ru, "harness"))
	}
	var out []string
	for _, d := range cands {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
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
