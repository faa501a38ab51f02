//go:build linux

package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// feed is the change feed of one workspace: an inotify instance with a
// watch on every observed directory, read by the observation itself.
//
// The kernel queues an event before the call that caused it returns, so
// every change made before a sync began is in the instance's queue when
// sync reads it: sync reads the queue dry (the descriptor does not block)
// and has them all, with no goroutine, no hand-over and no mark to wait
// for. Nothing reads the queue between observations; a queue that fills
// up overflows, which the next observation sees, and it then looks at
// everything (as after any overflow).
//
// A directory is watched through the descriptor the walk opened it by
// (/proc/self/fd), so the watch is on the very directory that was listed,
// never on what a path leads to a moment later (without /proc, by path,
// not through a link). A directory reached by
// two paths (a bind mount inside the workspace) gets one watch descriptor
// from the kernel: the feed refuses that watch, and the workspace walks
// without a feed, rather than report its changes under one path only.
//
// Besides names that come, go or move, writes, and changes of mode or
// times, the feed takes a file closed after it was opened for writing
// (IN_CLOSE_WRITE) as a write: a change made through a shared memory
// mapping is reported by no other event, and the mapping needs such a
// descriptor.
type feed struct {
	fd   int
	root string

	// hold, when not nil, is read-locked before the queue is read: a test
	// hook.
	hold *sync.RWMutex

	mu     sync.Mutex       // guards wds, dirs and closed
	wds    map[int32]string // watch descriptor → directory, relative to root
	dirs   map[string]int32 // the other way round
	closed bool
	buf    []byte // sync's alone
}

// watchMask is what a watch reports: every change to a directory's names
// and to its entries' contents, modes and times.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MODIFY | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_MOVE_SELF | unix.IN_ATTRIB | unix.IN_ONLYDIR

// startFeed starts a feed that watches nothing yet; add watches
// directories. hold is the test hook of the same name, nil but in tests.
func startFeed(root string, hold *sync.RWMutex) (*feed, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("change feed: %w", err)
	}
	return &feed{fd: fd, root: root, hold: hold, wds: map[int32]string{}, dirs: map[string]int32{},
		buf: make([]byte, 64<<10)}, nil
}

// errSharedWatch: one directory reached by two paths.
var errSharedWatch = errors.New("the directory is reached by another path too (a bind mount?), whose changes one watch cannot tell apart")

// add watches the directory rel, open as d.
func (f *feed) add(rel string, d dirFD) error {
	wd, err := unix.InotifyAddWatch(f.fd, "/proc/self/fd/"+strconv.Itoa(d.fd), watchMask)
	if errors.Is(err, unix.ENOENT) {
		// No /proc: by path, never through a link (a link there now is
		// refused, and the feed stops).
		p := f.root
		if rel != "." {
			p += "/" + rel
		}
		wd, err = unix.InotifyAddWatch(f.fd, p, watchMask|unix.IN_DONT_FOLLOW)
	}
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("change feed: closed")
	}
	w := int32(wd)
	if other, ok := f.wds[w]; ok && other != rel {
		return fmt.Errorf("%w: %s", errSharedWatch, other)
	}
	if old, ok := f.dirs[rel]; ok && old != w {
		delete(f.wds, old) // another directory by that name before
	}
	f.wds[w], f.dirs[rel] = rel, w
	return nil
}

// sync returns the events reported since the last sync, by path relative
// to the root, or the error that broke the feed (an overflow). It reads
// the queue until a read finds it dry: one read, as a rule.
func (f *feed) sync(ctx context.Context) (map[string]change, error) {
	if f.hold != nil {
		f.hold.RLock()
		defer f.hold.RUnlock()
	}
	events := map[string]change{}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := unix.Read(f.fd, f.buf)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return events, nil
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, fmt.Errorf("change feed: read: %w", err)
		case n <= 0:
			return nil, errors.New("change feed: read nothing")
		}
		if err := f.take(f.buf[:n], events); err != nil {
			return nil, err
		}
		if n+maxEventSize <= len(f.buf) {
			// The kernel stops filling the buffer only when the queue is
			// empty or its next event does not fit: there was room for any
			// event, so the queue was dry when this read took it, and
			// another read would only say so.
			return events, nil
		}
	}
}

// maxEventSize is the largest event a read of the queue returns: the
// header and a name of NAME_MAX bytes with its NUL, which the kernel pads
// to a multiple of the header's size (272 bytes).
const maxEventSize = unix.SizeofInotifyEvent + (unix.NAME_MAX+1+unix.SizeofInotifyEvent-1)/unix.SizeofInotifyEvent*unix.SizeofInotifyEvent

// take adds the events in buf to events.
func (f *feed) take(buf []byte, events map[string]change) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		end := off + unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			return errors.New("change feed: a truncated event")
		}
		name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:end], "\x00"))
		off = end
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			return errors.New("change feed: the kernel's event queue overflowed (fs.inotify.max_queued_events)")
		case ev.Mask&unix.IN_UNMOUNT != 0:
			return errors.New("change feed: a watched file system was unmounted")
		}
		dir, ok := f.wds[ev.Wd]
		if !ok {
			continue
		}
		if ev.Mask&unix.IN_IGNORED != 0 {
			delete(f.wds, ev.Wd)
			if f.dirs[dir] == ev.Wd {
				delete(f.dirs, dir)
			}
			continue
		}
		rel := dir
		if name != "" {
			rel = join(dir, name)
		}
		var c change
		if ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
			c |= chCreate
		}
		if ev.Mask&(unix.IN_DELETE|unix.IN_DELETE_SELF) != 0 {
			c |= chRemove
		}
		if ev.Mask&(unix.IN_MOVED_FROM|unix.IN_MOVE_SELF) != 0 {
			c |= chRename
		}
		if ev.Mask&(unix.IN_MODIFY|unix.IN_CLOSE_WRITE) != 0 {
			c |= chWrite
		}
		if ev.Mask&unix.IN_ATTRIB != 0 {
			c |= chChmod
		}
		events[rel] |= c
	}
	return nil
}

// isClosed reports whether the feed was closed.
func (f *feed) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// close stops the feed.
func (f *feed) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	return unix.Close(f.fd)
}

// feedSupported says whether this platform has a change feed.
const feedSupported = true
