//go:build linux

package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// feedSyncTimeout bounds how long a sync waits for its own mark to come
// back through the feed; past it the feed is taken for broken.
const feedSyncTimeout = 5 * time.Second

// feed is the change feed of one workspace: an inotify instance (through
// fsnotify) with a watch on every observed directory, and the events it
// reported since the last sync, by path.
//
// Sync is what makes the events usable as a reading: the kernel queues an
// event before the call that caused it returns, but fsnotify hands events
// over from a goroutine of its own. So sync makes a mark of its own — a
// link created in a private directory outside the workspace, watched by
// the same instance — and waits for that event: the instance's events come
// in order, so every change made before the sync has been handed over by
// then.
type feed struct {
	watcher  *fsnotify.Watcher
	root     string // the workspace root, as the watches name it
	sentinel string // the private directory of the marks

	// hold, when not nil, is read-locked before each event or error is
	// taken: a test hook that lets the kernel's queue overflow.
	hold *sync.RWMutex

	// mu guards pending, broken and marked, which the event loop writes
	// and sync reads; next is sync's alone.
	mu      sync.Mutex
	pending map[string]change // path relative to root → what happened
	broken  error             // the feed lost events: an overflow, a read error
	marked  uint64            // the last mark seen
	notify  chan struct{}
	next    uint64 // the last mark made
	done    chan struct{}
}

// startFeed starts a feed that watches nothing yet; add watches
// directories. hold is the test hook of the same name, nil but in tests.
func startFeed(root string, hold *sync.RWMutex) (*feed, error) {
	sentinel, err := os.MkdirTemp("", "harness-feed-")
	if err != nil {
		return nil, fmt.Errorf("change feed: a private directory for its marks: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		os.Remove(sentinel)
		return nil, fmt.Errorf("change feed: %w", err)
	}
	if err := w.Add(sentinel); err != nil {
		w.Close()
		os.Remove(sentinel)
		return nil, fmt.Errorf("change feed: watch its marks: %w", err)
	}
	f := &feed{
		watcher: w, root: root, sentinel: sentinel, hold: hold,
		pending: map[string]change{},
		notify:  make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	go f.run()
	return f, nil
}

// run hands events over until the watcher is closed.
func (f *feed) run() {
	defer close(f.done)
	for {
		if f.hold != nil {
			f.hold.RLock()
			f.hold.RUnlock() // a gate: it waits while a test holds the lock
		}
		select {
		case ev, ok := <-f.watcher.Events:
			if !ok {
				return
			}
			f.event(ev)
		case err, ok := <-f.watcher.Errors:
			if !ok {
				return
			}
			f.mu.Lock()
			if f.broken == nil {
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					err = fmt.Errorf("the kernel's event queue overflowed (fs.inotify.max_queued_events): %w", err)
				}
				f.broken = err
			}
			f.mu.Unlock()
			f.wake()
		}
	}
}

func (f *feed) wake() {
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

func (f *feed) event(ev fsnotify.Event) {
	if dir, name := filepath.Split(ev.Name); filepath.Clean(dir) == f.sentinel {
		if ev.Has(fsnotify.Create) {
			if n, err := strconv.ParseUint(name, 10, 64); err == nil {
				f.mu.Lock()
				f.marked = max(f.marked, n)
				f.mu.Unlock()
				f.wake()
			}
		}
		return
	}
	var rel string
	switch {
	case ev.Name == f.root:
		rel = "."
	case strings.HasPrefix(ev.Name, f.root+"/"):
		rel = ev.Name[len(f.root)+1:]
	default:
		return // not a path of this workspace
	}
	var c change
	if ev.Has(fsnotify.Create) {
		c |= chCreate
	}
	if ev.Has(fsnotify.Remove) {
		c |= chRemove
	}
	if ev.Has(fsnotify.Rename) {
		c |= chRename
	}
	if ev.Has(fsnotify.Write) {
		c |= chWrite
	}
	if ev.Has(fsnotify.Chmod) {
		c |= chChmod
	}
	f.mu.Lock()
	f.pending[rel] |= c
	f.mu.Unlock()
}

// add watches the directory rel.
func (f *feed) add(rel string) error {
	p := f.root
	if rel != "." {
		p += "/" + rel
	}
	return f.watcher.Add(p)
}

// sync returns the events reported since the last sync, or the error that
// broke the feed.
func (f *feed) sync(ctx context.Context) (map[string]change, error) {
	f.next++
	mark := filepath.Join(f.sentinel, strconv.FormatUint(f.next, 10))
	if err := os.Symlink(".", mark); err != nil {
		return nil, fmt.Errorf("change feed: make a mark: %w", err)
	}
	defer os.Remove(mark)
	timer := time.NewTimer(feedSyncTimeout)
	defer timer.Stop()
	for {
		f.mu.Lock()
		broken, marked := f.broken, f.marked
		var events map[string]change
		if broken == nil && marked >= f.next {
			events, f.pending = f.pending, map[string]change{}
		}
		f.mu.Unlock()
		switch {
		case broken != nil:
			return nil, broken
		case marked >= f.next:
			return events, nil
		}
		select {
		case <-f.notify:
		case <-f.done:
			return nil, errors.New("change feed: closed")
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, fmt.Errorf("change feed: its mark did not come back within %v", feedSyncTimeout)
		}
	}
}

// close stops the feed and removes its private directory.
func (f *feed) close() error {
	err := f.watcher.Close()
	<-f.done
	return errors.Join(err, os.RemoveAll(f.sentinel))
}

// feedSupported says whether this platform has a change feed.
const feedSupported = true
