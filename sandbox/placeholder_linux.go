package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// placeholders are the commondir files a command's start made (or found
// left by an earlier one) so that they can be made read-only: git reads a
// commondir as soon as one exists, so a command that could create one in
// a git directory it writes in could make the person's next git take the
// config of a directory of its own. Landlock grants rights per directory
// (git writes its lock files beside HEAD), and a missing path cannot be
// bound read-only; so the missing commondir is made, holding "." (git
// reads it as the git directory itself: nothing changes for git), and
// bound read-only with the rest. Once no command of this user runs any
// more, it is removed again.
//
// Commands run concurrently, from this process and others, and each
// binds what is there when it starts: a placeholder removed while
// another command runs would leave that command free to make the
// commondir. So every command holds a shared lock on one file in the
// user's runtime directory (hidden from commands) from before it makes or
// adopts a placeholder until it has ended, and the placeholders are
// removed only under the exclusive lock, which is had only when no
// command holds the shared one. A placeholder not removed (another
// command still ran, or the harness was killed) is harmless, and the
// next command that finds it adopts it.
type placeholders struct {
	lock  *os.File // the shared lock, nil when the runtime directory is not to be had
	paths []string // made or adopted
}

// placeholderLock is the name of the lock file in the runtime directory.
const placeholderLock = "commondir.lock"

// holdCommondirs makes the placeholder of each missing commondir among
// readOnly (the paths a command's start binds read-only) whose git
// directory (one with a HEAD) lies in the workspace ws or in one of
// roots, the git directories made writable, and adopts those left there.
// It takes the shared lock first; without a runtime directory it makes
// them all the same and never removes them.
func holdCommondirs(ws string, roots, readOnly []string) *placeholders {
	var want []string
	for _, p := range readOnly {
		d := filepath.Dir(p)
		if filepath.Base(p) != "commondir" || !isGitDir(d) {
			continue
		}
		if !within(d, ws) && !slices.ContainsFunc(roots, func(r string) bool { return within(d, r) }) {
			continue
		}
		want = append(want, p)
	}
	if len(want) == 0 {
		return nil
	}
	h := &placeholders{}
	if dir, err := RuntimeDir(); err == nil {
		if f, err := os.OpenFile(filepath.Join(dir, placeholderLock), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600); err == nil {
			if unix.Flock(int(f.Fd()), unix.LOCK_SH) == nil {
				h.lock = f
			} else {
				f.Close()
			}
		}
	}
	for _, p := range want {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		switch {
		case err == nil:
			_, werr := f.WriteString(commondirPlaceholder)
			f.Close()
			if werr != nil {
				_ = os.Remove(p) // git would die on an empty one
				continue
			}
			h.paths = append(h.paths, p)
		case errors.Is(err, fs.ErrExist) && isPlaceholder(p):
			h.paths = append(h.paths, p)
		}
	}
	return h
}

// release lets go of the shared lock and, when no command holds it any
// more, removes the placeholders h made or adopted that are still
// placeholders.
func (h *placeholders) release() {
	if h == nil || h.lock == nil {
		return
	}
	name := h.lock.Name()
	h.lock.Close()
	h.lock = nil
	f, err := os.OpenFile(name, os.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // another command runs: it removes them when it ends
	}
	for _, p := range h.paths {
		if isPlaceholder(p) {
			_ = os.Remove(p)
		}
	}
}
